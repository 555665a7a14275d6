// Settlement: a paid order's net (its amount less its fee) is credited to its wallet's `pending`
// balance, and becomes `available` (what may be paid out) once the wallet's settlement delay has
// passed since it was paid. Refunds may take from `pending` before that (domain/ledger-refund.ts),
// so pending is spent oldest first: what may become available at a cutoff is everything pending
// except the payments made after the cutoff, and never less than nothing.
import { walletAccount, type JournalEntry } from './ledger.js';

export const DAY_MS = 86_400_000;
/** A wallet's delay when none was set: two days, as the original service's withdrawals took. */
export const DEFAULT_SETTLEMENT_DELAY_DAYS = 2;

/** The newest payment time whose money is due at `now` under a delay of `delayDays`. */
export function settlementCutoff(now: number, delayDays: number): number {
  return now - delayDays * DAY_MS;
}

/**
 * How much of `pending` is due: `pendingSum` is the signed sum of all its lines (credits negative,
 * as kept), `undueSum` that of the payments' lines after the cutoff.
 */
export function dueAmount(pendingSum: number, undueSum: number): number {
  return Math.max(0, -(pendingSum - undueSum));
}

/** Moves `amount` of the wallet's pending balance to available: one entry per wallet and run. */
export function availableEntry(p: {
  wallet_id: string;
  currency: string;
  amount: number;
  cutoff: number;
  created_at: number;
}): JournalEntry {
  return {
    entry_key: `available:${p.wallet_id}:${p.currency}:${p.created_at}`,
    kind: 'available',
    wallet_id: p.wallet_id,
    order_id: null,
    refund_id: null,
    payout_id: null,
    memo: `paid up to ${new Date(p.cutoff).toISOString()}`,
    created_at: p.created_at,
    lines: [
      { account: walletAccount(p.wallet_id, 'pending'), currency: p.currency, amount: p.amount },
      { account: walletAccount(p.wallet_id, 'available'), currency: p.currency, amount: -p.amount },
    ],
  };
}
