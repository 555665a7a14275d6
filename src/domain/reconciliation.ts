// Reconciliation: a provider's statement of a day, line by line, against the gateway's records,
// and the exceptions where money is at risk. Pure: the use case reads the records a line names and
// acts on the verdict (usecases/reconciliation.ts).
import type { ProviderName } from './channel.js';
import type { RefundStatus } from './refund.js';
import type { Status } from './transaction.js';

/** One line of a provider's statement, read into the gateway's terms. */
export interface StatementLine {
  /** Its place in the file (1 = the first line of data). */
  line_no: number;
  kind: 'payment' | 'refund';
  /** The provider's id of the payment (Alipay's trade_no, WeChat Pay's transaction_id). */
  provider_ref: string;
  /** The gateway's out_trade_no of the payment, as the provider has it. */
  out_trade_no: string;
  /** A refund line: the gateway's refund_id (Alipay's out_request_no, WeChat Pay's out_refund_no). */
  refund_id: string | null;
  /** What was paid, or given back: positive, minor units of `currency`. */
  amount: number;
  currency: string;
  /** The provider's fee on the line, minor units: charged positive, given back (on a refund) negative. */
  fee: number;
  /** When the provider completed it (epoch ms). */
  occurred_at: number;
  /** The provider's own status words, kept as evidence. */
  status: string;
}

/**
 * A file's lines, decoded one at a time (a large statement is never one string): split on LF, a
 * CR before it dropped. `fatal`: bytes that are not the encoding are a StatementFormatError.
 */
export function* textLines(bytes: Uint8Array, encoding: string, fatal = true): Generator<string> {
  const decoder = new TextDecoder(encoding, { fatal });
  let start = 0;
  while (start < bytes.length) {
    let end = bytes.indexOf(0x0a, start);
    if (end < 0) end = bytes.length;
    const stop = end > start && bytes[end - 1] === 0x0d ? end - 1 : end;
    try {
      yield decoder.decode(bytes.subarray(start, stop));
    } catch (e) {
      if (e instanceof TypeError) throw new StatementFormatError(`not ${encoding}: ${e.message}`);
      throw e;
    }
    start = end + 1;
  }
}

/** Every kind of exception, with its severity: `urgent` is money leaving that must be stopped or recovered now. */
export const EXCEPTION_KINDS = {
  /** The provider has a payment the gateway has no record of. */
  unknown_payment: 'high',
  /** The provider has it paid; the gateway had it pending (settled from the statement after asking the provider). */
  pending_payment: 'normal',
  /** The gateway has a paid order the provider's statement of its day lacks. */
  missing_payment: 'high',
  /** The provider's amount or currency is not the gateway's. */
  amount_mismatch: 'high',
  /** A refund the gateway marked failed that the provider made: the merchant's balance was given it back. */
  refund_status_mismatch: 'urgent',
  /** The provider has a refund the gateway has no record of. */
  unknown_refund: 'urgent',
  /** The gateway has a refund made that the statement of its day lacks. */
  missing_refund: 'high',
  /** A second provider payment of an order already paid: the customer paid twice. */
  duplicate_payment: 'high',
  /** Paid at the provider after the order was canceled, expired or failed. */
  paid_after_end: 'high',
  /** The provider holds the payment for a person to look at (a receipt it could not verify, say). */
  provider_attention: 'normal',
} as const;
export type ExceptionKind = keyof typeof EXCEPTION_KINDS;
export type Severity = (typeof EXCEPTION_KINDS)[ExceptionKind];
export const EXCEPTION_KIND_NAMES = Object.keys(EXCEPTION_KINDS) as ExceptionKind[];

/** What an operator may do about an exception of each kind (every kind may be resolved with a note). */
export const EXCEPTION_ACTIONS: Record<ExceptionKind, readonly ExceptionAction[]> = {
  unknown_payment: ['adjust', 'resolve'],
  pending_payment: ['settle', 'resolve'],
  missing_payment: ['adjust', 'resolve'],
  amount_mismatch: ['adjust', 'resolve'],
  refund_status_mismatch: ['adjust', 'resolve'],
  unknown_refund: ['adjust', 'resolve'],
  missing_refund: ['adjust', 'resolve'],
  duplicate_payment: ['refund', 'resolve'],
  paid_after_end: ['refund', 'resolve'],
  provider_attention: ['settle', 'resolve'],
};
export type ExceptionAction = 'refund' | 'settle' | 'adjust' | 'resolve';

/**
 * The key that makes an exception one, however often its event is seen (a live notification, then
 * the statement): the kind and the payment or refund it is about.
 */
export function exceptionKey(kind: ExceptionKind, subject: string): string {
  return `${kind}:${subject}`;
}

/** What the gateway holds of the payment a line names (undefined: nothing). */
export interface KnownPayment {
  order_id: string;
  order_status: Status;
  charged_amount: number;
  charged_currency: string;
  /** This payment is the one that paid its order (its state `paid`, or it settled it). */
  paid_this: boolean;
  /** Another payment of the order paid it. */
  paid_other: boolean;
}

export interface KnownRefund {
  refund_id: string;
  order_id: string;
  refund_status: RefundStatus;
  /** What it gives back in the payment's currency (null before the provider was asked). */
  channel_amount: number | null;
  charged_currency: string;
}

export type LineVerdict =
  | { kind: 'matched' }
  /** The gateway had it pending: ask the provider and settle (a payment) or finish (a refund) the usual way. */
  | { kind: 'ask' }
  | { kind: 'exception'; exception: ExceptionKind; detail: string };

const money = (amount: number, currency: string) => `${amount} ${currency}`;

/** A payment line against the gateway's payment of that out_trade_no. */
export function matchPaymentLine(line: StatementLine, known: KnownPayment | undefined): LineVerdict {
  if (!known)
    return {
      kind: 'exception',
      exception: 'unknown_payment',
      detail: `no payment ${line.out_trade_no} in the gateway`,
    };
  if (line.amount !== known.charged_amount || line.currency !== known.charged_currency)
    return {
      kind: 'exception',
      exception: 'amount_mismatch',
      detail: `statement ${money(line.amount, line.currency)}, gateway ${money(known.charged_amount, known.charged_currency)}`,
    };
  if (known.order_status === 'pending') return { kind: 'ask' };
  if (known.order_status === 'paid')
    return known.paid_other && !known.paid_this
      ? {
          kind: 'exception',
          exception: 'duplicate_payment',
          detail: `order ${known.order_id} was paid by another payment`,
        }
      : { kind: 'matched' };
  return {
    kind: 'exception',
    exception: 'paid_after_end',
    detail: `order ${known.order_id} is ${known.order_status}`,
  };
}

/** A refund line against the gateway's refund of that id. */
export function matchRefundLine(line: StatementLine, known: KnownRefund | undefined): LineVerdict {
  if (!known)
    return {
      kind: 'exception',
      exception: 'unknown_refund',
      detail: `no refund ${line.refund_id ?? '(no id)'} of payment ${line.out_trade_no} in the gateway`,
    };
  if (
    known.channel_amount !== null &&
    (line.amount !== known.channel_amount || line.currency !== known.charged_currency)
  )
    return {
      kind: 'exception',
      exception: 'amount_mismatch',
      detail: `statement ${money(line.amount, line.currency)}, gateway ${money(known.channel_amount, known.charged_currency)}`,
    };
  if (known.refund_status === 'failed')
    return {
      kind: 'exception',
      exception: 'refund_status_mismatch',
      detail: `refund ${known.refund_id} is failed in the gateway; the provider made it`,
    };
  if (known.refund_status === 'pending') return { kind: 'ask' };
  return { kind: 'matched' };
}

/** A statement file the gateway cannot read as its format says: nothing of it is imported. */
export class StatementFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StatementFormatError';
  }
}

/**
 * A statement's decimal amount (`-0.01`, `0.60000`) in minor units of `exponent`, its sign kept:
 * decimals beyond the minor unit (WeChat Pay's fees have five) rounded half away from zero.
 */
export function statementAmount(text: string, exponent: number, what: string): number {
  const m = /^(-?)(\d{1,15})(?:\.(\d{1,8}))?$/.exec(text.trim());
  if (!m) throw new StatementFormatError(`${what} is not an amount: ${JSON.stringify(text.slice(0, 40))}`);
  const decimals = (m[3] ?? '').padEnd(exponent + 1, '0');
  const whole = BigInt(m[2]) * 10n ** BigInt(exponent) + BigInt(decimals.slice(0, exponent) || '0');
  const rest = decimals.slice(exponent);
  const rounded = Number(whole + (rest !== '' && rest[0] >= '5' ? 1n : 0n));
  return m[1] === '-' ? -rounded : rounded;
}

/** `yyyy-MM-dd HH:mm:ss` as the providers in China write it: Beijing time (UTC+08:00). */
export function beijingTime(text: string, what: string): number {
  const m = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})$/.exec(text.trim());
  const at = m ? Date.parse(`${m[1]}T${m[2]}+08:00`) : NaN;
  if (Number.isNaN(at)) throw new StatementFormatError(`${what} is not a time: ${JSON.stringify(text.slice(0, 40))}`);
  return at;
}

const DAY_MS = 86_400_000;

/** A time zone's wall clock at `ms`, read as if it were UTC (so its difference from `ms` is the zone's offset). */
function wallClock(ms: number, timeZone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  }).formatToParts(ms);
  const n = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  return Date.UTC(n('year'), n('month') - 1, n('day'), n('hour'), n('minute'), n('second')) + (ms % 1000);
}

/** The date (`YYYY-MM-DD`) in `timeZone` (an IANA name: Asia/Shanghai, Pacific/Auckland) at `ms`. */
export function dateIn(ms: number, timeZone: string): string {
  return new Date(wallClock(ms, timeZone)).toISOString().slice(0, 10);
}

/** When `date` begins in `timeZone` (epoch ms): its first instant, whatever daylight saving does that day. */
export function dayStartIn(date: string, timeZone: string): number {
  const midnight = Date.parse(`${date}T00:00:00Z`);
  let at = midnight - (wallClock(midnight, timeZone) - midnight);
  // The offset at the guess can differ from the offset at the day's start (a change overnight).
  at = midnight - (wallClock(at, timeZone) - at);
  return at;
}

/**
 * A provider's date-time (`2026-11-30T09:15:02.25`, or with a space) in `timeZone`, unless it states
 * its own offset (`Z`, `+11:00`, `+11`): epoch ms.
 */
export function timeIn(text: string, timeZone: string, what: string): number {
  const m = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2})(\.\d{1,7})?(Z|[+-]\d{2}(?::?\d{2})?)?$/.exec(text.trim());
  if (!m) throw new StatementFormatError(`${what} is not a time: ${JSON.stringify(text.slice(0, 40))}`);
  const ms = m[3] ? Math.round(Number(`0${m[3]}`) * 1000) : 0;
  const wall = Date.parse(`${m[1]}T${m[2]}Z`) + ms;
  if (Number.isNaN(wall)) throw new StatementFormatError(`${what} is not a time: ${JSON.stringify(text.slice(0, 40))}`);
  if (m[4]) {
    if (m[4] === 'Z') return wall;
    const [, sign, hh, mm] = /^([+-])(\d{2}):?(\d{2})?$/.exec(m[4])!;
    return wall - (sign === '-' ? -1 : 1) * (Number(hh) * 60 + Number(mm ?? 0)) * 60_000;
  }
  let at = wall - (wallClock(wall, timeZone) - wall);
  at = wall - (wallClock(at, timeZone) - at);
  return at;
}

/** `date` in `timeZone`: its first instant and the next day's. */
export function dayIn(date: string, timeZone: string): { from: number; to: number } {
  const next = new Date(Date.parse(`${date}T00:00:00Z`) + DAY_MS).toISOString().slice(0, 10);
  return { from: dayStartIn(date, timeZone), to: dayStartIn(next, timeZone) };
}

/**
 * The provider days whose statements are due at `now`: yesterday (in the provider's zone) and up to
 * `lookback` days before it, each once `publishedAfterMs` past its end. Oldest first.
 */
export function dueStatementDates(
  now: number,
  source: { timeZone: string; publishedAfterMs: number },
  lookback = 3,
): string[] {
  const today = Date.parse(`${dateIn(now, source.timeZone)}T00:00:00Z`);
  const out: string[] = [];
  for (let i = lookback; i >= 1; i--) {
    const date = new Date(today - i * DAY_MS).toISOString().slice(0, 10);
    if (now >= dayIn(date, source.timeZone).to + source.publishedAfterMs) out.push(date);
  }
  return out;
}

// The records reconciliation keeps (the repository's rows, store/reconciliation/).

export interface ProviderStatement {
  statement_id: string;
  provider: ProviderName;
  /** The account's identity at its provider (Alipay's app_id, WeChat Pay's mchid). */
  merchant_id: string;
  /** The provider's day (its own time zone), `YYYY-MM-DD`. */
  statement_date: string;
  /** The wallet and method it was imported through. */
  wallet_id: string;
  payment_method: string;
  format: string;
  raw_sha256: string;
  line_count: number;
  matched_count: number;
  exception_count: number;
  /** The provider's fees on its lines, per currency (minor units): `{"CNY": 1234}`. */
  fees: string;
  /** `provider` (fetched) or `file` (an operator's download). */
  source: 'provider' | 'file';
  /** `importing` while its lines are written in parts; `imported` once whole (its counts and fees final). */
  status: 'importing' | 'imported';
  /** When its import began (importing), then when it ended. */
  imported_at: number;
  imported_by: string;
}

export type LineVerdictName = 'matched' | 'asked' | 'exception';

export interface StoredStatementLine extends StatementLine {
  statement_id: string;
  verdict: LineVerdictName;
  order_id: string | null;
  exception_id: string | null;
}

export type ExceptionStatus = 'open' | 'resolved';

export interface MoneyException {
  exception_id: string;
  /** One exception per kind and subject (domain/reconciliation.ts exceptionKey). */
  dedupe_key: string;
  kind: ExceptionKind;
  severity: Severity;
  exception_status: ExceptionStatus;
  /** `live` (a provider's notification or answer) or `statement`. */
  source: 'live' | 'statement';
  provider: string | null;
  wallet_id: string | null;
  order_id: string | null;
  out_trade_no: string | null;
  refund_id: string | null;
  statement_id: string | null;
  line_no: number | null;
  /** In words: what does not agree. */
  detail: string;
  /** JSON: the statement line, the gateway's records as they were seen. */
  evidence: string;
  created_at: number;
  resolved_at: number | null;
  resolved_by: string | null;
  resolution: ExceptionAction | 'auto' | null;
  note: string | null;
}

/** An account's day for the import job: its statement once imported, else when to ask again and why not yet. */
export interface StatementDay {
  provider: string;
  merchant_id: string;
  statement_date: string;
  wallet_id: string;
  payment_method: string;
  statement_id: string | null;
  attempts: number;
  next_try_at: number;
  claimed_until: number | null;
  last_error: string | null;
  updated_at: number;
}
