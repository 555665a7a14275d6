import { exponentOf, formatAmount, parseAmount } from '../../domain/money.js';
import { textOf } from '../../domain/text.js';
import type { OpenOutcome, PaymentState, RefundOutcome, TransferPayload } from '../../ports/connector.js';

// Azupay's wire formats (the PaymentRequest API, JSON) and statuses mapped onto the gateway's, and
// nothing else: no I/O, no credentials. Facts and their sources: docs/providers/protocols/azupay.md.

/** What the client makes of one call: Azupay's JSON answer with its HTTP status, or no answer. */
export type AzupayReply =
  { kind: 'answer'; status: number; body: Readonly<Record<string, unknown>> } | { kind: 'unknown'; reason: string };

type Json = Readonly<Record<string, unknown>>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const objectOf = (v: unknown): Json => (isObject(v) ? v : {});

/** PaymentRequestStatus.status, exactly as Azupay's schema lists it. */
export const REQUEST_STATUSES = [
  'WAITING',
  'COMPLETE',
  'EXPIRED',
  'RETURN_IN_PROGRESS',
  'RETURN_COMPLETE',
  'RETURN_FAILED',
] as const;
export type RequestStatus = (typeof REQUEST_STATUSES)[number];

export function requestStatus(v: unknown): RequestStatus | undefined {
  return REQUEST_STATUSES.find((s) => s === textOf(v));
}

/** Azupay's amounts: AUD as a JSON number of dollars (cents after the point). */
export function azupayAmount(minor: number): number {
  return Number(formatAmount(minor, exponentOf('AUD')));
}

/** An amount Azupay wrote (a number, or a string in refunds) in cents; undefined when it is not one. */
export function centsOf(v: unknown): number | undefined {
  const text = typeof v === 'number' && Number.isFinite(v) ? v.toFixed(2) : textOf(v);
  const parsed = parseAmount(text, 2);
  return parsed.ok ? parsed.minor : undefined;
}

/** paymentDescription: 5 to 140 characters, kept to 110 (banking apps cut it), no customer's data. */
export function paymentDescription(description: string, out_trade_no: string): string {
  const text = [...description]
    .map((c) => (c.charCodeAt(0) < 0x20 || c === '\u007f' ? ' ' : c))
    .join('')
    .trim();
  const kept = [...text].slice(0, 110).join('');
  return kept.length >= 5 ? kept : `Order ${out_trade_no}`;
}

/** Create's body: the request wrapped in `PaymentRequest`, with only the schema's fields (it refuses others). */
export function createBody(input: {
  clientId: string;
  out_trade_no: string;
  description: string;
  amount: number;
  expires_at: number;
  notify_url: string;
  authorization: string;
  payIdSuffix?: string;
}): Record<string, unknown> {
  return {
    PaymentRequest: {
      clientId: input.clientId,
      clientTransactionId: input.out_trade_no,
      paymentDescription: paymentDescription(input.description, input.out_trade_no),
      paymentAmount: azupayAmount(input.amount),
      paymentExpiryDatetime: new Date(input.expires_at).toISOString(),
      ...(input.payIdSuffix && { payIDSuffix: input.payIdSuffix }),
      paymentNotification: {
        paymentNotificationEndpointUrl: input.notify_url,
        paymentNotificationAuthorizationHeaderValue: input.authorization,
      },
    },
  };
}

export function errorOf(body: Json): string {
  const details = objectOf(body.details);
  const code = textOf(details.failureCode);
  const message = textOf(body.message) || textOf(details.failureReason) || 'no message';
  return code ? `${code}: ${message}` : message;
}

/** The payload stored for an opened request: what the page shows (TransferPayload) and the request's id. */
export interface AzupayPayload extends TransferPayload {
  paymentRequestId: string;
}

/** A request as Azupay answers it ({PaymentRequest, PaymentRequestStatus}): its payload, if it has what the page needs. */
export function payloadOf(record: Json, expires_at: number): AzupayPayload | undefined {
  const request = objectOf(record.PaymentRequest);
  const status = objectOf(record.PaymentRequestStatus);
  const payId = textOf(request.payID);
  const paymentRequestId = textOf(status.paymentRequestId);
  const expiry = Date.parse(textOf(request.paymentExpiryDatetime));
  if (!payId || !paymentRequestId) return undefined;
  return { payId, paymentRequestId, expiresAt: Number.isFinite(expiry) ? expiry : expires_at };
}

/** The stored payload's request id, or undefined for none (the request's creation got no answer). */
export function requestIdOf(payload: string | null | undefined): string | undefined {
  if (!payload) return undefined;
  try {
    const p = JSON.parse(payload) as Partial<AzupayPayload>;
    return typeof p.paymentRequestId === 'string' && p.paymentRequestId ? p.paymentRequestId : undefined;
  } catch {
    return undefined;
  }
}

/** A duplicate clientTransactionId: made before, its answer lost. */
export function isDuplicate(r: AzupayReply): boolean {
  return r.kind === 'answer' && r.status === 400 && /duplicate|already exists|unique/i.test(errorOf(r.body));
}

export function createOutcome(r: AzupayReply, expires_at: number): OpenOutcome {
  if (r.kind === 'unknown') return r;
  if (r.status >= 500 || r.status === 429) return { kind: 'unknown', reason: `HTTP ${r.status} ${errorOf(r.body)}` };
  if (r.status === 200 || r.status === 201) {
    const payload = payloadOf(r.body, expires_at);
    return payload
      ? { kind: 'opened', payload: JSON.stringify(payload) }
      : { kind: 'unknown', reason: 'Azupay answered without the PayID or the request id' };
  }
  return { kind: 'refused', reason: `Azupay refused the payment request (HTTP ${r.status}) ${errorOf(r.body)}` };
}

/** The records of a search (POST /paymentRequest/search). */
export function searchRecords(body: Json): Json[] {
  return Array.isArray(body.records) ? body.records.filter(isObject) : [];
}

/**
 * A payment request as Azupay reports it. COMPLETE is paid with what was received. EXPIRED ends
 * the order failed. A return is what Azupay did by itself (AUTOMATIC: a payment of the wrong
 * amount, or after expiry), which is the spec's `rejected`, or a refund the merchant asked for
 * (MANUAL), after which the request was paid. Anything else is unknown, never a default.
 */
export function requestState(record: Json): PaymentState {
  const request = objectOf(record.PaymentRequest);
  const s = objectOf(record.PaymentRequestStatus);
  const status = requestStatus(s.status);
  if (!status) return { kind: 'unknown', reason: `unknown payment request status ${textOf(s.status) || '(none)'}` };
  const paid = (): PaymentState => {
    const amount = centsOf(s.amountReceived);
    const ref = textOf(s.paymentRequestId);
    if (amount === undefined || amount <= 0 || !ref)
      return { kind: 'unknown', reason: `${status} without an amountReceived or a paymentRequestId` };
    return { kind: 'paid', provider_ref: ref, charge: { amount, currency: 'AUD' } };
  };
  switch (status) {
    case 'WAITING':
      return { kind: 'pending' };
    case 'COMPLETE':
      return paid();
    case 'EXPIRED':
      return { kind: 'failed', reason: 'the PayID payment request expired unpaid' };
    case 'RETURN_IN_PROGRESS':
    case 'RETURN_COMPLETE':
    case 'RETURN_FAILED': {
      const initiator = textOf(s.returnInitiator ?? request.returnInitiator).toUpperCase();
      if (initiator === 'MANUAL') return paid();
      if (initiator !== 'AUTOMATIC')
        return { kind: 'unknown', reason: `${status} without a returnInitiator (${initiator || 'none'})` };
      const attempts = Array.isArray(s.failedPaymentAttempts) ? s.failedPaymentAttempts.filter(isObject) : [];
      const reason =
        textOf(s.failureReason) ||
        textOf(attempts.at(-1)?.attemptFailureReason) ||
        'the payment was returned to the payer by Azupay';
      return { kind: 'rejected', reason, msgId: textOf(request.payID) };
    }
  }
}

/**
 * What became of a refund of `amount` cents, from the request's refundInformation. Azupay's
 * refund list does not echo the clientRefundID, and takes one refund at a time, so the refund is
 * the latest of its amount.
 */
export function refundState(record: Json, amount: number): RefundOutcome {
  const info = objectOf(objectOf(record.PaymentRequestStatus).refundInformation);
  const requests = Array.isArray(info.requests) ? info.requests.filter(isObject) : [];
  const mine = requests.filter((r) => centsOf(r.amount) === amount).at(-1);
  if (!mine) return { kind: 'not_found' };
  switch (textOf(mine.status)) {
    case 'COMPLETE':
      return { kind: 'succeeded' };
    case 'IN_PROGRESS':
      return { kind: 'processing' };
    case 'FAILED':
      return { kind: 'refused', reason: 'Azupay could not make the refund (FAILED)' };
    default:
      return { kind: 'unknown', reason: `unknown refund status ${textOf(mine.status) || '(none)'}` };
  }
}

/** The answer to a refund. A refusal is Azupay's 400 with its code; a second refund while one is in flight says so. */
export function refundOutcome(r: AzupayReply, amount: number): RefundOutcome {
  if (r.kind === 'unknown') return r;
  if (r.status >= 500 || r.status === 429) return { kind: 'unknown', reason: `HTTP ${r.status} ${errorOf(r.body)}` };
  if (r.status === 200) {
    const state = refundState(r.body, amount);
    return state.kind === 'not_found' ? { kind: 'processing' } : state;
  }
  const error = errorOf(r.body);
  if (/ERR0\.0[38]/.test(error))
    return {
      kind: 'refused',
      reason: `Azupay takes one refund at a time, or this payment cannot be refunded now (${error}): try again in a few seconds`,
    };
  return { kind: 'refused', reason: `Azupay refused the refund (HTTP ${r.status}) ${error}` };
}
