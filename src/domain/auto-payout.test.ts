import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { autoPayoutAmount, autoPayoutDay, autoPayoutProblem } from './auto-payout.js';
import { feeOf, type FeePlanTerms } from './fees.js';

describe('automatic payout', () => {
  const plan = (t: Partial<FeePlanTerms>): FeePlanTerms => ({
    basis_points: 0,
    fixed: 0,
    minimum: null,
    maximum: null,
    refund_fee: 'none',
    ...t,
  });

  it('pays nothing at or below the trigger, everything above the float without a fee', () => {
    expect(autoPayoutAmount(10_000, { above: 10_000, keep: 0 }, () => 0)).toBeUndefined();
    expect(autoPayoutAmount(10_001, { above: 10_000, keep: 0 }, () => 0)).toEqual({ amount: 10_001, fee: 0 });
    expect(autoPayoutAmount(10_001, { above: 10_000, keep: 2_000 }, () => 0)).toEqual({ amount: 8_001, fee: 0 });
    // The fee would take all of it: nothing.
    expect(autoPayoutAmount(101, { above: 100, keep: 100 }, () => 50)).toBeUndefined();
  });

  it('the largest amount whose fee fits beside it, for any plan', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10_000_000 }),
        fc.integer({ min: 0, max: 1_000_000 }),
        fc.integer({ min: 0, max: 1_000_000 }),
        fc.integer({ min: 0, max: 1_000 }),
        fc.integer({ min: 0, max: 5_000 }),
        fc.option(fc.integer({ min: 0, max: 5_000 })),
        (available, above, keepShare, basis_points, fixed, minimum) => {
          const keep = Math.min(above, keepShare);
          const terms = plan({ basis_points, fixed, minimum });
          const fee = (a: number) => feeOf(terms, a);
          const got = autoPayoutAmount(available, { above, keep }, fee);
          const budget = available - keep;
          if (available <= above || !got) {
            if (available <= above) expect(got).toBeUndefined();
            else expect(1 + fee(1)).toBeGreaterThan(budget);
            return;
          }
          expect(got.fee).toBe(fee(got.amount));
          expect(got.amount + got.fee).toBeLessThanOrEqual(budget);
          expect(got.amount + 1 + fee(got.amount + 1)).toBeGreaterThan(budget);
        },
      ),
    );
  });

  it('settings: keep at most the trigger, nothing negative; a day is the UTC day', () => {
    expect(autoPayoutProblem({ above: 100, keep: 101 })).toMatch(/--keep/);
    expect(autoPayoutProblem({ above: -1, keep: 0 })).toMatch(/negative/);
    expect(autoPayoutProblem({ above: 100, keep: 100 })).toBeUndefined();
    expect(autoPayoutDay(Date.UTC(2026, 10, 29, 23, 59))).toBe(Date.UTC(2026, 10, 29));
  });
});
