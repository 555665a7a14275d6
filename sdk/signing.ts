// Signing and verification for the Payment Gateway v2 merchant API.
//
// Self-contained on purpose (only node:crypto): merchants copy this folder into their own code.
// Every verify* function returns false instead of throwing on malformed input, so a handler can
// treat "not a valid message from the gateway" as one case.

import { createHmac, timingSafeEqual } from 'node:crypto';

/** A value that can appear in a signed request; null/undefined/'' are left out of the message. */
export type SignableValue = string | number | null | undefined;
export type SignableParams = Record<string, SignableValue>;

/** HMAC-SHA256 of a UTF-8 message, as 64 lowercase hex characters (the spec's signature format). */
export function hmacSha256Hex(key: string, message: string): string {
  return createHmac('sha256', key).update(message, 'utf8').digest('hex');
}

// Plain code-unit order, not localeCompare: the spec sorts uppercase before lowercase
// (`backPage_url` < `back_url`), and a locale-aware sort would disagree with the gateway.
function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

// Shared by request signing and the gateway data object: sorted `name=value` pairs joined by
// '&', raw (unencoded) values, with the key appended directly (no separator).
function sortedPairsMessage(params: Record<string, unknown>, apiKey: string): string {
  const pairs = Object.keys(params)
    .filter((name) => name !== 'signature')
    .filter((name) => {
      const value = params[name];
      return value !== null && value !== undefined && value !== '';
    })
    .sort(byCodeUnit)
    .map((name) => `${name}=${String(params[name])}`);
  return pairs.join('&') + apiKey;
}

/**
 * The text a request signature is computed over (create, query, refund, cancel):
 * all params except `signature`, without null/undefined/'' values, sorted by name,
 * `name=value` joined with '&', API key appended.
 */
export function requestSigningMessage(params: SignableParams, apiKey: string): string {
  return sortedPairsMessage(params, apiKey);
}

/** Returns the `signature` value for a request's params. */
export function signRequest(params: SignableParams, apiKey: string): string {
  return hmacSha256Hex(apiKey, requestSigningMessage(params, apiKey));
}

/**
 * The wallet detail request's signature message (`GET /v2/detail/{wallet_id}`): wallet_id then
 * user_id, concatenated; the HMAC is keyed with the API key, which is not appended. This is how the
 * original service's shop plugins sign it.
 */
export function walletDetailSigningMessage(walletId: string, userId: string): string {
  return walletId + userId;
}

/**
 * Cancel signature in the unsorted `user_id=..&merchant_reference=..` + key form that some
 * existing clients send (one published example uses it). The spec's sorted form is what
 * `requestSigningMessage` builds; use this only if your gateway expects the legacy order.
 */
export function cancelSigningMessageUserFirst(
  userId: string,
  merchantReference: string,
  apiKey: string,
): string {
  return `user_id=${userId}&merchant_reference=${merchantReference}${apiKey}`;
}

/** Creation response: nonce then host_url, concatenated. The key is only the HMAC key. */
export function createResponseMessage(fields: { nonce: string; host_url: string }): string {
  return fields.nonce + fields.host_url;
}

/** Fields shared by notification, redirection and query response signatures. */
export interface PaymentResultFields {
  merchant_reference: string;
  payment_method: string;
  status: string;
  currency: string;
  amount: string;
}

/**
 * Notification / redirection / query response: merchant_reference, payment_method, status,
 * currency, amount concatenated with no separators and no key appended (the key is only the
 * HMAC key; the published notification example confirms this).
 */
export function paymentResultMessage(fields: PaymentResultFields): string {
  return (
    fields.merchant_reference +
    fields.payment_method +
    fields.status +
    fields.currency +
    fields.amount
  );
}

/** Gateway data `data` object: like a request, with numbers written with String(). */
export function gatewayDataMessage(data: Record<string, unknown>, apiKey: string): string {
  return sortedPairsMessage(data, apiKey);
}

const HEX_SIGNATURE = /^[0-9a-fA-F]{64}$/;

/**
 * Constant-time comparison of a received hex signature with the one we compute.
 * Both sides are decoded to 32 bytes first, so timingSafeEqual always sees equal lengths and
 * the shape check (not the secret-dependent comparison) is what rejects junk.
 */
export function signatureMatches(received: unknown, apiKey: string, message: string): boolean {
  if (typeof received !== 'string' || !HEX_SIGNATURE.test(received)) return false;
  const expected = Buffer.from(hmacSha256Hex(apiKey, message), 'hex');
  return timingSafeEqual(expected, Buffer.from(received, 'hex'));
}

/** Form bodies and query strings arrive in several shapes depending on the framework. */
export type FieldSource = Record<string, unknown> | URLSearchParams | string;

// Reads each name as a single string; a missing or repeated field makes the message unusable.
function readStrings<K extends string>(
  source: FieldSource,
  names: readonly K[],
): Record<K, string> | undefined {
  const params = typeof source === 'string' ? new URLSearchParams(source) : source;
  const out = {} as Record<K, string>;
  for (const name of names) {
    let value: unknown;
    if (params instanceof URLSearchParams) {
      const all = params.getAll(name);
      value = all.length === 1 ? all[0] : undefined;
    } else {
      value = params[name];
    }
    if (typeof value !== 'string') return undefined;
    out[name] = value;
  }
  return out;
}

const RESULT_FIELDS = [
  'merchant_reference',
  'payment_method',
  'status',
  'currency',
  'amount',
  'signature',
] as const;

function verifyPaymentResult(source: FieldSource, apiKey: string): boolean {
  if (source === null || (typeof source !== 'object' && typeof source !== 'string')) return false;
  const fields = readStrings(source, RESULT_FIELDS);
  if (!fields) return false;
  return signatureMatches(fields.signature, apiKey, paymentResultMessage(fields));
}

/**
 * Verifies a result notification (POST to your callback_url). Pass the parsed form body
 * (e.g. Express `req.body` with urlencoded parsing), a URLSearchParams, or the raw body text.
 * After it returns true, still check amount/currency/merchant_reference against your order:
 * the signed text has no separators, so the signature alone does not pin field boundaries.
 */
export function verifyNotification(fields: FieldSource, apiKey: string): boolean {
  return verifyPaymentResult(fields, apiKey);
}

/**
 * Verifies the query string of a redirection to your return_url. Even when valid, the
 * `status` there is not proof of payment: confirm with the notification or `query`.
 */
export function verifyRedirection(query: FieldSource, apiKey: string): boolean {
  return verifyPaymentResult(query, apiKey);
}

/**
 * Verifies a query response. `amount` is a JSON number there; the message uses
 * String(parsedNumber) (0.01 -> "0.01"), which matches a production response. A string amount
 * is used as-is.
 */
export function verifyQueryResponse(json: unknown, apiKey: string): boolean {
  if (!isObject(json)) return false;
  const amount = json.amount;
  let amountText: string;
  if (typeof amount === 'number' && Number.isFinite(amount)) amountText = String(amount);
  else if (typeof amount === 'string') amountText = amount;
  else return false;
  return verifyPaymentResult({ ...json, amount: amountText }, apiKey);
}

/** Verifies a creation response (nonce + host_url). */
export function verifyCreateResponse(json: unknown, apiKey: string): boolean {
  if (!isObject(json)) return false;
  const { nonce, host_url: hostUrl, signature } = json;
  if (typeof nonce !== 'string' || typeof hostUrl !== 'string') return false;
  return signatureMatches(signature, apiKey, createResponseMessage({ nonce, host_url: hostUrl }));
}

/** Verifies the `data` object of a gateway data response (pass `response.data`). */
export function verifyGatewayData(data: unknown, apiKey: string): boolean {
  if (!isObject(data)) return false;
  // Only scalars have a defined text form; anything else cannot match what the gateway signed.
  for (const [name, value] of Object.entries(data)) {
    if (name === 'signature' || value === null || value === undefined) continue;
    if (!['string', 'number', 'boolean'].includes(typeof value)) return false;
  }
  return signatureMatches(data.signature, apiKey, gatewayDataMessage(data, apiKey));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// Standard Webhooks verification lives in its own file; re-exported so one import covers
// every signature check.
export { verifyWebhookHeaders, webhookSignature } from './webhooks.js';
export type { WebhookHeaders, WebhookSecret } from './webhooks.js';
