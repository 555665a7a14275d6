import { canSee, type ConsoleUser } from '../domain/console.js';
import type { Refund } from '../domain/refund.js';
import type { Transaction } from '../domain/transaction.js';
import type { NotificationAttempt, OutboxRow } from '../ports/outbox.js';
import type { RefundSearch } from '../ports/refunds.js';
import type {
  ChannelPayment,
  SearchPage,
  SettlementRow,
  SummaryRow,
  TransactionSearch,
} from '../ports/transactions.js';
import { ConsoleError } from './console-auth.js';
import { PENDING_REFUND_GRACE_MS } from './resume-refunds.js';
import type { GatewayContext } from './context.js';

// What the console shows, always within what the signed-in user may see: a merchant's user only
// their organisation's orders, whatever the URL or the filter asked for.

/** The organisation a user's lists are held to: their own for a merchant's user, none (all) for an operator. */
function scope(user: ConsoleUser): { organisation_id?: number } {
  return user.kind === 'merchant' ? { organisation_id: user.organisation_id! } : {};
}

export interface Dashboard {
  today: SummaryRow[];
  week: SummaryRow[];
  /** What was paid in the same windows (by pay_time, as the settlement report counts it) and refunded (refunds that succeeded in them): the money of the window, whenever its orders were created. */
  todayPaid: SettlementRow[];
  weekPaid: SettlementRow[];
  todayRefunds: SettlementRow[];
  weekRefunds: SettlementRow[];
  failing: number;
}

export async function dashboard(ctx: GatewayContext, user: ConsoleUser): Promise<Dashboard> {
  const now = ctx.now();
  const startOfDay = now - (now % 86_400_000);
  const weekAgo = now - 7 * 86_400_000;
  const window = { ...scope(user), from: weekAgo, to: now + 1 };
  const [today, week, weekPaid, weekRefunds, failing] = await Promise.all([
    ctx.store.transactions.summary({ ...scope(user), from: startOfDay }),
    ctx.store.transactions.summary({ ...scope(user), from: weekAgo }),
    // An order is paid within its life: one created a life before the window may be paid in it.
    ctx.store.transactions.paidByDay({ ...window, createdFrom: weekAgo - ctx.config.orderExpiryMs }),
    ctx.store.refunds.succeededByDay(window),
    ctx.store.outbox.countFailing(scope(user).organisation_id),
  ]);
  // Both come by day (UTC): today's are the week's rows of today.
  const ofToday = (rows: SettlementRow[]) => rows.filter((r) => r.day >= startOfDay);
  return {
    today,
    week,
    todayPaid: ofToday(weekPaid),
    weekPaid,
    todayRefunds: ofToday(weekRefunds),
    weekRefunds,
    failing,
  };
}

export const PAGE_SIZE = 50;

export function listTransactions(
  ctx: GatewayContext,
  user: ConsoleUser,
  /** organisation_id is an operator's choice; a merchant's user is held to their own whatever it says. */
  filter: Omit<TransactionSearch, 'limit'>,
): Promise<SearchPage> {
  return ctx.store.transactions.search({ ...filter, ...scope(user), limit: PAGE_SIZE });
}

/** The refunds list: a merchant's user sees their organisation's refunds only, whatever the filter says. */
export function listRefunds(
  ctx: GatewayContext,
  user: ConsoleUser,
  filter: Omit<RefundSearch, 'limit'>,
): ReturnType<GatewayContext['store']['refunds']['search']> {
  return ctx.store.refunds.search({ ...filter, ...scope(user), limit: PAGE_SIZE });
}

export interface TransactionDetail {
  order: Transaction;
  organisation_id: number;
  refunds: Refund[];
  notifications: Array<{ row: OutboxRow; attempts: NotificationAttempt[] }>;
  payments: ChannelPayment[];
  /** When its hosted page was opened (or, merchant-hosted, its gateway data fetched). */
  opened: number[];
}

/** An order the user may see, with its refunds, notifications and provider payments; not found otherwise (the same answer either way). */
export async function transactionDetail(
  ctx: GatewayContext,
  user: ConsoleUser,
  order_id: string,
): Promise<TransactionDetail> {
  const organisation_id = await ctx.store.transactions.organisationOf(order_id);
  if (organisation_id === undefined || !canSee(user, organisation_id)) throw new ConsoleError('error.not_found');
  const order = await ctx.store.transactions.find(order_id);
  if (!order) throw new ConsoleError('error.not_found');
  const [refunds, rows, payments, opened] = await Promise.all([
    ctx.store.refunds.listByOrder(order_id),
    ctx.store.outbox.listByOrder(order_id),
    ctx.store.transactions.listPayments(order_id),
    ctx.store.transactions.listNonceUses(order_id),
  ]);
  const notifications = await Promise.all(
    rows.map(async (row) => ({ row, attempts: await ctx.store.outbox.listAttempts(row.event_id) })),
  );
  return { order, organisation_id, refunds, notifications, payments, opened };
}

export interface RefundsWaiting {
  /** Every refund pending with its provider, the ones still in their first minute too. */
  pending: number;
  /** Those made over the recovery's grace ago (asked again every round), the longest waiting first, with their order's currency. */
  rows: Array<Refund & { currency: string }>;
}

/** Refunds whose provider has not given a definite answer yet (operators): their amount stays reserved until it does. */
export async function refundsWaiting(ctx: GatewayContext, limit: number): Promise<RefundsWaiting> {
  const [pending, rows] = await Promise.all([
    ctx.store.refunds.countPending(),
    ctx.store.refunds.listPendingSince(ctx.now() - PENDING_REFUND_GRACE_MS, limit),
  ]);
  const orders = await Promise.all(rows.map((r) => ctx.store.transactions.find(r.order_id)));
  return { pending, rows: rows.map((r, i) => ({ ...r, currency: orders[i]?.currency ?? '' })) };
}
