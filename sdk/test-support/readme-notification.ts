// Shared by the SDK's tests (not part of the package: sdk/tsconfig.json compiles sdk/*.ts only).
import { expect } from 'vitest';
import { VerificationError } from '../verification-error.js';

/** The notification body in docs/api.md (Result notifications), signed with api_key 7EE1. */
export const README_KEY = '7EE1';
export const README_BODY =
  'merchant_reference=22TEST&order_id=2020033000001672&currency=AUD&amount=0.01&amount_cny=0.05' +
  '&rate=5.000000&payment_method=alipay&status=paid&pay_time=2020-03-30+01%3A41%3A14' +
  '&signature=3cd65ddfb700684c5c2918f2a19cda0ba440859f6a1253f63cbdb82d462ac959';

/** The VerificationError `run` throws; fails the test if it throws nothing or something else. */
export function failure(run: () => unknown): VerificationError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(VerificationError);
    return err as VerificationError;
  }
  throw new Error('expected a VerificationError, nothing was thrown');
}
