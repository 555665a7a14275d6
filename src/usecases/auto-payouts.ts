import { autoPayoutAmount, autoPayoutDay, autoPayoutProblem, type AutoPayoutSetting } from '../domain/auto-payout.js';
import { PAYOUT_CURRENCIES, type BankAccount } from '../domain/bank-account.js';
import type { Payout } from '../domain/payout.js';
import type { Store } from '../ports/store.js';
import { AdminError } from './administration.js';
import { amountOfFlag } from './fee-plans.js';
import { newPayout, payoutAccount, payoutFeeOf } from './payouts.js';

// Automatic payouts (domain/auto-payout.ts): a wallet's setting, and the day's run the settlement
// job makes after each settlement, requesting payouts as a merchant would.

/** Who requests the automatic payouts (a payout's `requested_by`). */
export const AUTO_PAYOUT_BY = 'auto';

/**
 * Sets a wallet's automatic payout (`above` and `keep`: decimal amounts in its currency), or turns
 * it off (`above` of `off`).
 */
export async function setAutoPayout(
  store: Store,
  input: { wallet_id: string; above: string; keep?: string; by: string; now: number },
): Promise<AutoPayoutSetting | undefined> {
  const wallet = await store.accounts.findWallet(input.wallet_id);
  if (!wallet) throw new AdminError(`no wallet ${input.wallet_id}`);
  if (input.above === 'off') {
    await store.payouts.setAutoPayout({ wallet_id: wallet.wallet_id, off: true });
    return undefined;
  }
  if (!PAYOUT_CURRENCIES.includes(wallet.currency))
    throw new AdminError(
      `wallet ${wallet.wallet_id} is in ${wallet.currency}: payouts are paid in ${PAYOUT_CURRENCIES.join(' or ')}`,
    );
  const amount = amountOfFlag(wallet.currency);
  const setting: AutoPayoutSetting = {
    wallet_id: wallet.wallet_id,
    above: amount('above', input.above)!,
    keep: amount('keep', input.keep) ?? 0,
    updated_at: input.now,
    updated_by: input.by,
  };
  const problem = autoPayoutProblem(setting);
  if (problem) throw new AdminError(problem);
  await store.payouts.setAutoPayout(setting);
  return setting;
}

/** What the day's run did for a wallet: a payout requested, or why none could be. */
export type AutoPayoutOutcome = { wallet_id: string; payout: Payout } | { wallet_id: string; skipped: string };

/**
 * The day's automatic payouts (UTC days): every wallet whose available balance is above its
 * trigger and has no automatic payout today gets one, requested like a merchant's (an operator
 * approves it). A wallet below its trigger is looked at again on the next run; one without a
 * verified bank account is recorded as skipped for the day.
 */
export async function runAutoPayouts(store: Store, now: number): Promise<AutoPayoutOutcome[]> {
  const day = autoPayoutDay(now);
  const due = await store.payouts.dueAutoPayouts(day);
  if (due.length === 0) return [];
  const balances = await store.ledger.walletsBalances(due.map((s) => s.wallet_id));
  const outcomes: AutoPayoutOutcome[] = [];
  for (const setting of due) {
    const wallet = await store.accounts.findWallet(setting.wallet_id);
    if (!wallet) continue;
    const available = balances.find((b) => b.wallet_id === wallet.wallet_id && b.currency === wallet.currency);
    const amounts = autoPayoutAmount(
      available?.available ?? 0,
      setting,
      await payoutFeeOf(store, wallet.wallet_id, now),
    );
    if (!amounts) continue;
    let account: BankAccount;
    try {
      account = await payoutAccount(store, wallet.wallet_id);
    } catch (e) {
      if (!(e instanceof AdminError)) throw e;
      const skip = { wallet_id: wallet.wallet_id, day, payout_id: null, note: e.message, created_at: now };
      if (await store.payouts.skipAutoPayout(skip)) outcomes.push({ wallet_id: wallet.wallet_id, skipped: e.message });
      continue;
    }
    const payout = newPayout(wallet, account, amounts, AUTO_PAYOUT_BY, now);
    // Refused: another instance made the day's payout, or a refund took the money meanwhile (tried again next run).
    if ((await store.payouts.request(payout, day)).ok) outcomes.push({ wallet_id: wallet.wallet_id, payout });
  }
  return outcomes;
}
