// Fee plans ("margin plans", the original service's word): what the operator charges a merchant
// for a payment, per wallet and method. A plan is versioned: a change is a new version from its
// effective date, and an order keeps the version it was created under. Amounts in the wallet's
// minor units; the percentage in basis points (2.5 % = 250).
import { proRata } from './money.js';

/** Whether a refund gives back the fee of what it refunds. */
export const REFUND_FEE_RULES = ['none', 'pro_rata'] as const;
export type RefundFeeRule = (typeof REFUND_FEE_RULES)[number];

export interface FeePlanTerms {
  /** Hundredths of a percent of the amount. */
  basis_points: number;
  /** Added to the percentage, in minor units. */
  fixed: number;
  /** The fee is at least this much (minor units), when set... */
  minimum: number | null;
  /** ...and at most this much, when set. Never more than the amount itself. */
  maximum: number | null;
  refund_fee: RefundFeeRule;
}

/** Why terms cannot make a plan, or undefined. */
export function feeTermsProblem(t: FeePlanTerms): string | undefined {
  if (!Number.isSafeInteger(t.basis_points) || t.basis_points < 0 || t.basis_points > 10_000)
    return 'the percentage must be between 0 and 100 with at most two decimals';
  if (!Number.isSafeInteger(t.fixed) || t.fixed < 0) return 'the fixed fee must not be negative';
  if (t.minimum !== null && (!Number.isSafeInteger(t.minimum) || t.minimum < 0))
    return 'the minimum must not be negative';
  if (t.maximum !== null && (!Number.isSafeInteger(t.maximum) || t.maximum < 0))
    return 'the maximum must not be negative';
  if (t.minimum !== null && t.maximum !== null && t.minimum > t.maximum) return 'the minimum is above the maximum';
  return undefined;
}

/** The share `basisPoints` / 10,000 of `amount`, rounded half up, without a float. */
export function percentOf(amount: number, basisPoints: number): number {
  return Number((BigInt(amount) * BigInt(basisPoints) * 2n + 10_000n) / 20_000n);
}

/** The fee of a payment of `amount` under `terms`: percentage plus fixed, within the minimum and maximum, never above the amount. */
export function feeOf(terms: FeePlanTerms, amount: number): number {
  let fee = percentOf(amount, terms.basis_points) + terms.fixed;
  if (terms.minimum !== null) fee = Math.max(fee, terms.minimum);
  if (terms.maximum !== null) fee = Math.min(fee, terms.maximum);
  return Math.min(Math.max(fee, 0), amount);
}

/**
 * The part of the order's fee a refund gives back: none, or the fee's share of all the order's
 * standing refunds (this one included: `refundedAfter`) less what those before it gave back
 * (`backBefore`). So refunds of the whole order, in any parts and with any of them failing on the
 * way, give back the whole fee exactly, never more.
 */
export function refundedFee(
  rule: RefundFeeRule,
  order: { amount: number; fee: number },
  refundedAfter: number,
  backBefore: number,
): number {
  if (rule === 'none' || order.fee === 0 || order.amount === 0) return 0;
  const share = proRata(Math.min(refundedAfter, order.amount), order.amount, order.fee) - backBefore;
  return Math.max(0, Math.min(share, order.fee - backBefore));
}

/** One version of a wallet's plan for one method. Versions are never changed: a change is the next version. */
export interface FeePlan extends FeePlanTerms {
  wallet_id: string;
  payment_method: string;
  /** 1, 2, ... per wallet and method. */
  version: number;
  /** From when it applies (epoch ms, UTC): to orders created from then on. */
  effective_from: number;
  /** When it was made: an order created before that was created under another version. */
  created_at: number;
  /** Who made it (`cli:<user>`, `console:<email>`). */
  created_by: string;
}

/**
 * The version an order created at `order_created_at` was created under: the latest that existed
 * then and was in effect by then. Versions are appended and never changed, so this is the same
 * answer at any later time: the order keeps its version without storing it.
 */
export function planAt(versions: readonly FeePlan[], order_created_at: number): FeePlan | undefined {
  let best: FeePlan | undefined;
  for (const v of versions) {
    if (v.created_at > order_created_at || v.effective_from > order_created_at) continue;
    if (
      !best ||
      v.effective_from > best.effective_from ||
      (v.effective_from === best.effective_from && v.version > best.version)
    )
      best = v;
  }
  return best;
}
