import type { ConsoleUser } from '../domain/console.js';
import { csvLine } from '../domain/csv.js';
import { exponentOf, formatAmount } from '../domain/money.js';
import type { SettlementLine } from '../domain/settlement.js';
import type { Refund } from '../domain/refund.js';
import type { Transaction } from '../domain/transaction.js';
import type { SettlementRow, TransactionSearch } from '../ports/transactions.js';
import type { GatewayContext } from './context.js';

export type { SettlementLine };

// The console's exports: the filtered transactions with their refunds as CSV, read a batch at a
// time (keyset) so that a million rows take as little memory as fifty; and the settlement report,
// by day (UTC), currency and method. Both held to what the user may see.

const BATCH = 1000;

function scope(user: ConsoleUser): { organisation_id?: number } {
  return user.kind === 'merchant' ? { organisation_id: user.organisation_id! } : {};
}

const iso = (ms: number | null) => (ms === null ? '' : new Date(ms).toISOString());
const decimal = (minor: number, currency: string) => formatAmount(minor, exponentOf(currency));

export const EXPORT_COLUMNS = [
  'record_type',
  'order_id',
  'merchant_reference',
  'user_id',
  'wallet_id',
  'payment_method',
  'status',
  'currency',
  'amount',
  'refunded_amount',
  'created_at',
  'pay_time',
  'product_name',
  'refund_id',
  'refund_amount',
  'refund_status',
  'refund_reference',
] as const;

function orderLine(o: Transaction): string {
  return csvLine([
    'transaction',
    o.order_id,
    o.merchant_reference,
    o.user_id,
    o.wallet_id,
    o.payment_method,
    o.status,
    o.currency,
    decimal(o.amount, o.currency),
    decimal(o.refunded_amount, o.currency),
    iso(o.created_at),
    iso(o.pay_time),
    o.product_name,
    '',
    '',
    '',
    '',
  ]);
}

function refundLine(o: Transaction, r: Refund): string {
  return csvLine([
    'refund',
    o.order_id,
    o.merchant_reference,
    o.user_id,
    o.wallet_id,
    o.payment_method,
    o.status,
    o.currency,
    decimal(o.amount, o.currency),
    decimal(o.refunded_amount, o.currency),
    iso(r.created_at),
    '',
    o.product_name,
    r.refund_id,
    decimal(r.refund_amount, o.currency),
    r.refund_status,
    r.reference,
  ]);
}

/**
 * The CSV of the orders the filter finds (newest first), each followed by its refunds. A generator:
 * the next batch is read only when the previous one has been taken (the HTTP stream's back-pressure).
 */
export async function* exportCsv(
  ctx: GatewayContext,
  user: ConsoleUser,
  filter: Omit<TransactionSearch, 'limit' | 'after'>,
  batch = BATCH,
): AsyncGenerator<string> {
  // A byte-order mark: spreadsheets then read the UTF-8 (Chinese product names) as UTF-8.
  yield `\ufeff${csvLine([...EXPORT_COLUMNS])}`;
  let after: TransactionSearch['after'];
  for (;;) {
    const { rows, next } = await ctx.store.transactions.search({
      ...filter,
      ...scope(user),
      limit: batch,
      ...(after && { after }),
    });
    const refunds = await ctx.store.refunds.listByOrders(
      rows.filter((o) => o.refunded_amount > 0 || o.status === 'paid').map((o) => o.order_id),
    );
    const byOrder = new Map<string, Refund[]>();
    for (const r of refunds) byOrder.set(r.order_id, [...(byOrder.get(r.order_id) ?? []), r]);
    let chunk = '';
    for (const o of rows) {
      chunk += orderLine(o);
      for (const r of byOrder.get(o.order_id) ?? []) chunk += refundLine(o, r);
    }
    if (chunk) yield chunk;
    if (!next) return;
    after = next;
  }
}

/** The longest an order lives unpaid, with a margin: orders paid in a range were created at most this long before it. */
const LONGEST_LIFE_MS = (ctx: GatewayContext) => ctx.config.orderExpiryMs + 86_400_000;

/** Per day (UTC), currency and method: orders paid (gross), refunds that succeeded, net, counts. */
export async function settlementReport(
  ctx: GatewayContext,
  user: ConsoleUser,
  range: { from: number; to: number; organisation_id?: number; wallet_id?: string },
): Promise<SettlementLine[]> {
  // A merchant's user is held to their organisation whatever the filter says.
  const f = { ...range, ...scope(user) };
  const [paid, refunded] = await Promise.all([
    ctx.store.transactions.paidByDay({ ...f, createdFrom: range.from - LONGEST_LIFE_MS(ctx) }),
    ctx.store.refunds.succeededByDay(f),
  ]);
  const lines = new Map<string, SettlementLine>();
  const line = (r: SettlementRow) => {
    const key = `${r.day} ${r.wallet_id} ${r.currency} ${r.payment_method}`;
    let l = lines.get(key);
    if (!l)
      lines.set(
        key,
        (l = {
          day: r.day,
          wallet_id: r.wallet_id,
          currency: r.currency,
          payment_method: r.payment_method,
          count: 0,
          gross: 0,
          refund_count: 0,
          refunds: 0,
          net: 0,
        }),
      );
    return l;
  };
  for (const r of paid) Object.assign(line(r), { count: r.count, gross: r.amount });
  for (const r of refunded) Object.assign(line(r), { refund_count: r.count, refunds: r.amount });
  for (const l of lines.values()) l.net = l.gross - l.refunds;
  return [...lines.values()].sort(
    (a, b) =>
      a.day - b.day ||
      a.wallet_id.localeCompare(b.wallet_id) ||
      a.currency.localeCompare(b.currency) ||
      a.payment_method.localeCompare(b.payment_method),
  );
}

export function settlementCsv(lines: readonly SettlementLine[]): string {
  let out = `\ufeff${csvLine(['day', 'wallet_id', 'currency', 'payment_method', 'count', 'gross', 'refund_count', 'refunds', 'net'])}`;
  for (const l of lines) {
    out += csvLine([
      new Date(l.day).toISOString().slice(0, 10),
      l.wallet_id,
      l.currency,
      l.payment_method,
      l.count,
      decimal(l.gross, l.currency),
      l.refund_count,
      decimal(l.refunds, l.currency),
      decimal(l.net, l.currency),
    ]);
  }
  return out;
}
