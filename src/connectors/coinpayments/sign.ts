import { createHmac, timingSafeEqual } from 'node:crypto';

// CoinPayments' request and webhook signature (its API's "Authentication" page; the official
// WooCommerce plugin signs the same way): base64 of HMAC-SHA256, keyed by the client secret as
// text, over a byte-order mark, the method, the whole URL as sent, the client id, the timestamp
// and the body as sent (nothing for a GET). Facts and sources: docs/providers/protocols/coinpayments.md.

/** X-CoinPayments-Timestamp: UTC, to the second, without a zone (`2024-07-01T11:04:10`). */
export function timestampOf(now: number): string {
  return new Date(now).toISOString().slice(0, 19);
}

export function signatureOf(
  secret: string,
  parts: { method: string; url: string; clientId: string; timestamp: string; body: string },
): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8'))
    .update(`\ufeff${parts.method}${parts.url}${parts.clientId}${parts.timestamp}${parts.body}`, 'utf8')
    .digest('base64');
}

/** Whether a webhook's signature is the one its secret makes, compared in constant time. */
export function signatureMatches(
  given: string,
  secret: string,
  parts: { method: string; url: string; clientId: string; timestamp: string; body: string },
): boolean {
  const expected = Buffer.from(signatureOf(secret, parts), 'utf8');
  const actual = Buffer.from(given, 'utf8');
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
