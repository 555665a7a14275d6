import { exponentOf, formatAmount, parseAmount } from '../../domain/money.js';
import { textOf } from '../../domain/text.js';
import type { Charge, OpenOutcome, PaymentState } from '../../ports/connector.js';

// POLi's wire formats (API v2, JSON) and statuses mapped onto the gateway's, and nothing else: no
// I/O, no credentials. Facts and their sources: docs/providers/protocols/poli.md.

/** What the client makes of one call: POLi's JSON answer with its HTTP status, or no answer. */
export type PoliReply =
  { kind: 'answer'; status: number; body: Readonly<Record<string, unknown>> } | { kind: 'unknown'; reason: string };

/** GetTransaction's TransactionStatusCode, as POLi's manual lists it (compared without case: its casing varies). */
export const TRANSACTION_STATUSES = [
  'Initiated',
  'FinancialInstitutionSelected',
  'EulaAccepted',
  'InProcess',
  'Unknown',
  'Completed',
  'Cancelled',
  'Failed',
  'ReceiptUnverified',
  'TimedOut',
  'PaymentPending',
] as const;
export type TransactionStatus = (typeof TRANSACTION_STATUSES)[number];

export function transactionStatus(v: unknown): TransactionStatus | undefined {
  const text = textOf(v).toLowerCase();
  return TRANSACTION_STATUSES.find((s) => s.toLowerCase() === text);
}

/** POLi takes no less than 1.00 (its error 1025/14058). */
export const MINIMUM_AMOUNT = 100;

/** How long POLi holds a transaction open for the customer, at most: its clients' default. */
const TIMEOUT_S = 900;

/**
 * Initiate's body. The MerchantReference is the out_trade_no (digits and a letter: within POLi's
 * characters everywhere); the customer returns to the hosted page whatever happened there.
 */
export function initiateBody(input: {
  out_trade_no: string;
  charge: Charge;
  return_url: string;
  notify_url: string;
  expires_at: number;
  now: number;
}): Record<string, unknown> {
  return {
    Amount: Number(formatAmount(input.charge.amount, exponentOf(input.charge.currency))),
    CurrencyCode: input.charge.currency,
    MerchantReference: input.out_trade_no,
    MerchantHomepageURL: new URL(input.return_url).origin,
    SuccessURL: input.return_url,
    FailureURL: input.return_url,
    CancellationURL: input.return_url,
    NotificationURL: input.notify_url,
    Timeout: Math.max(60, Math.min(TIMEOUT_S, Math.floor((input.expires_at - input.now) / 1000))),
  };
}

/** Errors that say nothing of the outcome (a back-end timeout at POLi). */
const TRANSIENT_ERRORS = new Set(['3007']);

function errorOf(body: Readonly<Record<string, unknown>>): string {
  const code = textOf(body.ErrorCode);
  const message = textOf(body.ErrorMessage) || textOf(body.Message) || 'no message';
  return `${code || '-'}: ${message}`;
}

export function initiateOutcome(r: PoliReply): OpenOutcome {
  if (r.kind === 'unknown') return r;
  if (r.status >= 500) return { kind: 'unknown', reason: `HTTP ${r.status} ${errorOf(r.body)}` };
  const navigate = textOf(r.body.NavigateURL);
  if (
    r.status === 200 &&
    r.body.Success === true &&
    /^https:\/\/|^http:\/\/(127\.0\.0\.1|localhost)[:/]/.test(navigate)
  )
    return { kind: 'opened', payload: navigate };
  if (TRANSIENT_ERRORS.has(textOf(r.body.ErrorCode))) return { kind: 'unknown', reason: errorOf(r.body) };
  return { kind: 'refused', reason: `POLi refused the transaction (HTTP ${r.status}) ${errorOf(r.body)}` };
}

/** The transaction's token in the address POLi sends the customer to (`?token=`), which GetTransaction takes. */
export function tokenOf(navigateUrl: string | null | undefined): string | undefined {
  if (!navigateUrl) return undefined;
  try {
    return new URL(navigateUrl).searchParams.get('token') ?? undefined;
  } catch {
    return undefined;
  }
}

/**
 * A transaction as GetTransaction (or the daily list) reports it. Only Completed is paid, with
 * what was paid; the ends without payment close it; the rest is still open. ReceiptUnverified is
 * POLi not knowing whether the bank paid: it stays open (pending) until an operator learns more.
 */
export function transactionState(t: Readonly<Record<string, unknown>>): PaymentState {
  const status = transactionStatus(t.TransactionStatusCode ?? t.TransactionStatus);
  if (!status)
    return {
      kind: 'unknown',
      reason: `unknown TransactionStatusCode ${textOf(t.TransactionStatusCode ?? t.TransactionStatus) || '(none)'}`,
    };
  switch (status) {
    case 'Completed': {
      const currency = textOf(t.CurrencyCode);
      const amount = amountOf(t.AmountPaid, currency);
      const ref = textOf(t.TransactionRefNo);
      if (amount === undefined || !ref)
        return {
          kind: 'unknown',
          reason: 'Completed without an AmountPaid in a known currency, or without its TransactionRefNo',
        };
      return { kind: 'paid', provider_ref: ref, charge: { amount, currency } };
    }
    case 'Cancelled':
    case 'Failed':
    case 'TimedOut':
      return { kind: 'closed' };
    case 'ReceiptUnverified':
      return {
        kind: 'pending',
        attention: `POLi could not confirm whether the bank paid (ReceiptUnverified, POLi ID ${textOf(t.TransactionRefNo) || '?'}): check the payment with the merchant's bank or POLi`,
      };
    case 'Initiated':
    case 'FinancialInstitutionSelected':
    case 'EulaAccepted':
    case 'InProcess':
    case 'Unknown':
    case 'PaymentPending':
      return { kind: 'pending' };
  }
}

/** An amount POLi wrote (a JSON number with up to 2 decimals), in minor units of `currency`. */
export function amountOf(v: unknown, currency: string): number | undefined {
  let exponent: number;
  try {
    exponent = exponentOf(currency);
  } catch {
    return undefined;
  }
  const text = typeof v === 'number' && Number.isFinite(v) ? v.toFixed(exponent) : textOf(v);
  const parsed = parseAmount(text, exponent);
  return parsed.ok ? parsed.minor : undefined;
}
