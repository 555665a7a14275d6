import { describe, expect, it } from 'vitest';
import { probeOutcome, refundState, tradeState, utf8Prefix } from './transformers.js';

describe('gateway channel test against WeChat Pay (probeOutcome)', () => {
  const notFound = { kind: 'error' as const, status: 404, code: 'ORDER_NOT_EXIST', message: '订单不存在' };

  it('passes on the signed 404 of an order that does not exist: the keys and the endpoint are proven', () => {
    expect(probeOutcome({ ...notFound, signed: true })).toMatchObject({ ok: true });
  });

  it('passes on an unsigned ORDER_NOT_EXIST, saying the platform key is not checked by it; another unsigned 404 fails', () => {
    expect(probeOutcome({ ...notFound, signed: false })).toMatchObject({
      ok: true,
      detail: expect.stringMatching(
        /no signature, so the platform public key is checked by the first payment's answer/,
      ),
    });
    expect(
      probeOutcome({ kind: 'error', status: 404, code: 'NOT_FOUND', message: 'no such path', signed: false }),
    ).toMatchObject({ ok: false, reason: expect.stringMatching(/404 NOT_FOUND/) });
  });

  it('fails on another refusal (a bad Authorization) and on no answer', () => {
    expect(
      probeOutcome({ kind: 'error', status: 401, code: 'SIGN_ERROR', message: 'bad', signed: true }),
    ).toMatchObject({ ok: false, reason: expect.stringMatching(/401 SIGN_ERROR/) });
    expect(probeOutcome({ kind: 'unknown', reason: 'no answer within 500 ms' })).toEqual({
      ok: false,
      reason: 'no answer within 500 ms',
    });
  });
});

describe('WeChat Pay refunds (refundState, refundBody)', () => {
  it("a closed refund is refused under either API's name (CLOSED, cross-border REFUNDCLOSE); an unknown status is unknown", () => {
    expect(refundState({ status: 'CLOSED' })).toMatchObject({ kind: 'refused' });
    expect(refundState({ status: 'REFUNDCLOSE' })).toMatchObject({ kind: 'refused' });
    expect(refundState({ status: 'SUCCESS' })).toEqual({ kind: 'succeeded' });
    expect(refundState({ status: 'SOMETHING_NEW' })).toMatchObject({ kind: 'unknown' });
  });

  it('cuts a reason to 80 bytes of UTF-8 on a character boundary (WeChat Pay counts bytes)', () => {
    expect(utf8Prefix('a'.repeat(100), 80)).toBe('a'.repeat(80));
    // 3 bytes a character: 26 fit in 80 bytes, never half of one.
    expect(utf8Prefix('退'.repeat(40), 80)).toBe('退'.repeat(26));
    expect(utf8Prefix('ab😀c', 5)).toBe('ab');
    expect(Buffer.byteLength(utf8Prefix('x退'.repeat(40), 80))).toBeLessThanOrEqual(80);
  });
});

describe('WeChat Pay order numbers (tradeState)', () => {
  const paid = { trade_state: 'SUCCESS', amount: { total: 100, currency: 'CNY' } };
  it("takes transaction_id, or the cross-border API's id", () => {
    expect(tradeState({ ...paid, transaction_id: '4200001' })).toMatchObject({ kind: 'paid', provider_ref: '4200001' });
    expect(tradeState({ ...paid, id: '4200002' })).toMatchObject({ kind: 'paid', provider_ref: '4200002' });
  });
});
