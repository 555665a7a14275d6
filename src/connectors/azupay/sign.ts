import { createHmac, timingSafeEqual } from 'node:crypto';

// Azupay's webhook carries, as its Authorization header, the value the gateway gave the payment
// request when it made it; Azupay recommends one per request. The gateway's is an HMAC of the
// request's clientTransactionId under the account's API key: one per request, never the key
// itself, and nothing to store, since it is made again to check a webhook.

export function notificationAuthorization(apiKey: string, clientTransactionId: string): string {
  return createHmac('sha256', Buffer.from(apiKey, 'utf8'))
    .update(`azupay-payment-notification:${clientTransactionId}`, 'utf8')
    .digest('base64url');
}

/** Whether a webhook's Authorization is the one made for its payment request, compared in constant time. */
export function notificationAuthorized(given: string, apiKey: string, clientTransactionId: string): boolean {
  const expected = Buffer.from(notificationAuthorization(apiKey, clientTransactionId), 'utf8');
  const actual = Buffer.from(given, 'utf8');
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
