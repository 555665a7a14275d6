// Standard Webhooks (https://www.standardwebhooks.com) signature verification.
//
// The gateway signs `${webhook-id}.${webhook-timestamp}.${rawBody}` with HMAC-SHA256 keyed with
// the wallet's api_key as UTF-8 bytes (not a base64 `whsec_` secret), so passing the api_key
// string as `secret` is what you normally want. A Standard Webhooks `whsec_...` secret from
// another sender must be decoded first: Buffer.from(secret.slice(6), 'base64').

import { createHmac, timingSafeEqual } from 'node:crypto';
import { checkPaymentResult } from './notification.js';
import { kindOf, passes, VerificationError } from './verification-error.js';

export interface WebhookHeaders {
  /** `webhook-id` header */
  id: unknown;
  /** `webhook-timestamp` header: Unix seconds */
  timestamp: unknown;
  /** `webhook-signature` header: space-separated `v1,<base64>` entries */
  signature: unknown;
}

export type WebhookSecret = string | Uint8Array;

export interface VerifyWebhookOptions {
  /** How far webhook-timestamp may be from now, either way; limits replay. Default 300. */
  toleranceSeconds?: number;
}

/** Picks the three headers from Node's `req.headers` (lower-case names) or a fetch `Headers`. */
export function webhookHeaders(headers: Record<string, unknown> | Headers): WebhookHeaders {
  const get = (name: string): unknown =>
    headers instanceof Headers ? (headers.get(name) ?? undefined) : headers[name];
  return { id: get('webhook-id'), timestamp: get('webhook-timestamp'), signature: get('webhook-signature') };
}

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
 * Verifies a Standard Webhooks request, or throws VerificationError saying what is wrong:
 * body_not_raw, missing_header / invalid_header (`err.header` names it), no_v1_signature,
 * no_matching_signature, timestamp_outside_tolerance (`err.ageSeconds`). The timestamp is
 * judged after the signature, so that error means an authentic request that is replayed or
 * meets a wrong clock.
 *
 * `rawBody` must be the exact bytes received. A body re-serialized from parsed JSON or form
 * fields will usually differ and fail: in Express use `express.raw()` / `express.text()`, in
 * Fastify a content-type parser with `parseAs: 'string'` or `'buffer'`.
 */
export function verifyWebhook(
  headers: WebhookHeaders,
  rawBody: string | Uint8Array,
  secret: WebhookSecret,
  options: VerifyWebhookOptions = {},
): { id: string; timestamp: number } {
  if (typeof rawBody !== 'string' && !(rawBody instanceof Uint8Array)) {
    throw new VerificationError(
      'body_not_raw',
      `The body given is ${kindOf(rawBody)}, ` +
        `not the raw request body: are you passing a parsed body? Pass the bytes as received ` +
        `(a Buffer or its text), before any JSON or form parsing.`,
    );
  }
  const id = headerText(headers.id, 'webhook-id');
  const timestamp = headerText(headers.timestamp, 'webhook-timestamp');
  const signature = headerText(headers.signature, 'webhook-signature');
  if (!/^\d{1,15}$/.test(timestamp)) {
    throw new VerificationError(
      'invalid_header',
      `webhook-timestamp is ${JSON.stringify(timestamp.slice(0, 40))}, not Unix seconds.`,
      { header: 'webhook-timestamp' },
    );
  }

  const v1 = signature
    .split(' ')
    .filter((entry) => entry.startsWith('v1,'))
    .map((entry) => Buffer.from(entry.slice(3), 'base64'));
  if (v1.length === 0) {
    throw new VerificationError(
      'no_v1_signature',
      'webhook-signature has no v1 entry (`v1,<base64>`); only v1 (HMAC-SHA256) is verified.',
      { header: 'webhook-signature' },
    );
  }

  const expected = createHmac('sha256', secretBytes(secret))
    .update(signedContent(id, timestamp, rawBody))
    .digest();
  // Check every entry (no early exit) so timing does not reveal which entry matched.
  let matched = false;
  for (const received of v1) {
    if (received.length === expected.length && timingSafeEqual(received, expected)) matched = true;
  }
  if (!matched) throw mismatch(rawBody, secret);

  const tolerance = options.toleranceSeconds ?? 300;
  const ageSeconds = Math.floor(Date.now() / 1000) - Number(timestamp);
  if (Math.abs(ageSeconds) > tolerance) {
    throw new VerificationError(
      'timestamp_outside_tolerance',
      `webhook-timestamp is ${Math.abs(ageSeconds)} s ${ageSeconds > 0 ? 'old' : 'in the future'}, ` +
        `beyond the ${tolerance} s tolerance by ${Math.abs(ageSeconds) - tolerance} s: a replayed ` +
        `request, or a clock that is off (check this server's NTP).`,
      { header: 'webhook-timestamp', ageSeconds },
    );
  }
  return { id, timestamp: Number(timestamp) };
}

/**
 * True when verifyWebhook accepts the request: one of the `v1` signatures matches and the
 * timestamp is within `toleranceSeconds` of now. Kept for callers that only need yes or no.
 */
export function verifyWebhookHeaders(
  headers: WebhookHeaders,
  rawBody: string | Uint8Array,
  secret: WebhookSecret,
  toleranceSeconds = 300,
): boolean {
  return passes(() => verifyWebhook(headers, rawBody, secret, { toleranceSeconds }));
}

function headerText(value: unknown, header: string): string {
  if (value === undefined || value === null || value === '') {
    throw new VerificationError(
      'missing_header',
      `The ${header} header is missing or empty: read the headers with webhookHeaders(req.headers), ` +
        `and check that no proxy strips them.`,
      { header },
    );
  }
  if (typeof value !== 'string') {
    throw new VerificationError(
      'invalid_header',
      `The ${header} header is ${Array.isArray(value) ? `repeated (${value.length} values)` : kindOf(value)}, not one text value.`,
      { header },
    );
  }
  return value;
}

// Only called once the signature failed, to tell re-encoding from a wrong secret or changed
// headers. `body_not_raw` is given only on evidence: text that is String() of an object, or a
// gateway notification that is not written the way the gateway writes it. The gateway's body is
// its fields form-encoded by URLSearchParams with `signature` last, and that signature (keyed with
// the same api_key) still verifies over the fields of a re-encoded body. So when it verifies but
// the text is JSON, encoded otherwise, or reordered, the key is right and these bytes cannot be
// the ones the gateway sent. A genuine body under changed headers keeps its form and so stays
// no_matching_signature; a re-encoding that happens to match the gateway's form is missed there.
function mismatch(rawBody: string | Uint8Array, secret: WebhookSecret): VerificationError {
  const text = typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody).toString('utf8');
  if (text === '[object Object]') {
    return new VerificationError(
      'body_not_raw',
      'The body given is an object turned into text, not the raw request body. Pass the bytes as received.',
    );
  }
  if (reencodedNotification(text, secret)) {
    return new VerificationError(
      'body_not_raw',
      'This is a gateway notification whose own signature field verifies with this secret, but ' +
        'it is not written as the gateway writes it (form-encoded, signature last): the body was ' +
        're-encoded (parsed and serialized again). Pass the raw request body exactly as received.',
    );
  }
  return new VerificationError(
    'no_matching_signature',
    "No v1 signature in webhook-signature matches: check that the secret is this wallet's " +
      'api_key (passed as the key itself), and that the body is the raw request body as received.',
    { header: 'webhook-signature' },
  );
}

function reencodedNotification(text: string, secret: WebhookSecret): boolean {
  let fields: unknown;
  if (text.trimStart().startsWith('{')) {
    try {
      fields = JSON.parse(text);
    } catch {
      return false;
    }
  } else {
    const form = new URLSearchParams(text);
    const asGatewayWrites = form.toString() === text && [...form.keys()].at(-1) === 'signature';
    if (asGatewayWrites) return false;
    fields = form;
  }
  return passes(() => checkPaymentResult(fields, secret, 'body'));
}
