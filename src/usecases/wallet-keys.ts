import { randomBytes } from 'node:crypto';
import type { Store } from '../ports/store.js';

// A wallet's API key: made, and rotated with an overlap window in which the key it replaces still
// verifies requests (domain/account.ts verifyingKeys), so that a merchant can deploy the new key
// without refused requests. A key that was exposed is rotated with no overlap.

/** The overlap window when none is chosen. */
export const KEY_OVERLAP_MS = 24 * 3600_000;
/** The longest overlap window that may be chosen. */
export const MAX_KEY_OVERLAP_MS = 7 * 24 * 3600_000;

export function newApiKey(): string {
  return randomBytes(16).toString('hex').toUpperCase();
}

export interface RotatedKey {
  wallet_id: string;
  api_key: string;
  /** When the replaced key stops verifying; null when it stopped at once. */
  previous_key_expires_at: number | null;
}

/** Rotates the wallet's key (only if it is still `replacing`, when given); undefined when there is no such wallet, or its key is another. */
export async function rotateWalletKey(
  store: Store,
  now: number,
  wallet_id: string,
  overlapMs: number = KEY_OVERLAP_MS,
  replacing?: string,
): Promise<RotatedKey | undefined> {
  if (!Number.isSafeInteger(overlapMs) || overlapMs < 0 || overlapMs > MAX_KEY_OVERLAP_MS)
    throw new RangeError(`the overlap must be between 0 and ${MAX_KEY_OVERLAP_MS / 3600_000} hours`);
  const api_key = newApiKey();
  const previous_key_expires_at = overlapMs === 0 ? null : now + overlapMs;
  if (!(await store.accounts.rotateApiKey(wallet_id, api_key, previous_key_expires_at, replacing))) return undefined;
  return { wallet_id, api_key, previous_key_expires_at };
}
