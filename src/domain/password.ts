import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

// Console passwords, hashed with scrypt (memory-hard, in node:crypto). The parameters are kept in
// the hash, so they can be raised later and old hashes still verify (and are rehashed at sign-in).
// N = 2^16, r = 8, p = 1: 64 MiB and about a tenth of a second per hash on a small server; the
// login throttle bounds how many an attacker can make us compute (docs/decisions.md).

export const SCRYPT_PARAMS = { N: 2 ** 16, r: 8, p: 1 } as const;
const KEY_BYTES = 32;

function derive(password: string, salt: Buffer, params: { N: number; r: number; p: number }): Promise<Buffer> {
  const options: ScryptOptions = { ...params, maxmem: 256 * params.N * params.r + 1024 * 1024 };
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, KEY_BYTES, options, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** `scrypt$N$r$p$salt$hash` (salt and hash base64). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, SCRYPT_PARAMS);
  return `scrypt$${SCRYPT_PARAMS.N}$${SCRYPT_PARAMS.r}$${SCRYPT_PARAMS.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [N, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  if (![N, r, p].every((v) => Number.isSafeInteger(v) && v > 0)) return false;
  const expected = Buffer.from(parts[5], 'base64');
  const key = await derive(password, Buffer.from(parts[4], 'base64'), { N, r, p });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** Whether a hash was made with weaker parameters than today's (rehash it at the next sign-in). */
export function needsRehash(stored: string): boolean {
  const [kind, N, r, p] = stored.split('$');
  return kind !== 'scrypt' || Number(N) < SCRYPT_PARAMS.N || Number(r) < SCRYPT_PARAMS.r || Number(p) < SCRYPT_PARAMS.p;
}

/**
 * A hash of a password nobody has, computed when the email is unknown, so that a sign-in with an
 * unknown email takes as long as one with a wrong password (no list of users by timing).
 */
let decoy: Promise<string> | undefined;
export function decoyHash(): Promise<string> {
  decoy ??= hashPassword(randomBytes(18).toString('base64'));
  return decoy;
}
