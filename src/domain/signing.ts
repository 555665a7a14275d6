import { timingSafeEqual } from 'node:crypto';
import { hmacSha256 } from './hmac.js';

// The spec's signing rules. Every message is HMAC-SHA256 keyed with the wallet's api_key,
// written as 64 lowercase hex characters.

export function hmacHex(key: string, message: string): string {
  return hmacSha256(key, message, 'hex');
}

export type SignableValue = string | null | undefined;

/** Sorted `name=value&...` of the params except `signature`, in code-unit order (uppercase first). */
export function sortedParams(params: Record<string, SignableValue>, keepEmpty = false): string {
  const names: string[] = [];
  for (const name of Object.keys(params)) {
    const v = params[name];
    if (name !== 'signature' && v !== null && v !== undefined && (keepEmpty || v !== '')) names.push(name);
  }
  // Without a comparator, sort() orders strings by UTF-16 code units: the order the spec means.
  names.sort();
  let out = '';
  for (let i = 0; i < names.length; i++) out += `${i === 0 ? '' : '&'}${names[i]}=${params[names[i]]}`;
  return out;
}

/** Spec, "Signing a request": sorted params with the API key appended, keyed with the API key. */
export function requestSignature(params: Record<string, SignableValue>, apiKey: string): string {
  return hmacHex(apiKey, sortedParams(params) + apiKey);
}

/**
 * The messages a real client of the original service may have signed a request over.
 * Fields with empty values are left out by the spec, but some integrations keep them as `name=`.
 */
export function requestMessageCandidates(params: Record<string, SignableValue>, apiKey: string): string[] {
  const strict = sortedParams(params) + apiKey;
  // Sorting once more is needed only when some field is empty (the usual request has none).
  for (const name in params) {
    if (params[name] === '' && name !== 'signature') return [strict, sortedParams(params, true) + apiKey];
  }
  return [strict];
}

/**
 * The original service's older create signature, which its CS-Cart plugin and other clients still
 * send: the six values concatenated in this order, keyed with the API key, nothing appended. It
 * covers none of merchant_reference, product_name, ip, present_qr and the rest, so a wallet accepts
 * it only while its operator leaves `legacy_signatures` on (docs/decisions.md).
 */
export function legacyCreateMessage(r: {
  user_id: string;
  wallet_id: string;
  amount: string;
  payment_method: string;
  return_url: string;
  callback_url: string;
}): string {
  return r.user_id + r.wallet_id + r.amount + r.payment_method + r.return_url + r.callback_url;
}

/** Wallet detail (`GET /v2/detail/{wallet_id}`): wallet_id + user_id, as the original's shop plugins sign it; or the sorted form. */
export function walletDetailMessageCandidates(d: { wallet_id: string; user_id: string }, apiKey: string): string[] {
  return [d.wallet_id + d.user_id, sortedParams(d) + apiKey];
}

/**
 * Query: sorted form (with or without is_block; an empty is_block left out or kept as `is_block=`,
 * as for any empty field), or merchant_reference + user_id keyed with the key.
 */
export function queryMessageCandidates(
  q: { merchant_reference: string; user_id: string; is_block?: string | undefined },
  apiKey: string,
): string[] {
  const base = { merchant_reference: q.merchant_reference, user_id: q.user_id };
  const out = [sortedParams(base) + apiKey];
  if (q.is_block !== undefined) out.push(sortedParams({ ...base, is_block: q.is_block }, true) + apiKey);
  out.push(q.merchant_reference + q.user_id);
  return out;
}

/** Cancel: sorted form, or user_id then merchant_reference in that order. */
export function cancelMessageCandidates(c: { merchant_reference: string; user_id: string }, apiKey: string): string[] {
  return [sortedParams(c) + apiKey, `user_id=${c.user_id}&merchant_reference=${c.merchant_reference}${apiKey}`];
}

/** Each candidate's HMAC, written here to be compared (one buffer for all: the comparison is synchronous). */
const expected = Buffer.alloc(32);

/**
 * Checks a presented signature against each candidate message, each comparison in constant time.
 * It stops at the first match: which accepted form a valid request used is not secret (its sender
 * chose it, and the answer says it was accepted anyway), while a refused signature always costs
 * every candidate, so refusals do not differ in timing by how close they came.
 */
export function signatureMatchesAny(presented: string, apiKey: string, messages: readonly string[]): boolean {
  const wellFormed = /^[0-9a-fA-F]{64}$/.test(presented);
  // A malformed signature is still compared (against zeros) so that its rejection costs the same.
  const given = wellFormed ? Buffer.from(presented, 'hex') : Buffer.alloc(32);
  for (const message of messages) {
    expected.write(hmacSha256(apiKey, message, 'binary'), 'latin1');
    if (timingSafeEqual(expected, given) && wellFormed) return true;
  }
  return false;
}

/** Notification, redirection and query response: fields concatenated without separators. */
export function resultSignature(
  r: { merchant_reference: string; payment_method: string; status: string; currency: string; amount: string },
  apiKey: string,
): string {
  return hmacHex(apiKey, r.merchant_reference + r.payment_method + r.status + r.currency + r.amount);
}

export function createResponseSignature(nonce: string, hostUrl: string, apiKey: string): string {
  return hmacHex(apiKey, nonce + hostUrl);
}

/** Gateway data `data` object: sorted `name=value` of non-empty fields, key appended. */
export function gatewayDataSignature(data: Record<string, string | number | null>, apiKey: string): string {
  const asText: Record<string, SignableValue> = {};
  for (const [k, v] of Object.entries(data)) asText[k] = v === null ? null : String(v);
  return requestSignature(asText, apiKey);
}
