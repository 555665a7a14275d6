// The New Zealand bulk direct credit file: Kiwibank's "IB4B" comma-separated import (the layout
// BNZ's Internet Banking for Business takes too), as Kiwibank's published guide describes it. One
// header record (1), one transaction record (2) per credit (transaction code 50, direct credit), one
// trailer (3) with the total in cents, the count and the hash total; every record ends with CR LF.
// Account numbers are 16 digits without dashes (bank 2, branch 4, account 7, suffix 3).
import { parseNzAccount } from './nz-bank-account.js';

/** The operator's details (settings PAYOUT_NZ_*). */
export interface NzFileSettings {
  /** The operator's account the credits are paid from: an NZ bank account number. */
  account: string;
  /** The operator's name on the merchants' statements: up to 20 characters. */
  name: string;
}

export interface NzCredit {
  /** `BB-bbbb-AAAAAAA-SS(S)`. */
  account_number: string;
  /** The account's name: up to 20 characters on the file. */
  name: string;
  /** Cents, more than zero. */
  amount: number;
  /** On both parties' statements: up to 12 characters (the payout id). */
  reference: string;
}

/** 16 digits: bank, branch, 7-digit account, 3-digit suffix. */
export function nzFileAccount(text: string): string {
  const a = parseNzAccount(text);
  if (!a) throw new Error(`${text} is not a New Zealand bank account number`);
  const account = a.account.length === 8 && a.account.startsWith('0') ? a.account.slice(1) : a.account;
  if (account.length !== 7) throw new Error(`${text}: an 8-digit account number cannot be in a bulk payment file`);
  return `${a.bank}${a.branch}${account}${a.suffix.padStart(3, '0')}`;
}

/** What is wrong with the settings, naming the setting, or undefined. */
export function nzSettingsProblem(s: Partial<NzFileSettings>): string | undefined {
  if (!s.account || !parseNzAccount(s.account))
    return "PAYOUT_NZ_ACCOUNT must be the operator's NZ bank account, 12-3456-1234567-000";
  if (!s.name || s.name.length > 20) return 'PAYOUT_NZ_NAME must be 1 to 20 characters';
  return undefined;
}

/** A field: no commas, no trailing spaces, at most `n` characters. */
const field = (s: string, n: number) =>
  s
    .replace(/[,\r\n]/g, ' ')
    .slice(0, n)
    .trimEnd();

/** `YYMMDD` of the day in New Zealand. */
export function nzDate(at: number): string {
  const parts = new Intl.DateTimeFormat('en-NZ', {
    timeZone: 'Pacific/Auckland',
    day: '2-digit',
    month: '2-digit',
    year: '2-digit',
  }).formatToParts(new Date(at));
  const get = (t: string) => parts.find((p) => p.type === t)!.value;
  return `${get('year')}${get('month')}${get('day')}`;
}

/** The hash total: the sum of each payee account's branch and account digits, its rightmost 11 digits. */
export function nzHashTotal(accounts: readonly string[]): string {
  const sum = accounts.reduce((s, a) => s + BigInt(a.slice(2, 13)), 0n);
  return String(sum).slice(-11).padStart(11, '0');
}

export function nzCsvFile(s: NzFileSettings, credits: readonly NzCredit[], at: number): string {
  const problem = nzSettingsProblem(s);
  if (problem) throw new Error(problem);
  const date = nzDate(at);
  const records = [['1', '', '', '', nzFileAccount(s.account), '7', date, date, '']];
  const payees: string[] = [];
  let total = 0;
  for (const c of credits) {
    if (!(Number.isSafeInteger(c.amount) && c.amount > 0))
      throw new Error(`a credit of ${c.amount} cannot be in the file`);
    const account = nzFileAccount(c.account_number);
    payees.push(account);
    total += c.amount;
    const ref = field(c.reference, 12);
    records.push([
      '2',
      account,
      '50',
      String(c.amount),
      field(c.name, 20),
      ref,
      '',
      '',
      '',
      field(s.name, 20),
      '',
      ref,
      '',
    ]);
  }
  records.push(['3', String(total), String(credits.length), nzHashTotal(payees)]);
  return records.map((r) => `${r.join(',')}\r\n`).join('');
}
