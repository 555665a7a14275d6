import { describe, expect, it } from 'vitest';
import { channelRefundAmount, chargeOf, nextCheckDelay, notifyAddress, outTradeNo } from './channel.js';

describe('provider payments', () => {
  it('each flow has its own out_trade_no', () => {
    expect(['qr', 'redirect', 'jsapi'].map((f) => outTradeNo('2026112400000001', f as 'qr'))).toEqual([
      '2026112400000001',
      '2026112400000001R',
      '2026112400000001J',
    ]);
  });

  it('a domestic account charges amount_cny in CNY; cross-border the order itself', () => {
    const order = { amount: 12000, currency: 'NZD', amount_cny: 55732 };
    expect(chargeOf(order, 'domestic')).toEqual({ amount: 55732, currency: 'CNY' });
    expect(chargeOf(order, 'cross-border')).toEqual({ amount: 12000, currency: 'NZD' });
    expect(chargeOf({ ...order, amount_cny: null }, 'domestic')).toBeUndefined();
    expect(chargeOf({ amount: 100, currency: 'CNY', amount_cny: null }, 'domestic')).toEqual({
      amount: 100,
      currency: 'CNY',
    });
  });

  it('partial refunds in another currency add up to the charge exactly when the order is refunded in full', () => {
    const order = { amount: 12000 };
    const charge = { amount: 55732, currency: 'CNY' };
    const parts = [3333, 3333, 3334, 2000];
    let before = 0;
    const mapped = parts.map((p) => {
      const m = channelRefundAmount(order, charge, before, p);
      before += p;
      return m;
    });
    expect(mapped.reduce((s, m) => s + m, 0)).toBe(55732);
    expect(mapped[0]).toBe(15480); // 3333 * 55732 / 12000 = 15479.6 -> 15480
    expect(channelRefundAmount(order, charge, 0, 12000)).toBe(55732);
    expect(channelRefundAmount(order, { amount: 12000, currency: 'NZD' }, 500, 700)).toBe(700);
  });

  it('a payment is asked about again less often as it ages', () => {
    expect(nextCheckDelay(0, 60_000)).toBe(60_000);
    expect(nextCheckDelay(30 * 60_000, 60_000)).toBe(5 * 60_000);
    expect(nextCheckDelay(5 * 3600_000, 60_000)).toBe(3600_000);
  });

  it('the notification address is per provider', () => {
    expect(notifyAddress('https://pay.example.com/', 'alipay')).toBe('https://pay.example.com/channels/alipay/notify');
  });
});
