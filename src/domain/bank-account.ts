// A merchant's bank account for payouts, in its wallet's currency: an Australian BSB and account
// number (AUD), or a New Zealand bank account number (NZD) checked by its format and its check
// digits (nz-bank-account.ts). Added by a merchant owner, verified by an operator before its
// first payout, and shown masked.
import { nzAccountProblem, parseNzAccount } from './nz-bank-account.js';

/** The currencies a payout is paid in: the bank files' (ABA for AUD, the IB4B CSV for NZD). */
export const PAYOUT_CURRENCIES: readonly string[] = ['AUD', 'NZD'];

export interface BankAccount {
  bank_account_id: string;
  wallet_id: string;
  currency: 'AUD' | 'NZD';
  /** The account's name, as the bank file carries it. */
  holder: string;
  /** AUD: `123-456`; NZD: null. */
  bsb: string | null;
  /** AUD: up to 9 digits; NZD: `BB-bbbb-AAAAAAA-SSS` (suffix as given, 2 or 3 digits). */
  account_number: string;
  verified_at: number | null;
  verified_by: string | null;
  created_at: number;
  created_by: string;
}

export type BankAccountDetails = Pick<BankAccount, 'currency' | 'holder' | 'bsb' | 'account_number'>;

/** The details of an account, checked, or why not. */
export function bankAccountDetails(input: {
  currency: string;
  holder: string;
  bsb?: string;
  account_number?: string;
  nz_account?: string;
}): { ok: true; details: BankAccountDetails } | { ok: false; reason: string } {
  const holder = input.holder.trim();
  // The ABA file's account title is 32 characters; a name the bank files cannot carry is refused.
  if (holder.length === 0 || holder.length > 32 || !/^[A-Za-z0-9 &'().,/\-+]+$/.test(holder))
    return { ok: false, reason: "the holder must be 1 to 32 letters, digits, spaces or & ' ( ) . , / - +" };
  if (input.currency === 'AUD') {
    if (input.nz_account !== undefined)
      return { ok: false, reason: 'an AUD wallet is paid to a BSB and account number' };
    const bsb = /^(\d{3})-?(\d{3})$/.exec(input.bsb?.trim() ?? '');
    if (!bsb) return { ok: false, reason: 'the BSB must be six digits, 123-456' };
    const account = (input.account_number ?? '').trim();
    if (!/^\d{4,9}$/.test(account)) return { ok: false, reason: 'the account number must be 4 to 9 digits' };
    return { ok: true, details: { currency: 'AUD', holder, bsb: `${bsb[1]}-${bsb[2]}`, account_number: account } };
  }
  if (input.currency === 'NZD') {
    if (input.bsb !== undefined || input.account_number !== undefined)
      return { ok: false, reason: 'an NZD wallet is paid to a New Zealand bank account number (--nz-account)' };
    const text = input.nz_account?.trim() ?? '';
    const problem = nzAccountProblem(text);
    if (problem) return { ok: false, reason: problem };
    const nz = parseNzAccount(text)!;
    // Bank files carry a 7-digit account: an 8-digit one is its 7 digits with a leading zero.
    if (nz.account.length === 8 && !nz.account.startsWith('0'))
      return { ok: false, reason: 'an 8-digit account number must start with 0 (bank files carry 7 digits)' };
    const account = nz.account.slice(-7);
    return {
      ok: true,
      details: {
        currency: 'NZD',
        holder,
        bsb: null,
        account_number: `${nz.bank}-${nz.branch}-${account}-${nz.suffix}`,
      },
    };
  }
  return {
    ok: false,
    reason: `a ${input.currency} wallet has no bank payouts: ${PAYOUT_CURRENCIES.join(' and ')} only`,
  };
}

/** The account as shown once verified: enough to recognise it, not to use it. */
export function maskedAccount(a: Pick<BankAccount, 'bsb' | 'account_number'>): string {
  if (a.bsb !== null)
    return `${a.bsb} ${'*'.repeat(Math.max(0, a.account_number.length - 3))}${a.account_number.slice(-3)}`;
  const [bank, branch, account, suffix] = a.account_number.split('-');
  return `${bank}-${branch}-${'*'.repeat(account.length - 3)}${account.slice(-3)}-${suffix}`;
}
