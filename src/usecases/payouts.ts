import { randomBytes } from 'node:crypto';
import { abaFile, abaSettingsProblem, type AbaSettings } from '../domain/aba-file.js';
import type { Wallet } from '../domain/account.js';
import { bankAccountDetails, PAYOUT_CURRENCIES, type BankAccount } from '../domain/bank-account.js';
import { feeOf } from '../domain/fees.js';
import { exponentOf, formatAmount, parseAmount } from '../domain/money.js';
import { nzCsvFile, nzSettingsProblem, type NzFileSettings } from '../domain/nz-payment-file.js';
import type { Payout } from '../domain/payout.js';
import type { PayoutBatch } from '../ports/payouts.js';
import type { Store } from '../ports/store.js';
import { AdminError } from './administration.js';
import { orderFee } from './fee-plans.js';

// Payouts as merchants and operators make them: a bank account added and verified, a payout
// requested from available funds (its fee from the wallet's `payout` fee plan), approved, batched
// into the currency's bank file, then marked paid or returned. Every refusal says why.

/** The fee plan "method" whose plan prices a payout (`gateway fees set --method payout`). */
export const PAYOUT_FEE_METHOD = 'payout';

/** Short enough for a bank file's reference field (12 characters in the NZ file). */
const newId = (prefix: string) => `${prefix}${randomBytes(5).toString('hex')}`;

export async function addBankAccount(
  store: Store,
  input: {
    wallet_id: string;
    holder: string;
    bsb?: string;
    account_number?: string;
    nz_account?: string;
    by: string;
    now: number;
  },
): Promise<BankAccount> {
  const wallet = await store.accounts.findWallet(input.wallet_id);
  if (!wallet) throw new AdminError(`no wallet ${input.wallet_id}`);
  const checked = bankAccountDetails({ ...input, currency: wallet.currency });
  if (!checked.ok) throw new AdminError(checked.reason);
  const account: BankAccount = {
    bank_account_id: newId('B'),
    wallet_id: wallet.wallet_id,
    ...checked.details,
    verified_at: null,
    verified_by: null,
    created_at: input.now,
    created_by: input.by,
  };
  await store.payouts.addBankAccount(account);
  return account;
}

export async function verifyBankAccount(store: Store, bank_account_id: string, by: string, now: number) {
  const verified = await store.payouts.verifyBankAccount(bank_account_id, by, now);
  if (!verified) throw new AdminError(`no bank account ${bank_account_id}`);
  return verified;
}

/** The wallet's verified account to pay: the one named, or the latest verified. */
export async function payoutAccount(store: Store, wallet_id: string, bank_account_id?: string): Promise<BankAccount> {
  const accounts = (await store.payouts.listBankAccounts(wallet_id)).filter((a) => a.verified_at !== null);
  const account = bank_account_id
    ? accounts.find((a) => a.bank_account_id === bank_account_id)
    : accounts[accounts.length - 1];
  if (!account)
    throw new AdminError(
      bank_account_id
        ? `bank account ${bank_account_id} is not a verified account of wallet ${wallet_id}`
        : `wallet ${wallet_id} has no verified bank account: add one, and an operator verifies it`,
    );
  return account;
}

/** The wallet's payout fee for an amount, as its `payout` fee plan prices it now (0 without one). */
export async function payoutFeeOf(store: Store, wallet_id: string, now: number): Promise<(amount: number) => number> {
  const { plan } = await orderFee(store, {
    wallet_id,
    payment_method: PAYOUT_FEE_METHOD as never,
    amount: 0,
    created_at: now,
  });
  return plan ? (amount) => feeOf(plan, amount) : () => 0;
}

export function newPayout(
  wallet: Wallet,
  account: BankAccount,
  amounts: { amount: number; fee: number },
  by: string,
  now: number,
): Payout {
  return {
    payout_id: newId('P'),
    wallet_id: wallet.wallet_id,
    bank_account_id: account.bank_account_id,
    currency: wallet.currency,
    ...amounts,
    payout_status: 'requested',
    batch_id: null,
    return_reason: null,
    requested_at: now,
    requested_by: by,
    updated_at: now,
    updated_by: by,
  };
}

/** A payout of `amount` (decimal, the wallet's currency) to the wallet's verified bank account. */
export async function requestPayout(
  store: Store,
  input: { wallet_id: string; amount: string; bank_account_id?: string; by: string; now: number },
): Promise<Payout> {
  const wallet = await store.accounts.findWallet(input.wallet_id);
  if (!wallet) throw new AdminError(`no wallet ${input.wallet_id}`);
  const exponent = exponentOf(wallet.currency);
  const parsed = parseAmount(input.amount, exponent);
  if (!parsed.ok) throw new AdminError(`--amount ${parsed.reason} (in ${wallet.currency})`);
  if (parsed.minor === 0) throw new AdminError('--amount must be more than zero');
  const account = await payoutAccount(store, wallet.wallet_id, input.bank_account_id);
  const fee = (await payoutFeeOf(store, wallet.wallet_id, input.now))(parsed.minor);
  const payout = newPayout(wallet, account, { amount: parsed.minor, fee }, input.by, input.now);
  const done = await store.payouts.request(payout);
  if (!done.ok) {
    const money = (m: number) => `${formatAmount(Math.max(0, m), exponent)} ${wallet.currency}`;
    const available = 'available' in done ? done.available : 0;
    throw new AdminError(
      `wallet ${wallet.wallet_id} has ${money(available)} available: a payout of ${money(parsed.minor)}` +
        (fee > 0 ? ` and its fee of ${money(fee)}` : '') +
        ' needs more (559 Insufficient amount in your wallet)',
    );
  }
  return payout;
}

/** approved, canceled, paid or returned, from the states that may move there. */
export async function movePayout(
  store: Store,
  payout_id: string,
  to: 'approved' | 'canceled' | 'paid' | 'returned',
  by: string,
  now: number,
  reason?: string,
): Promise<Payout> {
  if (to === 'returned' && !reason?.trim())
    throw new AdminError('a returned payout needs --reason, as the bank gave it');
  const moved = await store.payouts.move(payout_id, to, by, now, reason?.trim());
  if (moved.ok) return moved.payout;
  if (moved.status === undefined) throw new AdminError(`no payout ${payout_id}`);
  throw new AdminError(`payout ${payout_id} is ${moved.status}: it cannot be ${to}`);
}

export interface BankFile {
  batch: PayoutBatch;
  payouts: Payout[];
  /** The file's text, and the format it follows. */
  content: string;
  format: 'aba' | 'nz-csv';
}

/** The operator's details the bank files need (settings PAYOUT_ABA_*, PAYOUT_NZ_*). */
export interface BankFileSettings {
  aba?: Partial<AbaSettings>;
  nz?: Partial<NzFileSettings>;
}

function settingsProblem(currency: string, s: BankFileSettings): string | undefined {
  if (currency === 'AUD') return abaSettingsProblem(s.aba ?? {});
  if (currency === 'NZD') return nzSettingsProblem(s.nz ?? {});
  return `--currency must be ${PAYOUT_CURRENCIES.join(' or ')}`;
}

/**
 * Every approved payout of the currency into a batch, and its bank file: ABA for AUD, the IB4B CSV
 * for NZD. The settings are checked before any payout moves.
 */
export async function batchPayouts(
  store: Store,
  input: { currency: string; settings: BankFileSettings; by: string; now: number },
): Promise<BankFile | undefined> {
  const problem = settingsProblem(input.currency, input.settings);
  if (problem) throw new AdminError(problem);
  const batched = await store.payouts.batch(input.currency, newId('PB'), input.by, input.now);
  if (!batched) return undefined;
  return bankFileOf(store, batched.batch, batched.payouts, input.settings);
}

/** A batch's file again (to download it once more): the same content as when it was made. */
export async function batchFile(store: Store, batch_id: string, settings: BankFileSettings): Promise<BankFile> {
  const batch = await store.payouts.findBatch(batch_id);
  if (!batch) throw new AdminError(`no payout batch ${batch_id}`);
  const problem = settingsProblem(batch.currency, settings);
  if (problem) throw new AdminError(problem);
  const payouts = (await store.payouts.list({ batch_id, limit: 100_000 })).sort(
    (a, b) => a.requested_at - b.requested_at || (a.payout_id < b.payout_id ? -1 : 1),
  );
  return bankFileOf(store, batch, payouts, settings);
}

async function bankFileOf(
  store: Store,
  batch: PayoutBatch,
  payouts: Payout[],
  settings: BankFileSettings,
): Promise<BankFile> {
  const accounts = new Map<string, BankAccount>();
  for (const p of payouts)
    if (!accounts.has(p.bank_account_id))
      accounts.set(p.bank_account_id, (await store.payouts.findBankAccount(p.bank_account_id))!);
  const credits = payouts.map((p) => ({ payout: p, account: accounts.get(p.bank_account_id)! }));
  if (batch.currency === 'AUD')
    return {
      batch,
      payouts,
      format: 'aba',
      content: abaFile(
        settings.aba as AbaSettings,
        credits.map(({ payout, account }) => ({
          bsb: account.bsb!,
          account_number: account.account_number,
          title: account.holder,
          amount: payout.amount,
          reference: payout.payout_id,
        })),
        batch.created_at,
      ),
    };
  return {
    batch,
    payouts,
    format: 'nz-csv',
    content: nzCsvFile(
      settings.nz as NzFileSettings,
      credits.map(({ payout, account }) => ({
        account_number: account.account_number,
        name: account.holder,
        amount: payout.amount,
        reference: payout.payout_id,
      })),
      batch.created_at,
    ),
  };
}
