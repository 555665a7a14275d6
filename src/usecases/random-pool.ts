import { randomBytes } from 'node:crypto';

/**
 * Random hex tokens cut from a pool of crypto-random bytes: one `randomBytes` call per POOL_SIZE
 * bytes instead of one per token (per create, `randomBytes(16)` was 4 % of the gateway's CPU).
 * Each byte of the pool is handed out once; a new pool is drawn when the current one runs out.
 * The pool lives in this process's memory only, like the bytes of a single randomBytes call.
 */
const POOL_SIZE = 4096;

let pool = Buffer.alloc(0);
let offset = 0;

/** `bytes` fresh random bytes as 2 x bytes lowercase hex characters. */
export function randomHex(bytes: number): string {
  if (bytes > POOL_SIZE) return randomBytes(bytes).toString('hex');
  if (offset + bytes > pool.length) {
    pool = randomBytes(POOL_SIZE);
    offset = 0;
  }
  const hex = pool.toString('hex', offset, offset + bytes);
  offset += bytes;
  return hex;
}

/**
 * An order's nonce: 32 lowercase hex characters, the creation second (8) then 96 random bits (24).
 * Nonces made close together sort together, so the nonce index takes each new one on the same few
 * pages instead of a random page of a large index (a page read, and a page written to the log at
 * commit, for nearly every create). 96 random bits cannot be guessed; the second they reveal is
 * the order's creation time, which whoever holds the nonce knows anyway.
 */
export function orderNonce(now: number): string {
  return Math.floor(now / 1000).toString(16).padStart(8, '0').slice(-8) + randomHex(12);
}
