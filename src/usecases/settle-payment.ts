import { randomUUID } from 'node:crypto';
import { callbackHostOf } from '../domain/callback-url.js';
import { fail } from '../domain/errors.js';
import type { FeePlan } from '../domain/fees.js';
import { paymentEntry, type JournalEntry } from '../domain/ledger.js';
import { notificationFields } from '../domain/result-fields.js';
import {
  endedCode,
  isFinal,
  outcomeAllowed,
  outcomeVerdict,
  type FinalStatus,
  type Transaction,
} from '../domain/transaction.js';
import type { GatewayContext } from './context.js';
import { orderFee } from './fee-plans.js';

export interface SettleExtras {
  /** PayID: the reason a transfer was rejected. */
  status_message?: string | null;
  /** PayID: the related Pay ID. */
  msgId?: string | null;
  /** A provider's payment that paid the order: marked paid with the settle (SettleInput.payment). */
  payment?: { out_trade_no: string; provider_ref: string };
  /** What that payment charged, when not the order's amount in its currency (a domestic account: CNY). */
  charged?: { amount: number; currency: string };
}

/**
 * Moves a pending order (`read`: as the caller read it) to a final status and queues its
 * notification in the same database transaction; then wakes anyone long-polling the order. Returns
 * undefined when the order was no longer pending (another outcome won), so callers can report the
 * state that did.
 */
export function settle(
  ctx: GatewayContext,
  read: Transaction,
  to: FinalStatus,
  extras: SettleExtras = {},
): Promise<Transaction | undefined> {
  return ctx.tracing
    ? ctx.tracing.span('settle', { order_id: read.order_id, to }, () => settleNow(ctx, read, to, extras))
    : settleNow(ctx, read, to, extras);
}

async function settleNow(
  ctx: GatewayContext,
  read: Transaction,
  to: FinalStatus,
  extras: SettleExtras,
): Promise<Transaction | undefined> {
  const { order_id } = read;
  const event_id = `evt_${randomUUID().replaceAll('-', '')}`;
  const fee = to === 'paid' ? await orderFee(ctx.store, read) : undefined;
  const now = ctx.now();
  const settled = await ctx.store.transactions.settle({
    read,
    to,
    now,
    status_message: extras.status_message ?? null,
    msgId: extras.msgId ?? null,
    ...(extras.payment && { payment: extras.payment }),
    ...(fee && { entry: paidEntry(read, extras, fee, now) }),
    outbox: (t) => ({
      event_id,
      order_id: t.order_id,
      seq: t.status_seq,
      callback_url: t.callback_url,
      callback_host: callbackHostOf(t.callback_url),
      // Unsigned: the worker signs each attempt with the wallet's current key.
      payload: JSON.stringify(notificationFields(t)),
      delivery_status: 'pending',
      attempts: 0,
      next_attempt_at: now,
      claimed_by: null,
      claimed_until: null,
      created_at: now,
      delivered_at: null,
      attempts_pruned: 0,
      attempts_pruned_until: null,
    }),
  });
  if (settled) {
    ctx.tracing?.queued(event_id);
    ctx.signals.publish(order_id, settled);
    ctx.notifier?.poke({ event_id, callback_host: callbackHostOf(settled.callback_url) });
  }
  return settled;
}

/** The ledger's entry of the order's payment (domain/ledger.ts), with the fee of its plan version. */
function paidEntry(
  read: Transaction,
  extras: SettleExtras,
  { fee, plan }: { fee: number; plan?: FeePlan },
  now: number,
): JournalEntry {
  const entry = paymentEntry({
    order_id: read.order_id,
    wallet_id: read.wallet_id,
    amount: read.amount,
    currency: read.currency,
    charged: extras.charged ?? { amount: read.amount, currency: read.currency },
    provider: read.channel,
    fee,
    created_at: now,
  });
  return plan ? { ...entry, memo: `fee plan ${plan.payment_method} version ${plan.version}` } : entry;
}

/** A channel's report of a payment outcome (the sandbox page, or a real channel's callback). */
export async function settlePayment(
  ctx: GatewayContext,
  order_id: string,
  to: FinalStatus,
  extras: SettleExtras = {},
): Promise<Transaction> {
  const order = await ctx.store.transactions.find(order_id);
  if (!order) fail(201, `no order ${order_id}`);
  if (!outcomeAllowed(order.payment_method, to))
    fail(207, `${to} is not a possible outcome for a ${order.payment_method} payment`);
  if (outcomeVerdict(order.status, to) === 'ended') alreadyEnded(order);
  const settled = await settle(ctx, order, to, extras);
  if (settled) return settled;
  // Another outcome (or a cancel) settled it between the read above and the update, or it had
  // settled with this very outcome before: the same answer as for a report that came after it.
  const now = (await ctx.store.transactions.find(order_id))!;
  if (outcomeVerdict(now.status, to) !== 'already') alreadyEnded(now);
  return now;
}

function alreadyEnded(order: Transaction): never {
  const status = order.status;
  fail(isFinal(status) ? endedCode(status) : 901, `order ${order.order_id} has already ended as ${status}`);
}
