import { createHash, randomBytes } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';

// Time-based one-time passwords (RFC 6238) as authenticator apps compute them: SHA-1, 6 digits,
// 30-second steps, through the otpauth library. Pure: the time is given.

const PERIOD_S = 30;
/** Codes of the step before and after are accepted too: a phone's clock may be a little off. */
const WINDOW = 1;

function totp(secretBase32: string, label = ''): TOTP {
  return new TOTP({
    issuer: 'Payment gateway',
    label,
    secret: Secret.fromBase32(secretBase32),
    algorithm: 'SHA1',
    digits: 6,
    period: PERIOD_S,
  });
}

/** A new secret (160 random bits), base32 as apps take it. */
export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

/** The otpauth:// URI an authenticator app reads from a QR code. */
export function totpUri(secretBase32: string, label: string): string {
  return totp(secretBase32, label).toString();
}

/** The step a code is valid for at `now` (within the window), or undefined. */
export function totpStep(secretBase32: string, code: string, now: number): number | undefined {
  if (!/^\d{6}$/.test(code)) return undefined;
  const delta = totp(secretBase32).validate({ token: code, timestamp: now, window: WINDOW });
  return delta === null ? undefined : Math.floor(now / 1000 / PERIOD_S) + delta;
}

/** How many recovery codes a user is given at a time. */
export const RECOVERY_CODES = 10;
// Without 0, O, 1, I, L: a code is read off paper.
const RECOVERY_ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';

/**
 * Recovery codes: each signs in once in place of a code from the authenticator (a lost phone).
 * Ten letters and digits of 31 (about 50 bits), written XXXXX-XXXXX.
 */
export function newRecoveryCodes(n = RECOVERY_CODES): string[] {
  return Array.from({ length: n }, () => {
    const bytes = randomBytes(10);
    const chars = [...bytes].map((b) => RECOVERY_ALPHABET[b % RECOVERY_ALPHABET.length]).join('');
    return `${chars.slice(0, 5)}-${chars.slice(5)}`;
  });
}

/** What is kept of a recovery code: a SHA-256 of it as typed in any case, with or without its dash and spaces. */
export function recoveryCodeHash(typed: string): string | undefined {
  const code = typed.toUpperCase().replace(/[\s-]/g, '');
  if (code.length !== 10 || [...code].some((c) => !RECOVERY_ALPHABET.includes(c))) return undefined;
  return createHash('sha256').update(code).digest('hex');
}
