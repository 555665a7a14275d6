import { describe, expect, it } from 'vitest';
import { probeOutcome } from './transformers.js';

describe('gateway channel test against WeChat Pay (probeOutcome)', () => {
  const notFound = { kind: 'error' as const, status: 404, code: 'ORDER_NOT_EXIST', message: '订单不存在' };

  it('passes on the signed 404 of an order that does not exist: the keys and the endpoint are proven', () => {
    expect(probeOutcome({ ...notFound, signed: true })).toMatchObject({ ok: true });
  });

  it('fails on an unsigned 404: a wrong endpoint or proxy answers that too, and the platform key is not checked', () => {
    expect(probeOutcome({ ...notFound, signed: false })).toMatchObject({ ok: false, reason: expect.stringMatching(/without a WeChat Pay signature/) });
  });

  it('fails on another refusal (a bad Authorization) and on no answer', () => {
    expect(probeOutcome({ kind: 'error', status: 401, code: 'SIGN_ERROR', message: 'bad', signed: true })).toMatchObject({ ok: false, reason: expect.stringMatching(/401 SIGN_ERROR/) });
    expect(probeOutcome({ kind: 'unknown', reason: 'no answer within 500 ms' })).toEqual({ ok: false, reason: 'no answer within 500 ms' });
  });
});
