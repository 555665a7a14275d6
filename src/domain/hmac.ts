import * as crypto from 'node:crypto';

// HMAC-SHA256 (RFC 2104) built from two one-shot hashes over the key's inner and outer pads,
// computed once per key, rather than createHmac, which sets the key up anew on every call; every
// query, create and refund computes two (docs/design/hmac.md). The result is HMAC-SHA256 exactly
// (hmac.test.ts compares it with createHmac for keys of every kind).

const BLOCK = 64;
/** Messages up to this many bytes are hashed from one scratch buffer; longer ones use createHmac. */
const SCRATCH_BYTES = 16 * 1024;
const MAX_KEYS = 10_000;

// crypto.hash is Node >= 20.12 (and 21.7); older 20.x computes every HMAC with createHmac.
const oneShot = typeof crypto.hash === 'function' ? crypto.hash : undefined;

interface Pads {
  inner: Buffer;
  outer: Buffer;
}
const padsByKey = new Map<string, Pads>();
const scratch = Buffer.alloc(SCRATCH_BYTES);
const outerInput = Buffer.alloc(BLOCK + 32);

function padsOf(key: string): Pads {
  let pads = padsByKey.get(key);
  if (pads) return pads;
  let k = Buffer.from(key, 'utf8');
  if (k.length > BLOCK) k = crypto.createHash('sha256').update(k).digest();
  const inner = Buffer.alloc(BLOCK, 0x36);
  const outer = Buffer.alloc(BLOCK, 0x5c);
  for (let i = 0; i < k.length; i++) {
    inner[i] ^= k[i];
    outer[i] ^= k[i];
  }
  // Keys are a handful per merchant; the bound only keeps a stream of made-up keys from growing the map.
  if (padsByKey.size >= MAX_KEYS) padsByKey.clear();
  pads = { inner, outer };
  padsByKey.set(key, pads);
  return pads;
}

/** HMAC-SHA256 of the message (as UTF-8) keyed with the key (as UTF-8): hex, or the 32 bytes as a binary string. */
export function hmacSha256(key: string, message: string, encoding: 'hex' | 'binary'): string {
  // Three bytes per UTF-16 code unit is the most UTF-8 can take, so the message surely fits.
  if (oneShot === undefined || message.length * 3 > SCRATCH_BYTES - BLOCK) {
    return crypto.createHmac('sha256', key).update(message, 'utf8').digest(encoding);
  }
  const pads = padsOf(key);
  pads.inner.copy(scratch, 0);
  const n = scratch.write(message, BLOCK, 'utf8');
  const innerHash = oneShot('sha256', scratch.subarray(0, BLOCK + n), 'binary');
  pads.outer.copy(outerInput, 0);
  outerInput.write(innerHash, BLOCK, 'latin1');
  return oneShot('sha256', outerInput, encoding);
}
