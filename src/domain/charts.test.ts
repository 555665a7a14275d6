import { describe, expect, it } from 'vitest';
import { chartFigures, DAY_MS, niceCeiling, windowDays } from './charts.js';

describe('chart figures', () => {
  const from = Date.UTC(2026, 10, 1, 13);
  const days = windowDays(from, from + 3 * DAY_MS);
  const d0 = Date.UTC(2026, 10, 1);

  it('has one day per UTC day of the window, from its first midnight', () => {
    expect(days).toEqual([d0, d0 + DAY_MS, d0 + 2 * DAY_MS, d0 + 3 * DAY_MS]);
  });

  it('adds one currency (and method) per day: volume, refunds, created, paid, ended; the totals with net', () => {
    const f = chartFigures(
      days,
      {
        created: [
          { day: d0, currency: 'NZD', payment_method: 'alipay', status: 'paid', count: 3, amount: 300 },
          { day: d0, currency: 'NZD', payment_method: 'alipay', status: 'failed', count: 1, amount: 50 },
          { day: d0, currency: 'NZD', payment_method: 'alipay', status: 'pending', count: 2, amount: 70 },
          { day: d0, currency: 'NZD', payment_method: 'wechat', status: 'paid', count: 1, amount: 10 },
          { day: d0, currency: 'AUD', payment_method: 'alipay', status: 'paid', count: 9, amount: 900 },
        ],
        paid: [
          { day: d0 + DAY_MS, currency: 'NZD', payment_method: 'alipay', count: 3, amount: 300 },
          { day: d0 + DAY_MS, currency: 'NZD', payment_method: 'wechat', count: 1, amount: 10 },
        ],
        refunded: [{ day: d0 + 2 * DAY_MS, currency: 'NZD', payment_method: 'alipay', count: 1, amount: 120 }],
      },
      { currency: 'NZD', payment_method: 'alipay' },
    );
    expect(f.days[0]).toEqual({ day: d0, volume: 0, refunds: 0, created: 6, paid: 3, ended: 4 });
    expect(f.days[1].volume).toBe(300);
    expect(f.days[2].refunds).toBe(120);
    expect(f.totals).toEqual({ volume: 300, refunds: 120, net: 180, created: 6, paid: 3, ended: 4 });
  });

  it('rounds an axis up to 1, 2 or 5 times a power of ten', () => {
    expect([0, 1, 7, 12, 20, 21, 480, 501, 99_999].map(niceCeiling)).toEqual([
      1, 1, 10, 20, 20, 50, 500, 1000, 100_000,
    ]);
  });
});
