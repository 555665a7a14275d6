// Signing and verification for the Payment Gateway v2 merchant API.
//
// No dependency beyond node:crypto. Every verify* function here returns false instead of
// throwing on malformed input, so a handler can treat "not a valid message from the gateway" as
// one case; parseNotification, parseRedirection and verifyWebhook throw a VerificationError
// that says what is wrong.

import { hmacSha256Hex, signatureMatches } from './hmac.js';
import { checkPaymentResult, parseNotification, parseRedirection, type FieldSource } from './notification.js';
import { passes } from './verification-error.js';

/** A value that can appear in a signed request; null/undefined/'' are left out of the message. */
export type SignableValue = string | number | null | undefined;
export type SignableParams = Record<string, SignableValue>;

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
export function cancelSigningMessageUserFirst(userId: string, merchantReference: string, apiKey: string): string {
  return `user_id=${userId}&merchant_reference=${merchantReference}${apiKey}`;
}

/** Creation response: nonce then host_url, concatenated. The key is only the HMAC key. */
export function createResponseMessage(fields: { nonce: string; host_url: string }): string {
  return fields.nonce + fields.host_url;
}

/** Gateway data `data` object: like a request, with numbers written with String(). */
export function gatewayDataMessage(data: Record<string, unknown>, apiKey: string): string {
  return sortedPairsMessage(data, apiKey);
}

/**
 * Verifies a result notification (POST to your callback_url). Pass the parsed form body
 * (e.g. Express `req.body` with urlencoded parsing), a URLSearchParams, or the raw body text.
 * After it returns true, still check amount/currency/merchant_reference against your order:
 * the signed text has no separators, so the signature alone does not pin field boundaries.
 * parseNotification does the same check and says why it fails.
 */
export function verifyNotification(fields: FieldSource, apiKey: string): boolean {
  return passes(() => parseNotification(fields, apiKey));
}

/**
 * Verifies the query string of a redirection to your return_url. Even when valid, the
 * `status` there is not proof of payment: confirm with the notification or `query`.
 */
export function verifyRedirection(query: FieldSource, apiKey: string): boolean {
  return passes(() => parseRedirection(query, apiKey));
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
  return passes(() => checkPaymentResult({ ...json, amount: amountText }, apiKey, 'query response'));
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

// The pieces that live in their own files, re-exported so one import covers every signature check.
export { hmacSha256Hex, signatureMatches } from './hmac.js';
export { paymentResultMessage, parseNotification, parseRedirection } from './notification.js';
export type { FieldSource, PaymentResult, PaymentResultFields } from './notification.js';
export { VerificationError } from './verification-error.js';
export type { VerificationErrorCode } from './verification-error.js';
export { verifyWebhook, verifyWebhookHeaders, webhookHeaders, webhookSignature } from './webhooks.js';
export type { VerifyWebhookOptions, WebhookHeaders, WebhookSecret } from './webhooks.js';
