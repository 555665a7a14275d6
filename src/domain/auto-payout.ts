// A wallet's automatic payout, as a sweep: once a day, when its available balance is above the
// trigger (`above`), everything above the float it keeps (`keep`, at most the trigger) is paid out,
// the payout's fee included in what leaves. Off unless set.

export interface AutoPayoutSetting {
  wallet_id: string;
  /** The trigger, minor units: a payout is made only when available is more than this. */
  above: number;
  /** What stays available after the payout (and its fee), minor units; 0: everything goes. */
  keep: number;
  updated_at: number;
  updated_by: string;
}

/** A day's automatic payout of a wallet: the payout made, or why none was. */
export interface AutoPayoutDay {
  wallet_id: string;
  /** The UTC day's start. */
  day: number;
  payout_id: string | null;
  /** Why no payout was made (e.g. no verified bank account). */
  note: string | null;
  created_at: number;
}

/** What is wrong with the setting's amounts, if anything. */
export function autoPayoutProblem(s: Pick<AutoPayoutSetting, 'above' | 'keep'>): string | undefined {
  if (s.above < 0 || s.keep < 0) return 'amounts must not be negative';
  if (s.keep > s.above) return '--keep must not be more than --above';
  return undefined;
}

/**
 * The payout's amount (its fee beside it), the most whose amount and fee together leave `keep`
 * available; undefined when available is not above the trigger or nothing would be left to pay.
 * `feeOf` is the wallet's payout fee for an amount (never less for a larger amount).
 */
export function autoPayoutAmount(
  available: number,
  s: Pick<AutoPayoutSetting, 'above' | 'keep'>,
  feeOf: (amount: number) => number,
): { amount: number; fee: number } | undefined {
  if (available <= s.above) return undefined;
  const budget = available - s.keep;
  // The largest amount with amount + fee <= budget: the fee grows with the amount, so search.
  let low = 0;
  let high = budget;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (mid + feeOf(mid) <= budget) low = mid;
    else high = mid - 1;
  }
  return low > 0 ? { amount: low, fee: feeOf(low) } : undefined;
}

/** The UTC day an automatic payout belongs to: at most one a day per wallet. */
export function autoPayoutDay(now: number): number {
  return now - (now % 86_400_000);
}
