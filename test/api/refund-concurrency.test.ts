// Concurrent refunds of one order are judged only against refunds whose outcome is known: a refund
// still waiting for the channel's answer is waited for, never counted as made. With a channel that
// refuses, every one answers 556 (never 550); with one that accepts, exactly what fits succeeds and
// the rest answer 550 or 562, which are then true.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refundBody } from '../support/api.js';
import { ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';

const WAIT_MS = 400;

describe.each(ENGINES)('concurrent refunds on %s', (engine) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(engine);
  });
  afterAll(async () => gw?.close());

  async function paidOrder(amount = '120.00'): Promise<string> {
    const { order_id } = await gw.create({ amount });
    expect((await gw.pay(order_id)).status).toBe('paid');
    return order_id;
  }
  const refuseRefunds = async (order_id: string) => {
    const res = await fetch(`${gw.url}/sandbox/refunds/${order_id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'answer=refuse',
    });
    expect(await res.json()).toMatchObject({ code: 0, refunds: 'refuse' });
  };
  const refundAll = (order_id: string, amount: string, n: number, same = false) =>
    Promise.all(
      Array.from({ length: n }, (_, i) =>
        gw.post('/refund', refundBody(gw, order_id, amount, same ? 'same' : `concurrent ${i}`)),
      ),
    );
  const codes = (replies: { code: number }[]) => replies.map((r) => r.code).sort((a, b) => a - b);
  const state = async (order_id: string) => ({
    refunded: (await gw.store.transactions.find(order_id))!.refunded_amount,
    statuses: (await gw.store.refunds.listByOrder(order_id)).map((r) => r.refund_status).sort(),
  });

  it('a channel that refuses: 20 concurrent refunds of 20.00 all answer 556, none 550, nothing stays reserved', async () => {
    const order_id = await paidOrder();
    await refuseRefunds(order_id);
    const replies = await refundAll(order_id, '20.00', 20);
    expect(codes(replies)).toEqual(Array(20).fill(556));
    for (const r of replies) expect(r.detail).toMatch(/channel refused/);
    expect(await state(order_id)).toEqual({ refunded: 0, statuses: Array(20).fill('failed') });
  });

  it('a channel that refuses: 20 concurrent refunds of 70.00 on 120.00 (two could never both fit) all answer 556', async () => {
    const order_id = await paidOrder();
    await refuseRefunds(order_id);
    const replies = await refundAll(order_id, '70.00', 20);
    expect(codes(replies)).toEqual(Array(20).fill(556));
    expect((await state(order_id)).refunded).toBe(0);
  });

  it('a channel that refuses: 20 concurrent identical refunds all answer 556, none 562', async () => {
    const order_id = await paidOrder();
    await refuseRefunds(order_id);
    const replies = await refundAll(order_id, '20.00', 20, true);
    expect(codes(replies), JSON.stringify(replies)).toEqual(Array(20).fill(556));
    expect((await state(order_id)).refunded).toBe(0);
  });

  it('a channel that accepts: 20 concurrent refunds of 20.00 on 120.00, exactly 6 succeed and 14 answer 550', async () => {
    const order_id = await paidOrder();
    const replies = await refundAll(order_id, '20.00', 20);
    expect(codes(replies)).toEqual([...Array(6).fill(0), ...Array(14).fill(550)]);
    expect(await state(order_id)).toEqual({ refunded: 12000, statuses: Array(6).fill('succeeded') });
  });

  it('a channel that accepts: 20 concurrent refunds of 70.00 on 120.00, one succeeds and 19 answer 550', async () => {
    const order_id = await paidOrder();
    expect(codes(await refundAll(order_id, '70.00', 20))).toEqual([0, ...Array(19).fill(550)]);
    expect((await state(order_id)).refunded).toBe(7000);
  });

  it('a channel that accepts: 20 concurrent identical refunds, one succeeds and 19 answer 562', async () => {
    const order_id = await paidOrder();
    expect(codes(await refundAll(order_id, '20.00', 20, true))).toEqual([0, ...Array(19).fill(562)]);
    expect((await state(order_id)).refunded).toBe(2000);
  });

  describe('a refund whose outcome is still unknown (reserved, the channel not answered yet)', () => {
    // Such a refund is left pending here for good (as by a crash): waiting for it ends sooner than by default.
    beforeAll(() => {
      gw.ctx.config.refundWaitMs = WAIT_MS;
    });
    let n = 0;
    /** A refund reserved as the gateway does before asking the channel, left pending (as by a crash). */
    async function pendingRefund(order_id: string, refund_amount: number, reference: string): Promise<string> {
      const refund_id = `Rpending${++n}${engine}`;
      const r = await gw.store.refunds.reserve(
        {
          refund_id,
          order_id,
          refund_amount,
          reference,
          dedupe_key: `${order_id}|${refund_amount}|${reference}`,
          created_at: Date.now(),
        },
        { refund_fee: 'none' },
      );
      expect(r).toEqual({ ok: true });
      return refund_id;
    }

    it('one that fits only if the pending one fails waits for it, then answers 556 saying why; nothing is reserved', async () => {
      const order_id = await paidOrder();
      await pendingRefund(order_id, 6000, 'in flight');
      const started = Date.now();
      const reply = await gw.post('/refund', refundBody(gw, order_id, '70.00', 'second'));
      expect(Date.now() - started).toBeGreaterThanOrEqual(WAIT_MS - 50);
      expect(reply).toMatchObject({
        code: 556,
        message: 'Create refund order fail',
        detail: expect.stringMatching(/still waiting for the payment channel's answer.*nothing was refunded/),
      });
      expect(await state(order_id)).toEqual({ refunded: 6000, statuses: ['pending'] });
    });

    it('...and succeeds when the pending one fails meanwhile', async () => {
      const order_id = await paidOrder();
      const stuck = await pendingRefund(order_id, 6000, 'in flight');
      const reply = gw.post('/refund', refundBody(gw, order_id, '70.00', 'second'));
      setTimeout(() => void gw.store.refunds.fail(stuck, Date.now()), WAIT_MS / 4);
      expect(await reply).toEqual({ code: 0, message: '' });
      expect(await state(order_id)).toEqual({ refunded: 7000, statuses: ['failed', 'succeeded'] });
    });

    it('...and answers 550 when the pending one succeeds meanwhile', async () => {
      const order_id = await paidOrder();
      const stuck = await pendingRefund(order_id, 6000, 'in flight');
      const reply = gw.post('/refund', refundBody(gw, order_id, '70.00', 'second'));
      setTimeout(() => void gw.store.refunds.complete(stuck, Date.now()), WAIT_MS / 4);
      expect(await reply).toMatchObject({ code: 550, detail: expect.stringMatching(/\(60\.00\)/) });
    });

    it('one that cannot fit whatever the pending one does answers 550 at once', async () => {
      const order_id = await paidOrder();
      await pendingRefund(order_id, 6000, 'in flight');
      expect((await gw.post('/refund', refundBody(gw, order_id, '50.00', 'a'))).code).toBe(0);
      const started = Date.now();
      // 50.00 succeeded: 70.01 cannot fit even if the pending 60.00 fails.
      expect(await gw.post('/refund', refundBody(gw, order_id, '70.01', 'b'))).toMatchObject({
        code: 550,
        detail: expect.stringMatching(/\(10\.00\)/),
      });
      expect(Date.now() - started).toBeLessThan(WAIT_MS);
    });

    it('one that fits beside it is made at once', async () => {
      const order_id = await paidOrder();
      await pendingRefund(order_id, 6000, 'in flight');
      expect(await gw.post('/refund', refundBody(gw, order_id, '60.00', 'beside'))).toEqual({ code: 0, message: '' });
    });

    it('its identical twin waits, then answers 562 saying it is still waiting; once it failed, the twin is made', async () => {
      const order_id = await paidOrder();
      const stuck = await pendingRefund(order_id, 2000, 'same');
      expect(await gw.post('/refund', refundBody(gw, order_id, '20.00', 'same'))).toMatchObject({
        code: 562,
        detail: expect.stringMatching(/still waiting.*not made twice/),
      });
      const reply = gw.post('/refund', refundBody(gw, order_id, '20.00', 'same'));
      setTimeout(() => void gw.store.refunds.fail(stuck, Date.now()), WAIT_MS / 4);
      expect(await reply).toEqual({ code: 0, message: '' });
      expect(await state(order_id)).toEqual({ refunded: 2000, statuses: ['failed', 'succeeded'] });
    });
  });
});
