import { describe, expect, it } from 'vitest';
import {
  DETAIL_METHOD_NAMES,
  MERCHANT_HOSTED_METHODS,
  PAYMENT_METHODS,
  STATUSES,
  canTransition,
  isFinal,
  isPaymentMethod,
  outcomeAllowed,
  type FinalStatus,
  type Status,
} from './transaction.js';

const ALLOWED: ReadonlyArray<[Status, Status]> = [
  ['pending', 'paid'],
  ['pending', 'failed'],
  ['pending', 'rejected'],
  ['pending', 'canceled'],
];

const FINAL: FinalStatus[] = ['paid', 'failed', 'rejected', 'canceled'];

describe('transitions', () => {
  const every = STATUSES.flatMap((from) => STATUSES.map((to) => [from, to] as [Status, Status]));

  it.each(every)('%s -> %s', (from, to) => {
    const allowed = ALLOWED.some(([f, t]) => f === from && t === to);
    expect(canTransition(from, to)).toBe(allowed);
  });

  it('pending is the only non-final status', () => {
    expect(isFinal('pending')).toBe(false);
    for (const s of FINAL) expect(isFinal(s)).toBe(true);
  });

  it('a pending order cannot go back to pending', () => {
    expect(canTransition('pending', 'pending')).toBe(false);
  });
});

describe('outcomes per method', () => {
  it.each(PAYMENT_METHODS)('%s may end paid, failed or canceled', (method) => {
    for (const to of ['paid', 'failed', 'canceled'] as const) expect(outcomeAllowed(method, to)).toBe(true);
  });

  it('only payid may be rejected', () => {
    for (const method of PAYMENT_METHODS) expect(outcomeAllowed(method, 'rejected')).toBe(method === 'payid');
  });
});

describe('payment methods', () => {
  it('are the seven hosted-checkout methods of the spec', () => {
    expect([...PAYMENT_METHODS].sort()).toEqual([
      'alipay',
      'coin_payments',
      'moneymore',
      'payid',
      'polipay',
      'upi_upop',
      'wechat',
    ]);
    for (const m of PAYMENT_METHODS) expect(isPaymentMethod(m)).toBe(true);
  });

  it('merchant-hosted QR offers alipay and wechat only', () => {
    expect([...MERCHANT_HOSTED_METHODS].sort()).toEqual(['alipay', 'wechat']);
  });

  it.each(['', 'Alipay', 'ALIPAY', 'onlineBank', 'card', ' alipay', 'toString', '__proto__'])(
    '%j is not a method',
    (m) => {
      expect(isPaymentMethod(m)).toBe(false);
    },
  );
});

describe('DETAIL_METHOD_NAMES', () => {
  it('names every method, and each name lower-cases to the method (the plugins send it back that way)', () => {
    expect(Object.keys(DETAIL_METHOD_NAMES).sort()).toEqual([...PAYMENT_METHODS].sort());
    for (const m of PAYMENT_METHODS) expect(DETAIL_METHOD_NAMES[m].trim().toLowerCase()).toBe(m);
    expect([DETAIL_METHOD_NAMES.alipay, DETAIL_METHOD_NAMES.wechat, DETAIL_METHOD_NAMES.moneymore]).toEqual([
      'Alipay',
      'Wechat',
      'MoneyMore',
    ]);
  });
});
