// What a refused refund reservation means. A reservation counts every refund of the order that
// stands: succeeded ones and pending ones, whose channel outcome is not known yet. A pending refund
// may still fail and give its amount back, so a refusal that rests on one is no verdict: the
// request waits for it (refunds of one order are rare, and the wait is short) and tries again.

/** 'pending' while the channel is asked (or its answer is not known), then 'succeeded' or 'failed'. */
export type RefundStatus = 'pending' | 'succeeded' | 'failed';

export interface Refund {
  /** The gateway's id, sent to the channel as the refund's idempotency key. */
  refund_id: string;
  order_id: string;
  refund_amount: number;
  /** What it gives back in the currency its provider payment charged (CNY for a domestic account); set before the provider is asked. */
  channel_amount: number | null;
  reference: string;
  refund_status: RefundStatus;
  /** dedupeKey() while the refund stands (pending or succeeded); null once failed, so the same request may be made again. */
  dedupe_key: string | null;
  created_at: number;
  updated_at: number;
}

/** Two refunds with the same key are the same request: the same order, amount and reference. */
export function dedupeKey(r: Pick<Refund, 'order_id' | 'refund_amount' | 'reference'>): string {
  return `${r.order_id}|${r.refund_amount}|${r.reference}`;
}

export type StandingRefund = Pick<Refund, 'refund_amount' | 'refund_status' | 'dedupe_key'>;

export type RefusalVerdict =
  /** An identical refund succeeded: 562. */
  | { kind: 'done' }
  /** Even if every pending refund failed, this one would not fit: 559. `left` is what is left now. */
  | { kind: 'insufficient'; left: number }
  /** Pending refunds decide: wait until one of them has its outcome, then reserve again. */
  | { kind: 'wait'; duplicate: boolean }
  /** What refused the reservation has changed since: reserve again at once. */
  | { kind: 'retry' };

/**
 * Judges a reservation refused as `duplicate` (a standing refund has the same order, amount and
 * reference) or `insufficient` (the order's refunded total would pass its amount), from the order's
 * refunds as read after the refusal.
 */
export function judgeRefusal(
  reason: 'duplicate' | 'insufficient',
  wanted: { refund_amount: number; dedupe_key: string },
  order_amount: number,
  refunds: readonly StandingRefund[],
): RefusalVerdict {
  if (reason === 'duplicate') {
    const twins = refunds.filter((r) => r.dedupe_key === wanted.dedupe_key);
    if (twins.some((r) => r.refund_status === 'succeeded')) return { kind: 'done' };
    if (twins.some((r) => r.refund_status === 'pending')) return { kind: 'wait', duplicate: true };
    return { kind: 'retry' };
  }
  let succeeded = 0;
  let pending = 0;
  for (const r of refunds) {
    if (r.refund_status === 'succeeded') succeeded += r.refund_amount;
    else if (r.refund_status === 'pending') pending += r.refund_amount;
  }
  if (succeeded + wanted.refund_amount > order_amount)
    return { kind: 'insufficient', left: Math.max(0, order_amount - succeeded - pending) };
  if (pending > 0) return { kind: 'wait', duplicate: false };
  return { kind: 'retry' };
}
