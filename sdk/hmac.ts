// The two primitives every signature check in the SDK is built on. Apart from signing.ts so that
// notification.ts and webhooks.ts can use them without importing the module that re-exports them.

import { createHmac, timingSafeEqual } from 'node:crypto';

/** HMAC-SHA256 of a UTF-8 message, as 64 lowercase hex characters (the spec's signature format). */
export function hmacSha256Hex(key: string | Uint8Array, message: string): string {
  return createHmac('sha256', key).update(message, 'utf8').digest('hex');
}

const HEX_SIGNATURE = /^[0-9a-fA-F]{64}$/;

/** True when `value` has the shape of a spec signature: 64 hexadecimal digits, either case. */
export function isHexSignature(value: unknown): value is string {
  return typeof value === 'string' && HEX_SIGNATURE.test(value);
}

/**
 * Constant-time comparison of a received hex signature with the one we compute.
 * Both sides are decoded to 32 bytes first, so timingSafeEqual always sees equal lengths and
 * the shape check (not the secret-dependent comparison) is what rejects junk.
 */
export function signatureMatches(received: unknown, apiKey: string | Uint8Array, message: string): boolean {
  if (!isHexSignature(received)) return false;
  const expected = Buffer.from(hmacSha256Hex(apiKey, message), 'hex');
  return timingSafeEqual(expected, Buffer.from(received, 'hex'));
}
