import { randomBytes } from 'node:crypto';

/**
 * Random hex tokens cut from a pool of crypto-random bytes: one `randomBytes` call per POOL_SIZE
 * bytes instead of one per token, which was a visible part of a create's CPU (docs/design/nonces.md).
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
 * An order's nonce: 32 lowercase hex characters, the creation millisecond (11) then 84 random bits
 * (21). Nonces made close together sort together, so the nonce index takes each new one on the
 * page it has just written instead of a random page (a page read, and a page written to the log
 * at commit, for nearly every create). A second was too coarse: the several thousand nonces of one
 * second spread over a hundred pages, and a batch of creates dirtied a page each. 84 random bits
 * cannot be guessed; the millisecond they reveal is the order's creation time, which whoever holds
 * the nonce knows anyway. 11 hex characters of milliseconds last until the year 2527.
 */
export function orderNonce(now: number): string {
  return noncePrefix(now) + randomHex(11).slice(1);
}

/**
 * The first 11 characters of the nonces made at millisecond `at`: every nonce made before `at`
 * sorts before it, and every nonce made at or after it does not (retention sweeps by this).
 */
export function noncePrefix(at: number): string {
  return Math.floor(at).toString(16).padStart(11, '0').slice(-11);
}
