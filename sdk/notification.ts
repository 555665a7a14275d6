// Payment results, which the gateway signs over five fields: the notification POSTed to
// callback_url, the redirection to return_url and (with a numeric amount) the query response.

import { isHexSignature, signatureMatches } from './hmac.js';
import { kindOf, VerificationError } from './verification-error.js';

/** Form bodies and query strings arrive in several shapes depending on the framework. */
export type FieldSource = Record<string, unknown> | URLSearchParams | string;

/** Fields shared by notification, redirection and query response signatures. */
export interface PaymentResultFields {
  merchant_reference: string;
  payment_method: string;
  status: string;
  currency: string;
  amount: string;
}

/**
 * A verified payment result. Only the five PaymentResultFields are covered by `signature`; the
 * others (order_id, pay_time, amount_cny, ...) are as received, so rely on them only when the
 * whole body was verified too (verifyWebhook on the notification's raw body).
 */
export interface PaymentResult extends PaymentResultFields {
  signature: string;
  [field: string]: string | undefined;
}

/**
 * Notification / redirection / query response: merchant_reference, payment_method, status,
 * currency, amount concatenated with no separators and no key appended (the key is only the
 * HMAC key; the published notification example confirms this).
 */
export function paymentResultMessage(fields: PaymentResultFields): string {
  return fields.merchant_reference + fields.payment_method + fields.status + fields.currency + fields.amount;
}

/**
 * Verifies a result notification and returns its fields; throws VerificationError (codes
 * invalid_body, missing_field, invalid_field, no_matching_signature) saying what is wrong.
 * Pass the raw body (string or bytes), a URLSearchParams, or the parsed form object.
 * After it returns, still check amount/currency/merchant_reference against your order: the
 * signed text has no separators, so the signature alone does not pin field boundaries.
 */
export function parseNotification(body: FieldSource | Uint8Array, apiKey: string): PaymentResult {
  return checkPaymentResult(body, apiKey, 'notification');
}

/**
 * Verifies the query string of a redirection to your return_url and returns its fields, or
 * throws like parseNotification. Even when valid, its `status` is not proof of payment.
 */
export function parseRedirection(query: FieldSource, apiKey: string): PaymentResult {
  return checkPaymentResult(query, apiKey, 'redirection');
}

const SIGNED_FIELDS = ['merchant_reference', 'payment_method', 'status', 'currency', 'amount'] as const;

/** The check behind the parse* functions and the boolean verifiers; `what` names the message. */
export function checkPaymentResult(source: unknown, apiKey: string | Uint8Array, what: string): PaymentResult {
  const params = formOf(source, what);
  const signed = {} as Record<(typeof SIGNED_FIELDS)[number] | 'signature', string>;
  for (const name of [...SIGNED_FIELDS, 'signature'] as const) signed[name] = readField(params, name, what);
  if (!isHexSignature(signed.signature)) {
    throw new VerificationError('invalid_field', `The ${what}'s signature is not 64 hexadecimal digits.`, {
      field: 'signature',
    });
  }
  if (!signatureMatches(signed.signature, apiKey, paymentResultMessage(signed))) {
    throw new VerificationError(
      'no_matching_signature',
      `The ${what}'s signature does not match its fields with this api_key: either the key is not ` +
        `this wallet's api_key (or it was rotated), or merchant_reference, payment_method, status, ` +
        `currency or amount was changed. Do not act on it.`,
    );
  }
  return { ...stringFields(params), ...signed };
}

type Form = URLSearchParams | Record<string, unknown>;

function formOf(source: unknown, what: string): Form {
  const text = source instanceof Uint8Array ? Buffer.from(source).toString('utf8') : source;
  if (typeof text === 'string') {
    // The gateway never sends JSON here, so JSON means the fields were parsed and re-encoded.
    if (text.trimStart().startsWith('{') || text === '[object Object]') {
      throw new VerificationError(
        'invalid_body',
        `The ${what} given is ${text.startsWith('[') ? 'an object turned into text' : 'JSON'}, but ` +
          `the gateway sends form-urlencoded fields: pass the raw body text, a URLSearchParams or ` +
          `the parsed form object.`,
      );
    }
    return new URLSearchParams(text);
  }
  if (text instanceof URLSearchParams) return text;
  if (typeof text === 'object' && text !== null && !Array.isArray(text)) {
    return text as Record<string, unknown>;
  }
  throw new VerificationError(
    'invalid_body',
    `The ${what} must be the form as text or bytes, a URLSearchParams or an object of fields; ` +
      `got ${kindOf(text)}.`,
  );
}

// A signed field must be exactly one string: a missing or repeated field makes the message unusable.
function readField(params: Form, name: string, what: string): string {
  const values = params instanceof URLSearchParams ? params.getAll(name) : [params[name]].flat();
  if (values.length === 0 || values[0] === undefined || values[0] === null) {
    throw new VerificationError('missing_field', `The ${what} has no ${name} field. Pass the whole form as received.`, {
      field: name,
    });
  }
  if (values.length > 1) {
    throw new VerificationError(
      'invalid_field',
      `The ${what} has ${values.length} values for ${name}; a signed field must appear once.`,
      { field: name },
    );
  }
  if (typeof values[0] !== 'string') {
    throw new VerificationError(
      'invalid_field',
      `The ${what}'s ${name} is ${kindOf(values[0])}, not text: pass the form as received ` +
        `(with Express, express.urlencoded({ extended: false })).`,
      { field: name },
    );
  }
  return values[0];
}

function stringFields(params: Form): Record<string, string> {
  const out: Record<string, string> = {};
  if (params instanceof URLSearchParams) {
    for (const name of new Set(params.keys())) {
      const all = params.getAll(name);
      if (all.length === 1) out[name] = all[0];
    }
  } else {
    for (const [name, value] of Object.entries(params)) if (typeof value === 'string') out[name] = value;
  }
  return out;
}
