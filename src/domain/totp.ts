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
