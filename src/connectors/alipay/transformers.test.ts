import { describe, expect, it } from 'vitest';
import { cancelOutcome, precreateOutcome, tradeState } from './transformers.js';

const failure = (sub_code: string, code = '40004') => ({
  kind: 'failure' as const,
  code,
  sub_code,
  sub_msg: 'x',
  signed: true,
});

describe('Alipay trades (tradeState)', () => {
  it('reads total_amount in trans_currency when named, else in CNY (never in the currency the gateway asked for)', () => {
    const paid = { trade_status: 'TRADE_SUCCESS', trade_no: '2026', total_amount: '45.60' };
    expect(tradeState({ ...paid, trans_currency: 'AUD' })).toEqual({
      kind: 'paid',
      provider_ref: '2026',
      charge: { amount: 4560, currency: 'AUD' },
    });
    expect(tradeState(paid)).toEqual({ kind: 'paid', provider_ref: '2026', charge: { amount: 4560, currency: 'CNY' } });
    expect(tradeState({ ...paid, trans_currency: 'JPY', total_amount: '4560' })).toMatchObject({
      charge: { amount: 4560, currency: 'JPY' },
    });
  });
});

describe('Alipay outcomes that are not refusals', () => {
  it('a precreate answered ACQ.TRADE_HAS_SUCCESS (paid already) is unknown, to be asked about, not "nothing was charged"', () => {
    expect(precreateOutcome(failure('ACQ.TRADE_HAS_SUCCESS'))).toMatchObject({ kind: 'unknown' });
    expect(precreateOutcome(failure('ACQ.TRADE_HAS_CLOSE'))).toMatchObject({ kind: 'refused' });
  });

  it("cancel's system error (AQC.SYSTEM_ERROR, as its table spells it) is unknown, like ACQ.SYSTEM_ERROR", () => {
    expect(cancelOutcome(failure('AQC.SYSTEM_ERROR'))).toMatchObject({ kind: 'unknown' });
    expect(cancelOutcome(failure('ACQ.SYSTEM_ERROR'))).toMatchObject({ kind: 'unknown' });
    expect(cancelOutcome(failure('ACQ.SELLER_BALANCE_NOT_ENOUGH'))).toMatchObject({ kind: 'refused' });
  });

  it('a cancel that refunded a paid trade (action refund) is closed with a note for an operator', () => {
    const success = (body: Record<string, string>) => ({ kind: 'success' as const, body });
    expect(cancelOutcome(success({ action: 'close', retry_flag: 'N' }))).toEqual({ kind: 'closed' });
    expect(cancelOutcome(success({}))).toEqual({ kind: 'closed' });
    expect(cancelOutcome(success({ action: 'refund', retry_flag: 'N' }))).toEqual({
      kind: 'closed',
      note: expect.stringMatching(/refunded it to the customer/),
    });
    expect(cancelOutcome(success({ retry_flag: 'Y' }))).toMatchObject({ kind: 'unknown' });
  });
});
