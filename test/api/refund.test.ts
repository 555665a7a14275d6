// POST /refund (and /v2/refund): partial and repeated refunds, bounds, idempotency, concurrency,
// signatures, accounts and every field's bad input.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hmacSha256Hex, signRequest } from '../../sdk/signing.js';
import { addWallet, cancelBody, jsonWithNumbers, refundBody, rowCounts, signed } from '../support/api.js';
import { ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';

describe.each(ENGINES)('refund on %s', (engine) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(engine);
  });
  afterAll(async () => gw?.close());

  const refund = (body: unknown, path = '/refund') => gw.post(path, body);

  async function paidOrder(amount = '120.00'): Promise<{ order_id: string; merchant_reference: string }> {
    const { order_id, merchant_reference } = await gw.create({ amount });
    expect((await gw.pay(order_id)).status).toBe('paid');
    return { order_id, merchant_reference };
  }
  const refunded = async (order_id: string) => (await gw.store.transactions.find(order_id))!.refunded_amount;

  /** Refund refused with `code`, with no refund row written and the refunded total unchanged. */
  async function refused(order_id: string, body: unknown, code: number): Promise<any> {
    const [before, total] = [await rowCounts(gw), await refunded(order_id)];
    const reply = await refund(body);
    expect(reply).toMatchObject({ code });
    expect(reply.detail).toMatch(/\S/);
    expect(await rowCounts(gw)).toEqual(before);
    expect(await refunded(order_id)).toBe(total);
    return reply;
  }

  it('a partial refund: code 0, empty message, the order stays paid', async () => {
    const { order_id, merchant_reference } = await paidOrder();
    const reply = await refund(refundBody(gw, order_id, '20.00'));
    expect(reply).toEqual({ code: 0, message: '' });
    expect(await refunded(order_id)).toBe(2000);
    expect(await gw.store.refunds.listByOrder(order_id)).toMatchObject([
      { refund_id: expect.stringMatching(/^R[0-9a-f]{20}$/), refund_amount: 2000, refund_status: 'succeeded' },
    ]);
    expect(await gw.query(merchant_reference)).toMatchObject({ code: 0, status: 'paid', amount: 120 });
  });

  it('repeated refunds up to the paid amount, then 550', async () => {
    const { order_id } = await paidOrder();
    for (const [i, amount] of ['100.00', '19.99', '0.01'].entries())
      expect((await refund(refundBody(gw, order_id, amount, `r${i}`))).code).toBe(0);
    expect(await refunded(order_id)).toBe(12000);
    const reply = await refused(order_id, refundBody(gw, order_id, '0.01', 'one more'), 550);
    expect(reply.message).toBe('Refund parameters wrong');
  });

  it('a refund above what is left answers 550', async () => {
    const { order_id } = await paidOrder();
    expect((await refund(refundBody(gw, order_id, '100.00', 'a'))).code).toBe(0);
    await refused(order_id, refundBody(gw, order_id, '30.00', 'b'), 550);
    expect((await refund(refundBody(gw, order_id, '20.00', 'b'))).code).toBe(0);
  });

  it('a refund above the order amount answers 550', async () => {
    const { order_id } = await paidOrder();
    const reply = await refused(order_id, refundBody(gw, order_id, '120.01'), 550);
    expect(reply.message).toBe('Refund parameters wrong');
  });

  it('an identical repeat answers 562 and refunds nothing; another reference refunds again', async () => {
    const { order_id } = await paidOrder();
    expect((await refund(refundBody(gw, order_id, '10.00', 'same'))).code).toBe(0);
    const reply = await refused(order_id, refundBody(gw, order_id, '10.00', 'same'), 562);
    expect(reply.message).toBe('This refund request has been done');
    expect((await refund(refundBody(gw, order_id, '10.00', 'other'))).code).toBe(0);
    expect(await refunded(order_id)).toBe(2000);
  });

  it('an order that is not paid answers 556', async () => {
    const pending = await gw.create();
    await refused(pending.order_id, refundBody(gw, pending.order_id, '1.00'), 556);
    const failed = await gw.create();
    await gw.pay(failed.order_id, 'failed');
    await refused(failed.order_id, refundBody(gw, failed.order_id, '1.00'), 556);
    const canceled = await gw.create();
    expect((await gw.post('/cancel', cancelBody(gw, canceled.merchant_reference))).code).toBe(0);
    const reply = await refused(canceled.order_id, refundBody(gw, canceled.order_id, '1.00'), 556);
    expect(reply.message).toBe('Create refund order fail');
  });

  it('a refund the payment channel refuses answers 556, is kept as failed, and can be made again once the channel accepts', async () => {
    const { order_id, merchant_reference } = await paidOrder();
    const sandbox = (answer: string, id = order_id) =>
      fetch(`${gw.url}/sandbox/refunds/${id}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `answer=${answer}`,
      }).then((r) => r.json());
    expect(await sandbox('refuse')).toMatchObject({ code: 0, refunds: 'refuse' });
    const reply = await refund(refundBody(gw, order_id, '20.00', 'r1'));
    expect(reply).toMatchObject({
      code: 556,
      message: 'Create refund order fail',
      detail: expect.stringMatching(/channel refused/),
    });
    expect(await refunded(order_id)).toBe(0);
    expect(await gw.store.refunds.listByOrder(order_id)).toMatchObject([
      { refund_amount: 2000, refund_status: 'failed' },
    ]);
    expect(await gw.query(merchant_reference)).toMatchObject({ code: 0, status: 'paid' });
    // The refused attempt does not count as done: the same request is not a duplicate (562).
    expect(await sandbox('accept')).toMatchObject({ code: 0, refunds: 'accept' });
    expect(await refund(refundBody(gw, order_id, '20.00', 'r1'))).toMatchObject({ code: 0 });
    expect(await refunded(order_id)).toBe(2000);
    // The sandbox control itself: only paid orders, only the two answers.
    expect(await sandbox('maybe')).toMatchObject({ code: 207 });
    expect(await sandbox('refuse', (await gw.create()).order_id)).toMatchObject({ code: 207 });
    expect(await sandbox('refuse', '2099010100000001')).toMatchObject({ code: 201 });
  });

  it('an unknown order answers 551; so does an order of another user', async () => {
    const reply = await refund(refundBody(gw, '2099010100000001', '1.00'));
    expect(reply).toMatchObject({ code: 551, message: 'Refund related order is not exist' });
    const { order_id } = await paidOrder();
    const other = await gw.newMerchant();
    await refused(order_id, refundBody(gw, order_id, '1.00', 'x', other), 551);
  });

  it('10 concurrent refunds of 20.00 on 120.00: exactly 6 succeed', async () => {
    const { order_id, merchant_reference } = await paidOrder();
    const replies = await Promise.all(
      Array.from({ length: 10 }, (_, i) => refund(refundBody(gw, order_id, '20.00', `concurrent ${i}`))),
    );
    expect(replies.filter((r) => r.code === 0)).toHaveLength(6);
    expect(replies.filter((r) => r.code === 550)).toHaveLength(4);
    expect(await refunded(order_id)).toBe(12000);
    const rows = await gw.store.refunds.listByOrder(order_id);
    expect(rows.filter((r) => r.refund_status === 'succeeded')).toHaveLength(6);
    expect(rows.reduce((sum, r) => sum + (r.refund_status === 'succeeded' ? r.refund_amount : 0), 0)).toBe(12000);
    expect((await gw.query(merchant_reference)).status).toBe('paid');
  });

  it('5 concurrent identical refunds: exactly one succeeds, the others 562', async () => {
    const { order_id } = await paidOrder();
    const body = refundBody(gw, order_id, '5.00', 'twice clicked');
    const replies = await Promise.all(Array.from({ length: 5 }, () => refund(body)));
    expect(replies.map((r) => r.code).sort()).toEqual([0, 562, 562, 562, 562]);
    expect(await refunded(order_id)).toBe(500);
  });

  it('is served at /v2/refund too', async () => {
    const { order_id } = await paidOrder();
    expect((await refund(refundBody(gw, order_id, '1.00'), '/v2/refund')).code).toBe(0);
  });

  it('refund_amount as a JSON number is sign-checked as written', async () => {
    const { order_id } = await paidOrder();
    const body = refundBody(gw, order_id, '20.00', 'number');
    expect((await refund(jsonWithNumbers(body, { refund_amount: '20.00' }))).code).toBe(0);
    const signedAs20 = refundBody(gw, order_id, '20', 'number 2');
    expect(
      (
        await refund(
          jsonWithNumbers(signedAs20, { refund_amount: '20' }).replace('"refund_amount":20', '"refund_amount":20.00'),
        )
      ).code,
    ).toBe(206);
    expect(await refunded(order_id)).toBe(2000);
  });

  it('reference may be omitted, or empty and signed either way', async () => {
    const { order_id } = await paidOrder();
    const fields = { user_id: gw.merchant.user_id, order_id, refund_amount: '1.00' };
    expect((await refund(signed(fields, gw.merchant.api_key))).code).toBe(0);
    const empty = { ...fields, refund_amount: '2.00', reference: '' };
    expect((await refund(signed(empty, gw.merchant.api_key))).code).toBe(0);
    const kept = { ...fields, refund_amount: '3.00', reference: '' };
    const message = `order_id=${order_id}&reference=&refund_amount=3.00&user_id=${gw.merchant.user_id}${gw.merchant.api_key}`;
    expect((await refund({ ...kept, signature: hmacSha256Hex(gw.merchant.api_key, message) })).code).toBe(0);
    expect(await refunded(order_id)).toBe(600);
  });

  describe('signatures and accounts', () => {
    let order_id: string;
    beforeAll(async () => {
      order_id = (await paidOrder()).order_id;
    });

    it('a bad signature answers 206', async () => {
      const body = refundBody(gw, order_id, '1.00');
      await refused(order_id, { ...body, refund_amount: '2.00' }, 206);
      await refused(order_id, { ...body, signature: body.signature.toUpperCase().slice(1) }, 206);
    });

    it("another merchant's key, or another wallet of the user, answers 206", async () => {
      const other = await gw.newMerchant();
      const fields = { user_id: gw.merchant.user_id, order_id, refund_amount: '1.00', reference: 'k' };
      await refused(order_id, { ...fields, signature: signRequest(fields, other.api_key) }, 206);
      const second = await addWallet(gw, 'NZD');
      await refused(order_id, { ...fields, signature: signRequest(fields, second.api_key) }, 206);
    });

    it('an unknown user answers 110; a disabled user 205', async () => {
      await refused(order_id, signed({ user_id: 'U404', order_id, refund_amount: '1.00' }, gw.merchant.api_key), 110);
      const m = await gw.newMerchant();
      const mine = await gw.create({}, m);
      await gw.pay(mine.order_id);
      await gw.store.accounts.setUserStatus(m.user_id, 'disabled');
      await refused(mine.order_id, refundBody(gw, mine.order_id, '1.00', 'r', m), 205);
    });
  });

  describe('fields', () => {
    let order_id: string;
    beforeAll(async () => {
      order_id = (await paidOrder()).order_id;
    });

    it.each(['user_id', 'order_id', 'refund_amount', 'signature'])('missing or empty %s answers 204', async (field) => {
      const body = refundBody(gw, order_id, '1.00');
      const { [field]: _gone, ...without } = body;
      await refused(order_id, without, 204);
      await refused(order_id, { ...body, [field]: '' }, 204);
      await refused(order_id, { ...body, [field]: null }, 204);
    });

    it.each(['user_id', 'order_id', 'refund_amount', 'reference', 'signature'])(
      '%s of the wrong JSON type answers 207',
      async (field) => {
        const body = refundBody(gw, order_id, '1.00');
        for (const value of [true, { v: 1 }, ['1.00']]) await refused(order_id, { ...body, [field]: value }, 207);
        if (field !== 'refund_amount') await refused(order_id, JSON.stringify({ ...body, [field]: 12 }), 207);
      },
    );

    it.each([
      ['user_id', 'U'.repeat(33)],
      ['order_id', '1'.repeat(33)],
      ['refund_amount', '1'.repeat(21)],
      ['reference', 'r'.repeat(256)],
      ['signature', 'a'.repeat(1025)],
    ])('%s too long answers 207', async (field, value) => {
      await refused(order_id, { ...refundBody(gw, order_id, '1.00'), [field]: value }, 207);
    });

    it.each(['-1', '+1', '1e2', '01.00', '1.234', ' 1', '1,00', 'abc', '0', '0.00', '1'.repeat(13)])(
      'refund_amount %j answers 550',
      async (amount) => {
        await refused(order_id, refundBody(gw, order_id, amount), 550);
      },
    );

    it('control characters or half a surrogate pair in reference answer 207; a NUL anywhere in the body 3', async () => {
      await refused(order_id, refundBody(gw, order_id, '1.00', 'bell\u0007'), 207);
      await refused(order_id, refundBody(gw, order_id, '1.00', 'half\ud83d'), 207);
      await refused(order_id, refundBody(gw, order_id, '1.00', 'line\u0000break'), 3);
    });
  });
});
