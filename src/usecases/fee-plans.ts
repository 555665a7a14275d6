import { fail } from '../domain/errors.js';
import {
  feeOf,
  feeTermsProblem,
  planAt,
  REFUND_FEE_RULES,
  type FeePlan,
  type FeePlanTerms,
  type RefundFeeRule,
} from '../domain/fees.js';
import { exponentOf, parseAmount } from '../domain/money.js';
import { PAYMENT_METHODS, type Transaction } from '../domain/transaction.js';
import type { Store } from '../ports/store.js';
import { AdminError } from './administration.js';

// Fee plans: an operator sets a wallet's plan for a method (a new version each time); an order's
// fee is its amount under the version it was created under (domain/fees.ts planAt), posted with
// its payment; with FEE_PLANS_REQUIRED a create for a wallet and method without one is refused (305).

export interface FeePlanInput {
  wallet_id: string;
  payment_method: string;
  /** A percentage as text: `2.5` (at most two decimals). */
  percent: string;
  /** Decimal amounts in the wallet's currency. */
  fixed?: string;
  min?: string;
  max?: string;
  /** `YYYY-MM-DD` (UTC): from that day's start; now when absent. */
  effective?: string;
  refund_fee?: string;
  by: string;
  now: number;
}

/** Reads an optional flag's decimal amount in `currency`: null when absent; AdminError naming the flag when not an amount. */
export function amountOfFlag(currency: string): (flag: string, text: string | undefined) => number | null {
  const exponent = exponentOf(currency);
  return (flag, text) => {
    if (text === undefined) return null;
    const parsed = parseAmount(text, exponent);
    if (!parsed.ok) throw new AdminError(`--${flag} ${parsed.reason} (in ${currency})`);
    return parsed.minor;
  };
}

/** `YYYY-MM-DD` (UTC) -> that day's start; AdminError naming the flag otherwise. */
export function dayOf(flag: string, text: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  const day = m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : NaN;
  if (!m || new Date(day).toISOString().slice(0, 10) !== text)
    throw new AdminError(`--${flag} must be a date, YYYY-MM-DD (UTC)`);
  return day;
}

/** `2.5` -> 250 basis points; undefined when it is not a plain percentage with at most two decimals. */
export function basisPointsOf(percent: string): number | undefined {
  const m = /^(\d{1,3})(?:\.(\d{1,2}))?$/.exec(percent.trim());
  if (!m) return undefined;
  return Number(m[1]) * 100 + Number((m[2] ?? '').padEnd(2, '0'));
}

/** Appends the next version of the wallet's plan for the method; AdminError says what is wrong with the input. */
export async function setFeePlan(store: Store, input: FeePlanInput): Promise<FeePlan> {
  const wallet = await store.accounts.findWallet(input.wallet_id);
  if (!wallet) throw new AdminError(`no wallet ${input.wallet_id}`);
  // `payout` prices a payout of the wallet (usecases/payouts.ts), as a method prices a payment.
  const methods: readonly string[] = [...PAYMENT_METHODS, 'payout'];
  if (!methods.includes(input.payment_method)) throw new AdminError(`--method must be one of ${methods.join(', ')}`);
  const amount = amountOfFlag(wallet.currency);
  const basis_points = basisPointsOf(input.percent);
  if (basis_points === undefined)
    throw new AdminError('--percent must be a percentage such as 2.5, with at most two decimals');
  const refund_fee = (input.refund_fee ?? 'none') as RefundFeeRule;
  if (!REFUND_FEE_RULES.includes(refund_fee))
    throw new AdminError(`--refund-fee must be one of ${REFUND_FEE_RULES.join(', ')}`);
  const terms: FeePlanTerms = {
    basis_points,
    fixed: amount('fixed', input.fixed) ?? 0,
    minimum: amount('min', input.min),
    maximum: amount('max', input.max),
    refund_fee,
  };
  const problem = feeTermsProblem(terms);
  if (problem) throw new AdminError(problem);
  const effective_from = input.effective === undefined ? input.now : dayOf('effective', input.effective);
  return store.ledger.addFeePlan({
    wallet_id: wallet.wallet_id,
    payment_method: input.payment_method,
    ...terms,
    effective_from,
    created_at: input.now,
    created_by: input.by,
  });
}

/**
 * The versions of each wallet's and method's plan, read once and kept: a version is never changed,
 * and one made after they were read applies to no order created before then, so they answer for
 * every order created before they were read, and are read again for a later one. The read is kept
 * from its start: a burst of settles of one wallet shares it (each read on SQLite may wait for a
 * flush of the WAL).
 */
interface Known {
  versions: Promise<FeePlan[]>;
  readAt: number;
}
const known = new WeakMap<Store, Map<string, Known>>();

async function versionsFor(store: Store, wallet_id: string, payment_method: string, at: number): Promise<FeePlan[]> {
  let byKey = known.get(store);
  if (!byKey) known.set(store, (byKey = new Map<string, Known>()));
  const key = `${wallet_id}\u0000${payment_method}`;
  const had = byKey.get(key);
  if (had && had.readAt > at) return had.versions;
  const versions = store.ledger.listFeePlans({ wallet_id, payment_method });
  if (byKey.size > 10_000) byKey.clear();
  const kept: Known = { versions, readAt: Date.now() };
  byKey.set(key, kept);
  try {
    return await versions;
  } catch (e) {
    if (byKey.get(key) === kept) byKey.delete(key);
    throw e;
  }
}

/** The order's fee (0 without a plan) and the version it comes from. */
export async function orderFee(
  store: Store,
  order: Pick<Transaction, 'wallet_id' | 'payment_method' | 'amount' | 'created_at'>,
): Promise<{ fee: number; plan?: FeePlan }> {
  const versions = await versionsFor(store, order.wallet_id, order.payment_method, order.created_at);
  const plan = planAt(versions, order.created_at);
  return plan ? { fee: feeOf(plan, order.amount), plan } : { fee: 0 };
}

/** FEE_PLANS_REQUIRED: refuses (305) a create for a wallet and method without a plan in effect now. */
export async function requireFeePlan(
  store: Store,
  wallet_id: string,
  payment_method: string,
  now: number,
): Promise<void> {
  const versions = await versionsFor(store, wallet_id, payment_method, now);
  if (!planAt(versions, now))
    fail(305, `wallet ${wallet_id} has no fee plan for ${payment_method} in effect (gateway fees set)`);
}
