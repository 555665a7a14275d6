import { describe, expect, it } from 'vitest';
import {
  beijingTime,
  dateIn,
  dayIn,
  timeIn,
  dueStatementDates,
  matchPaymentLine,
  matchRefundLine,
  statementAmount,
  type KnownPayment,
  type StatementLine,
} from './reconciliation.js';

const line = (over: Partial<StatementLine> = {}): StatementLine => ({
  line_no: 1,
  kind: 'payment',
  provider_ref: 'T1',
  out_trade_no: 'O1',
  refund_id: null,
  amount: 1000,
  currency: 'CNY',
  fee: 6,
  occurred_at: 0,
  status: 'SUCCESS',
  ...over,
});
const known = (over: Partial<KnownPayment> = {}): KnownPayment => ({
  order_id: 'O1',
  order_status: 'paid',
  charged_amount: 1000,
  charged_currency: 'CNY',
  paid_this: true,
  paid_other: false,
  ...over,
});

describe('reconciliation rules', () => {
  it('a payment line: unknown, another amount or currency, pending (ask), paid by another payment, paid after the end', () => {
    expect(matchPaymentLine(line(), undefined)).toMatchObject({ kind: 'exception', exception: 'unknown_payment' });
    expect(matchPaymentLine(line({ amount: 1001 }), known())).toMatchObject({ exception: 'amount_mismatch' });
    expect(matchPaymentLine(line({ currency: 'NZD' }), known())).toMatchObject({ exception: 'amount_mismatch' });
    expect(matchPaymentLine(line(), known({ order_status: 'pending', paid_this: false }))).toEqual({ kind: 'ask' });
    expect(matchPaymentLine(line(), known())).toEqual({ kind: 'matched' });
    expect(matchPaymentLine(line(), known({ paid_this: false, paid_other: true }))).toMatchObject({
      exception: 'duplicate_payment',
    });
    expect(matchPaymentLine(line(), known({ order_status: 'canceled', paid_this: false }))).toMatchObject({
      exception: 'paid_after_end',
      detail: 'order O1 is canceled',
    });
  });

  it('a refund line: unknown, another amount, failed in the gateway (urgent), pending (ask), made', () => {
    const refund = line({ kind: 'refund', refund_id: 'R1', amount: 500 });
    const r = {
      refund_id: 'R1',
      order_id: 'O1',
      refund_status: 'succeeded' as const,
      channel_amount: 500,
      charged_currency: 'CNY',
    };
    expect(matchRefundLine(refund, undefined)).toMatchObject({ exception: 'unknown_refund' });
    expect(matchRefundLine(refund, { ...r, channel_amount: 400 })).toMatchObject({ exception: 'amount_mismatch' });
    expect(matchRefundLine(refund, { ...r, refund_status: 'failed' })).toMatchObject({
      exception: 'refund_status_mismatch',
    });
    expect(matchRefundLine(refund, { ...r, refund_status: 'pending' })).toEqual({ kind: 'ask' });
    expect(matchRefundLine(refund, r)).toEqual({ kind: 'matched' });
  });

  it("amounts keep their sign and round the providers' extra decimals half up; times are Beijing's", () => {
    expect(statementAmount('-0.01', 2, 'x')).toBe(-1);
    expect(statementAmount('0.60000', 2, 'x')).toBe(60);
    expect(statementAmount('0.00500', 2, 'x')).toBe(1);
    expect(statementAmount('0.00499', 2, 'x')).toBe(0);
    expect(statementAmount('-0.83598', 2, 'x')).toBe(-84);
    expect(statementAmount('45.0', 2, 'x')).toBe(4500);
    expect(() => statementAmount('1,000.00', 2, 'x')).toThrow(/x is not an amount/);
    expect(beijingTime('2026-11-30 00:00:00', 't')).toBe(Date.UTC(2026, 10, 29, 16));
    expect(() => beijingTime('2026-11-30T00:00:00', 't')).toThrow(/not a time/);
  });

  it("a provider's day in its own zone, daylight saving included", () => {
    expect(dayIn('2026-11-30', 'Asia/Shanghai')).toEqual({
      from: Date.UTC(2026, 10, 29, 16),
      to: Date.UTC(2026, 10, 30, 16),
    });
    // New Zealand's summer (+13:00): the day starts at 11:00 UTC the day before.
    expect(dayIn('2026-11-30', 'Pacific/Auckland').from).toBe(Date.UTC(2026, 10, 29, 11));
    // The day its clocks go forward (27 September 2026, 02:00 -> 03:00) has 23 hours; back (5 April), 25.
    const spring = dayIn('2026-09-27', 'Pacific/Auckland');
    expect(spring.from).toBe(Date.UTC(2026, 8, 26, 12));
    expect(spring.to - spring.from).toBe(23 * 3600_000);
    const autumn = dayIn('2026-04-05', 'Pacific/Auckland');
    expect(autumn.to - autumn.from).toBe(25 * 3600_000);
    expect(dayIn('2026-06-01', 'UTC')).toEqual({ from: Date.UTC(2026, 5, 1), to: Date.UTC(2026, 5, 2) });
    expect(dateIn(Date.UTC(2026, 10, 29, 11), 'Pacific/Auckland')).toBe('2026-11-30');
    expect(dateIn(Date.UTC(2026, 10, 29, 10, 59, 59, 999), 'Pacific/Auckland')).toBe('2026-11-29');
    expect(dateIn(Date.UTC(2026, 10, 29, 13), 'Australia/Sydney')).toBe('2026-11-30');
    expect(timeIn('2026-11-30T09:15:02.25', 'Pacific/Auckland', 't')).toBe(Date.UTC(2026, 10, 29, 20, 15, 2, 250));
    expect(timeIn('2026-11-30 09:15:02', 'Asia/Shanghai', 't')).toBe(Date.UTC(2026, 10, 30, 1, 15, 2));
    expect(timeIn('2026-11-30T09:15:02+11', 'Pacific/Auckland', 't')).toBe(Date.UTC(2026, 10, 29, 22, 15, 2));
    expect(timeIn('2026-11-30T09:15:02.5Z', 'Pacific/Auckland', 't')).toBe(Date.UTC(2026, 10, 30, 9, 15, 2, 500));
    expect(() => timeIn('30/11/2026 09:15', 'UTC', 'EndDateTime')).toThrow(/EndDateTime is not a time/);
  });

  it("the days due: the provider's yesterday once published, and the days before it", () => {
    const beijing = { timeZone: 'Asia/Shanghai', publishedAfterMs: 10 * 3600_000 };
    // 09:59 in Beijing on 30 November: the 29th is not published yet.
    expect(dueStatementDates(Date.UTC(2026, 10, 30, 1, 59), beijing)).toEqual(['2026-11-27', '2026-11-28']);
    // 10:00: it is.
    expect(dueStatementDates(Date.UTC(2026, 10, 30, 2, 0), beijing)).toEqual([
      '2026-11-27',
      '2026-11-28',
      '2026-11-29',
    ]);
    // 23:30 UTC on the 29th is already the 30th in Beijing.
    expect(dueStatementDates(Date.UTC(2026, 10, 29, 23, 30), beijing, 1)).toEqual([]);
    expect(dueStatementDates(Date.UTC(2026, 10, 30, 2, 0), beijing, 1)).toEqual(['2026-11-29']);
  });
});
