import { describe, expect, it } from 'vitest';
import { newTotpSecret, totpStep, totpUri } from './totp.js';

// RFC 6238 appendix B (SHA-1, secret "12345678901234567890"), the last 6 of its 8 digits.
const RFC_SECRET = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';

describe('totp', () => {
  it('accepts the RFC 6238 codes at their times, and the steps beside them', () => {
    expect(totpStep(RFC_SECRET, '287082', 59_000)).toBe(1);
    expect(totpStep(RFC_SECRET, '081804', 1_111_111_109_000)).toBe(37_037_036);
    expect(totpStep(RFC_SECRET, '081804', 1_111_111_109_000 + 30_000)).toBe(37_037_036);
    expect(totpStep(RFC_SECRET, '081804', 1_111_111_109_000 + 90_000)).toBeUndefined();
    expect(totpStep(RFC_SECRET, '81804', 1_111_111_109_000)).toBeUndefined();
  });
  it('makes 160-bit secrets and the URI apps read', () => {
    const s = newTotpSecret();
    expect(s).toMatch(/^[A-Z2-7]{32}$/);
    expect(totpUri(s, 'ops@example.com')).toBe(
      `otpauth://totp/Payment%20gateway:ops%40example.com?issuer=Payment%20gateway&secret=${s}&algorithm=SHA1&digits=6&period=30`,
    );
  });
});
