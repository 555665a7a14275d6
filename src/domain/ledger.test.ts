import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { feeOf, percentOf, refundedFee, type FeePlanTerms } from './fees.js';
import {
  CONVERSION,
  entryProblem,
  FEE_REVENUE,
  netLines,
  paymentEntry,
  providerAccount,
  shownBalance,
  walletAccount,
  type LedgerLine,
} from './ledger.js';

const terms = (t: Partial<FeePlanTerms> = {}): FeePlanTerms => ({
  basis_points: 0,
  fixed: 0,
  minimum: null,
  maximum: null,
  refund_fee: 'none',
  ...t,
});

describe('fees', () => {
  it('a percentage is rounded half up, in minor units', () => {
    expect(percentOf(12000, 250)).toBe(300);
    expect(percentOf(1, 5000)).toBe(1); // 0.5 rounds up
    expect(percentOf(1, 4999)).toBe(0);
    expect(percentOf(999_999_999_999_99, 10_000)).toBe(999_999_999_999_99);
  });

  it('percentage plus fixed, within the minimum and the maximum, never above the amount', () => {
    expect(feeOf(terms({ basis_points: 250, fixed: 30 }), 12000)).toBe(330);
    expect(feeOf(terms({ basis_points: 100, minimum: 50 }), 1000)).toBe(50);
    expect(feeOf(terms({ basis_points: 1000, maximum: 5000 }), 1_000_000)).toBe(5000);
    expect(feeOf(terms({ fixed: 500 }), 100)).toBe(100);
  });

  it('a refund gives back the fee pro rata, and parts add up to the whole fee, a failed part between them too', () => {
    const order = { amount: 10000, fee: 333 };
    expect(refundedFee('none', order, 10000, 0)).toBe(0);
    let refunded = 0;
    let back = 0;
    for (const p of [3333, 3333, 3334]) {
      refunded += p;
      back += refundedFee('pro_rata', order, refunded, back);
    }
    expect(back).toBe(333);
    // 5001 refunded (back 167), 4999 more (back 166), the first fails (167 returned), 5001 again.
    const first = refundedFee('pro_rata', order, 5001, 0);
    const second = refundedFee('pro_rata', order, 10000, first);
    const again = refundedFee('pro_rata', order, 10000, second);
    expect(second + again).toBe(333);
  });
});

describe('the ledger', () => {
  const payment = {
    order_id: '2026112900000001',
    wallet_id: 'W1',
    amount: 12000,
    currency: 'NZD',
    charged: { amount: 12000, currency: 'NZD' },
    provider: 'poli',
    fee: 330,
    created_at: 1,
  };

  it('a payment: the provider owes the charge, the merchant is owed the net, pending, the operator the fee', () => {
    const e = paymentEntry(payment);
    expect(entryProblem(e)).toBeUndefined();
    expect(e.entry_key).toBe('payment:2026112900000001');
    expect(e.lines).toEqual([
      { account: providerAccount('poli', 'W1'), currency: 'NZD', amount: 12000 },
      { account: walletAccount('W1', 'pending'), currency: 'NZD', amount: -11670 },
      { account: FEE_REVENUE, currency: 'NZD', amount: -330 },
    ]);
    expect(shownBalance(walletAccount('W1', 'pending'), -11670)).toBe(11670);
  });

  it('a domestic payment records the CNY the provider charged and the NZD owed, each side balanced', () => {
    const e = paymentEntry({ ...payment, charged: { amount: 55732, currency: 'CNY' }, provider: 'alipay' });
    expect(entryProblem(e)).toBeUndefined();
    expect(e.lines).toContainEqual({ account: CONVERSION, currency: 'CNY', amount: -55732 });
    expect(e.lines).toContainEqual({ account: CONVERSION, currency: 'NZD', amount: 12000 });
    expect(e.lines).toContainEqual({ account: providerAccount('alipay', 'W1'), currency: 'CNY', amount: 55732 });
  });

  it('refuses an entry that does not balance, a zero or fractional line, or a single line', () => {
    const ok: LedgerLine[] = [
      { account: 'a', currency: 'NZD', amount: 5 },
      { account: 'b', currency: 'NZD', amount: -5 },
    ];
    expect(entryProblem({ entry_key: 'k', lines: ok })).toBeUndefined();
    expect(entryProblem({ entry_key: 'k', lines: [ok[0], { ...ok[1], amount: -4 }] })).toMatch(
      /does not balance in NZD/,
    );
    expect(entryProblem({ entry_key: 'k', lines: [ok[0], { ...ok[1], currency: 'AUD' }] })).toMatch(/does not balance/);
    expect(entryProblem({ entry_key: 'k', lines: [ok[0], { ...ok[1], amount: -4.5 }] })).toMatch(/whole/);
    expect(entryProblem({ entry_key: 'k', lines: [ok[0]] })).toMatch(/at least two/);
  });

  it('every payment entry balances, and the merchant and the operator share the amount exactly (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1e12 }),
        fc.integer({ min: 0, max: 10_000 }),
        fc.integer({ min: 0, max: 10_000 }),
        fc.option(fc.integer({ min: 1, max: 1e12 })),
        (amount, bps, fixed, cny) => {
          const fee = feeOf(terms({ basis_points: bps, fixed }), amount);
          const e = paymentEntry({
            ...payment,
            amount,
            fee,
            charged: cny === null ? { amount, currency: 'NZD' } : { amount: cny, currency: 'CNY' },
          });
          expect(entryProblem(e)).toBeUndefined();
          const nzd = netLines(e.lines.filter((l) => l.currency === 'NZD' && l.account !== CONVERSION));
          const owed = nzd.filter((l) => l.amount < 0).reduce((s, l) => s - l.amount, 0);
          expect(owed).toBe(amount);
        },
      ),
    );
  });
});
