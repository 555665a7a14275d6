import { describe, expect, it } from 'vitest';
import { judgeRefusal, type StandingRefund } from './refund.js';

const r = (
  refund_amount: number,
  refund_status: StandingRefund['refund_status'],
  dedupe_key: string | null = `k${refund_amount}${refund_status}`,
): StandingRefund => ({
  refund_amount,
  refund_status,
  dedupe_key: refund_status === 'failed' ? null : dedupe_key,
});
const WANTED = { refund_amount: 6000, dedupe_key: 'O|6000|b' };

describe('judgeRefusal', () => {
  it('insufficient even if every pending refund failed: 550 with what is left now', () => {
    expect(judgeRefusal('insufficient', WANTED, 10000, [r(5000, 'succeeded'), r(2000, 'pending')])).toEqual({
      kind: 'insufficient',
      left: 3000,
    });
    expect(judgeRefusal('insufficient', WANTED, 10000, [r(4001, 'succeeded')])).toEqual({
      kind: 'insufficient',
      left: 5999,
    });
  });

  it('it would fit without the pending ones: wait for them, never 550', () => {
    expect(judgeRefusal('insufficient', WANTED, 10000, [r(6000, 'pending', 'O|6000|a')])).toEqual({
      kind: 'wait',
      duplicate: false,
    });
    expect(
      judgeRefusal('insufficient', WANTED, 10000, [r(4000, 'succeeded'), r(1, 'pending'), r(9000, 'failed')]),
    ).toEqual({ kind: 'wait', duplicate: false });
  });

  it('exactly the amount fits', () => {
    expect(judgeRefusal('insufficient', WANTED, 10000, [r(4000, 'succeeded'), r(100, 'pending')])).toEqual({
      kind: 'wait',
      duplicate: false,
    });
  });

  it('nothing stands in the way any more (the refusal was overtaken): retry', () => {
    expect(judgeRefusal('insufficient', WANTED, 10000, [r(9000, 'failed'), r(1000, 'succeeded')])).toEqual({
      kind: 'retry',
    });
    expect(judgeRefusal('insufficient', WANTED, 10000, [])).toEqual({ kind: 'retry' });
  });

  it('a duplicate: done when its twin succeeded, wait while it is pending, retry once it failed', () => {
    expect(judgeRefusal('duplicate', WANTED, 10000, [r(6000, 'succeeded', WANTED.dedupe_key)])).toEqual({
      kind: 'done',
    });
    expect(judgeRefusal('duplicate', WANTED, 10000, [r(6000, 'pending', WANTED.dedupe_key)])).toEqual({
      kind: 'wait',
      duplicate: true,
    });
    expect(judgeRefusal('duplicate', WANTED, 10000, [r(6000, 'failed'), r(6000, 'pending', 'O|6000|other')])).toEqual({
      kind: 'retry',
    });
  });
});
