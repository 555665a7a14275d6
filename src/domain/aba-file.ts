// The Australian Direct Entry file ("ABA", "Cemtex", the BECS format) a bank takes for a batch of
// credits: fixed records of 120 characters, each ended with CR LF: one descriptive record (type 0),
// one detail record (type 1) per credit (transaction code 50, a general credit), optionally a
// balancing debit of the operator's own account (code 13: some banks, CBA's and NAB's, take only
// self-balanced files), and one file total record (type 7). Amounts in cents.

/** The operator's details, as its bank gave them (settings PAYOUT_ABA_*). */
export interface AbaSettings {
  /** The APCA user identification number: 6 digits. */
  user_id: string;
  /** The bank's 3-letter abbreviation: WBC, CBA, NAB, ANZ... */
  bank: string;
  /** The user's name as the bank knows it: up to 26 characters. */
  user_name: string;
  /** The remitter's name shown on the merchant's statement: up to 16 characters. */
  remitter: string;
  /** The operator's own account, where a credit that cannot be made is returned (the trace account). */
  trace_bsb: string;
  trace_account: string;
  /** Add the balancing debit of the trace account (PAYOUT_ABA_SELF_BALANCE). */
  self_balance?: boolean;
}

export interface AbaCredit {
  bsb: string;
  account_number: string;
  title: string;
  /** Cents, more than zero. */
  amount: number;
  /** On the merchant's statement: up to 18 characters (the payout id). */
  reference: string;
}

/** What is wrong with the settings, naming the setting, or undefined. */
export function abaSettingsProblem(s: Partial<AbaSettings>): string | undefined {
  if (!s.user_id || !/^\d{6}$/.test(s.user_id)) return 'PAYOUT_ABA_USER_ID must be the 6-digit APCA user id';
  if (!s.bank || !/^[A-Z]{3}$/.test(s.bank))
    return "PAYOUT_ABA_BANK must be the bank's 3-letter abbreviation (WBC, CBA, NAB, ANZ...)";
  if (!s.user_name || s.user_name.length > 26 || !isBecs(s.user_name))
    return 'PAYOUT_ABA_USER_NAME must be 1 to 26 characters';
  if (!s.remitter || s.remitter.length > 16 || !isBecs(s.remitter))
    return 'PAYOUT_ABA_REMITTER must be 1 to 16 characters';
  if (!s.trace_bsb || !/^\d{3}-\d{3}$/.test(s.trace_bsb)) return 'PAYOUT_ABA_TRACE_BSB must be a BSB, 123-456';
  if (!s.trace_account || !/^\d{1,9}$/.test(s.trace_account)) return 'PAYOUT_ABA_TRACE_ACCOUNT must be 1 to 9 digits';
  return undefined;
}

/** The characters a Direct Entry file may carry in its text fields (the BECS character set). */
const isBecs = (s: string) => /^[A-Za-z0-9 &',\-./+$!%()*#=:?[\]_^@]*$/.test(s);
/** Text fields: anything outside the set becomes a space. */
const becs = (s: string) => s.replace(/[^A-Za-z0-9 &',\-./+$!%()*#=:?[\]_^@]/g, ' ');

const left = (s: string, n: number) => becs(s).slice(0, n).padEnd(n, ' ');
const rightSpace = (s: string, n: number) => s.slice(-n).padStart(n, ' ');
const zeros = (v: number, n: number) => {
  const s = String(v);
  if (s.length > n) throw new Error(`${v} does not fit ${n} digits of a Direct Entry file`);
  return s.padStart(n, '0');
};
const blank = (n: number) => ' '.repeat(n);

/** `DDMMYY` of the day the file is to be processed, in the bank's time (Australia/Sydney). */
export function abaDate(at: number): string {
  const parts = new Intl.DateTimeFormat('en-AU', {
    timeZone: 'Australia/Sydney',
    day: '2-digit',
    month: '2-digit',
    year: '2-digit',
  }).formatToParts(new Date(at));
  const get = (t: string) => parts.find((p) => p.type === t)!.value;
  return `${get('day')}${get('month')}${get('year')}`;
}

/** The file: descriptive record, a detail record per credit, the balancing debit if asked for, file total. */
export function abaFile(s: AbaSettings, credits: readonly AbaCredit[], at: number, description = 'PAYOUTS'): string {
  const problem = abaSettingsProblem(s);
  if (problem) throw new Error(problem);
  const records: string[] = [];
  records.push(
    '0' +
      blank(17) +
      '01' +
      s.bank +
      blank(7) +
      left(s.user_name, 26) +
      zeros(Number(s.user_id), 6) +
      left(description, 12) +
      abaDate(at) +
      blank(40),
  );
  const detail = (bsb: string, account: string, code: '50' | '13', amount: number, title: string, reference: string) =>
    '1' +
    bsb +
    rightSpace(account, 9) +
    ' ' +
    code +
    zeros(amount, 10) +
    left(title, 32) +
    left(reference, 18) +
    s.trace_bsb +
    rightSpace(s.trace_account, 9) +
    left(s.remitter, 16) +
    zeros(0, 8);
  let credit = 0;
  for (const c of credits) {
    if (!/^\d{3}-\d{3}$/.test(c.bsb) || !/^\d{1,9}$/.test(c.account_number) || !(c.amount > 0))
      throw new Error(`a credit to ${c.bsb} ${c.account_number} of ${c.amount} cannot be in a Direct Entry file`);
    credit += c.amount;
    records.push(detail(c.bsb, c.account_number, '50', c.amount, c.title, c.reference));
  }
  let debit = 0;
  if (s.self_balance && credit > 0) {
    debit = credit;
    records.push(detail(s.trace_bsb, s.trace_account, '13', debit, s.user_name, description));
  }
  records.push(
    '7' +
      '999-999' +
      blank(12) +
      zeros(Math.abs(credit - debit), 10) +
      zeros(credit, 10) +
      zeros(debit, 10) +
      blank(24) +
      zeros(records.length - 1, 6) +
      blank(40),
  );
  for (const r of records) if (r.length !== 120) throw new Error(`a Direct Entry record of ${r.length} characters`);
  return records.map((r) => `${r}\r\n`).join('');
}
