// Standard Webhooks (https://www.standardwebhooks.com) signature verification.
//
// The gateway signs `${webhook-id}.${webhook-timestamp}.${rawBody}` with HMAC-SHA256 keyed with
// the wallet's api_key as UTF-8 bytes (not a base64 `whsec_` secret), so passing the api_key
// string as `secret` is what you normally want. A Standard Webhooks `whsec_...` secret from
// another sender must be decoded first: Buffer.from(secret.slice(6), 'base64').

import { createHmac, timingSafeEqual } from 'node:crypto';

export interface WebhookHeaders {
  /** `webhook-id` header */
  id: unknown;
  /** `webhook-timestamp` header: Unix seconds */
  timestamp: unknown;
  /** `webhook-signature` header: space-separated `v1,<base64>` entries */
  signature: unknown;
}

export type WebhookSecret = string | Uint8Array;

function secretBytes(secret: WebhookSecret): Buffer {
  return typeof secret === 'string' ? Buffer.from(secret, 'utf8') : Buffer.from(secret);
}

function signedContent(id: string, timestamp: string, rawBody: string | Uint8Array): Buffer {
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : Buffer.from(rawBody);
  return Buffer.concat([Buffer.from(`${id}.${timestamp}.`, 'utf8'), body]);
}

/** The `v1,<base64>` entry a sender puts in `webhook-signature`. Useful for tests. */
export function webhookSignature(
  id: string,
  timestamp: string,
  rawBody: string | Uint8Array,
  secret: WebhookSecret,
): string {
  const mac = createHmac('sha256', secretBytes(secret))
    .update(signedContent(id, timestamp, rawBody))
    .digest('base64');
  return `v1,${mac}`;
}

/**
 * True when one of the `v1` signatures matches and the timestamp is within
 * `toleranceSeconds` of now (either direction, which limits replay of captured requests).
 *
 * `rawBody` must be the exact bytes received. A body re-serialized from parsed JSON or form
 * fields will usually differ and fail: in Express use `express.raw()` / `express.text()`, in
 * Fastify a content-type parser with `parseAs: 'string'` or `'buffer'`.
 */
export function verifyWebhookHeaders(
  headers: WebhookHeaders,
  rawBody: string | Uint8Array,
  secret: WebhookSecret,
  toleranceSeconds = 300,
): boolean {
  const { id, timestamp, signature } = headers;
  if (typeof id !== 'string' || id === '') return false;
  if (typeof timestamp !== 'string' || !/^\d{1,15}$/.test(timestamp)) return false;
  if (typeof signature !== 'string') return false;
  if (typeof rawBody !== 'string' && !(rawBody instanceof Uint8Array)) return false;

  const nowSeconds = Math.floor(Date.now() / 1000);
  if (Math.abs(nowSeconds - Number(timestamp)) > toleranceSeconds) return false;

  const expected = createHmac('sha256', secretBytes(secret))
    .update(signedContent(id, timestamp, rawBody))
    .digest();

  // Check every entry (no early exit) so timing does not reveal which entry matched.
  let matched = false;
  for (const entry of signature.split(' ')) {
    const comma = entry.indexOf(',');
    if (comma < 0 || entry.slice(0, comma) !== 'v1') continue;
    const received = Buffer.from(entry.slice(comma + 1), 'base64');
    if (received.length !== expected.length) continue;
    if (timingSafeEqual(received, expected)) matched = true;
  }
  return matched;
}
