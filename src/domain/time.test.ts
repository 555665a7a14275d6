import { describe, expect, it } from 'vitest';
import { formatOrderId, formatPayTime, orderDate } from './time.js';

describe('UTC+08:00 times', () => {
  it('formats pay_time as YYYY-MM-DD HH:mm:ss, eight hours ahead of UTC', () => {
    expect(formatPayTime(Date.UTC(2020, 2, 29, 17, 41, 14))).toBe('2020-03-30 01:41:14');
    expect(formatPayTime(Date.UTC(2024, 5, 1, 0, 0, 0))).toBe('2024-06-01 08:00:00');
  });

  it('crosses the date boundary at 16:00 UTC', () => {
    expect(formatPayTime(Date.UTC(2020, 2, 29, 15, 59, 59))).toBe('2020-03-29 23:59:59');
    expect(formatPayTime(Date.UTC(2020, 2, 29, 16, 0, 0))).toBe('2020-03-30 00:00:00');
    expect(orderDate(Date.UTC(2020, 2, 29, 15, 59, 59))).toBe('20200329');
    expect(orderDate(Date.UTC(2020, 2, 29, 16, 0, 0))).toBe('20200330');
  });

  it('crosses month, year and leap-day boundaries', () => {
    expect(formatPayTime(Date.UTC(2019, 11, 31, 16, 0, 0))).toBe('2020-01-01 00:00:00');
    expect(formatPayTime(Date.UTC(2024, 1, 28, 16, 30, 0))).toBe('2024-02-29 00:30:00');
    expect(formatPayTime(Date.UTC(2023, 1, 28, 16, 30, 0))).toBe('2023-03-01 00:30:00');
  });

  it('drops milliseconds rather than rounding', () => {
    expect(formatPayTime(Date.UTC(2020, 2, 29, 17, 41, 14, 999))).toBe('2020-03-30 01:41:14');
  });

  it('gives each day its own date when asked in any order (the last day is remembered)', () => {
    const days = [
      Date.UTC(2020, 2, 29, 15, 59, 59),
      Date.UTC(2020, 2, 29, 16, 0, 0),
      Date.UTC(2020, 2, 29, 15, 0, 0),
      Date.UTC(2021, 0, 1),
    ];
    expect(days.map(orderDate)).toEqual(['20200329', '20200330', '20200329', '20210101']);
    expect(days.map(orderDate)).toEqual(['20200329', '20200330', '20200329', '20210101']);
  });

  it('agrees with Date#toISOString shifted by eight hours, for any millisecond and in any order', () => {
    const reference = (ms: number) => new Date(ms + 8 * 3600_000).toISOString().replace('T', ' ').slice(0, 19);
    const samples = [
      0,
      -1,
      1,
      86_399_999,
      -28_800_000,
      -28_800_001,
      Date.UTC(1969, 11, 31, 15, 59, 59, 999),
      Date.UTC(2099, 11, 31, 23, 59, 59, 999),
    ];
    let seed = 42;
    for (let i = 0; i < 2000; i++) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      samples.push(Date.UTC(2026, 0, 1) + (seed % 1000) * 86_400_000 + (seed % 86_400_000) - 500 * 86_400_000);
    }
    for (const ms of samples) {
      expect(formatPayTime(ms)).toBe(reference(ms));
      expect(orderDate(ms)).toBe(reference(ms).slice(0, 10).replaceAll('-', ''));
    }
  });

  it('builds order ids from the UTC+08:00 date and an 8-digit sequence', () => {
    expect(formatOrderId(Date.UTC(2020, 2, 29, 17, 41, 14), 1672)).toBe('2020033000001672');
    expect(formatOrderId(Date.UTC(2020, 2, 29, 15, 0, 0), 1)).toBe('2020032900000001');
    expect(formatOrderId(Date.UTC(2020, 2, 29, 17, 0, 0), 123456789)).toBe('20200330123456789');
  });
});
