// POST /cancel (and /v2/cancel): the spec's codes, the code-1 lock, both signature forms,
// accounts and every field's bad input.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hmacSha256Hex, signRequest } from '../../sdk/signing.js';
import { addWallet, cancelBody, createHosted, gatewayData, rawGet, rowCounts, signed } from '../support/api.js';
import { ENGINES, startTestGateway, uniqueRef, type TestGateway } from '../support/gateway.js';

describe.each(ENGINES)('cancel on %s', (engine) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(engine);
  });
  afterAll(async () => gw?.close());

  const cancel = (body: unknown, path = '/cancel') => gw.post(path, body);
  const status = async (order_id: string) => (await gw.store.transactions.find(order_id))!.status;

  /** Cancel refused with `code`: no row written and the order's status unchanged. */
  async function refused(order_id: string | undefined, body: unknown, code: number): Promise<any> {
    const before = await rowCounts(gw);
    const was = order_id && (await status(order_id));
    const reply = await cancel(body);
    expect(reply).toMatchObject({ code });
    expect(reply.detail).toMatch(/\S/);
    expect(await rowCounts(gw)).toEqual(before);
    if (order_id) expect(await status(order_id)).toBe(was);
    return reply;
  }

  it('a pending order: code 0 "success", then the query shows canceled', async () => {
    const { merchant_reference, order_id } = await gw.create();
    const before = await rowCounts(gw);
    expect(await cancel(cancelBody(gw, merchant_reference))).toEqual({ code: 0, message: 'success' });
    expect(await gw.query(merchant_reference)).toMatchObject({ code: 0, status: 'canceled', order_id });
    // The status change queues its notification in the same transaction.
    expect((await rowCounts(gw)).outbox).toBe(before.outbox + 1);
  });

  it('a merchant-hosted order: canceled, and its nonce then answers 901', async () => {
    const { merchant_reference, nonce } = await createHosted(gw);
    expect((await cancel(cancelBody(gw, merchant_reference))).code).toBe(0);
    expect(await gatewayData(gw, nonce)).toMatchObject({ code: 901 });
  });

  it('a canceled order canceled again: 0', async () => {
    const { merchant_reference } = await gw.create();
    expect((await cancel(cancelBody(gw, merchant_reference))).code).toBe(0);
    expect(await cancel(cancelBody(gw, merchant_reference))).toEqual({ code: 0, message: 'success' });
  });

  it('a paid order answers 900; a failed or rejected one 901', async () => {
    for (const [result, payment_method, code, message] of [
      ['paid', 'alipay', 900, 'transaction has been successfully completed'],
      ['failed', 'wechat', 901, 'transaction has been failed'],
      ['rejected', 'payid', 901, 'transaction has been failed'],
    ] as const) {
      const { merchant_reference, order_id } = await gw.create({ payment_method });
      await gw.pay(order_id, result);
      expect((await refused(order_id, cancelBody(gw, merchant_reference), code)).message).toBe(message);
    }
  });

  it('after the customer opened the payment: code 1, and again 1 while locked', async () => {
    const { merchant_reference, order_id } = await gw.create();
    expect((await rawGet(gw, `/sandbox/pay/${order_id}`)).status).toBe(200);
    const first = await refused(order_id, cancelBody(gw, merchant_reference), 1);
    expect(first.message).toBe('FAIL');
    const second = await refused(order_id, cancelBody(gw, merchant_reference), 1);
    expect(second.detail).toMatch(/try again after/);
    // The customer can still pay.
    expect((await gw.pay(order_id)).status).toBe('paid');
    expect((await cancel(cancelBody(gw, merchant_reference))).code).toBe(900);
  });

  it('a cancel racing a payment ends in exactly one final state', async () => {
    for (let i = 0; i < 5; i++) {
      const { merchant_reference, order_id } = await gw.create();
      const [c, p] = await Promise.all([cancel(cancelBody(gw, merchant_reference)), gw.pay(order_id)]);
      const final = await status(order_id);
      expect(c.code).toBe(final === 'canceled' ? 0 : 900);
      expect(final === 'canceled' || final === 'paid').toBe(true);
      // The sandbox callback reports the state that won (901 if it lost before trying).
      if (p.code === 0) expect(p.status).toBe(final);
      else expect([final, p.code]).toEqual(['canceled', 901]);
    }
  });

  it('is served at /v2/cancel too', async () => {
    const { merchant_reference } = await gw.create();
    expect((await cancel(cancelBody(gw, merchant_reference), '/v2/cancel')).code).toBe(0);
  });

  describe('signatures', () => {
    it('the sorted form and the user_id-first form are both accepted', async () => {
      const a = await gw.create();
      expect((await cancel(cancelBody(gw, a.merchant_reference))).code).toBe(0);
      const b = await gw.create();
      const message = `user_id=${gw.merchant.user_id}&merchant_reference=${b.merchant_reference}${gw.merchant.api_key}`;
      const reply = await cancel({
        user_id: gw.merchant.user_id,
        merchant_reference: b.merchant_reference,
        signature: hmacSha256Hex(gw.merchant.api_key, message),
      });
      expect(reply.code).toBe(0);
      const c = await gw.create();
      const body = cancelBody(gw, c.merchant_reference);
      expect((await cancel({ ...body, signature: body.signature.toUpperCase() })).code).toBe(0);
    });

    it('a wrong signature answers 206', async () => {
      const { merchant_reference, order_id } = await gw.create();
      const body = cancelBody(gw, merchant_reference);
      const reply = await refused(
        order_id,
        { ...body, signature: body.signature.replace(/^./, (c) => (c === 'a' ? 'b' : 'a')) },
        206,
      );
      expect(reply.message).toBe('Signature from Merchant request is wrong');
      const concat = hmacSha256Hex(gw.merchant.api_key, merchant_reference + gw.merchant.user_id);
      await refused(order_id, { ...body, signature: concat }, 206);
    });

    it("another merchant's key, or another wallet of the user, answers 206", async () => {
      const { merchant_reference, order_id } = await gw.create();
      const fields = { user_id: gw.merchant.user_id, merchant_reference };
      const other = await gw.newMerchant();
      await refused(order_id, { ...fields, signature: signRequest(fields, other.api_key) }, 206);
      const second = await addWallet(gw, 'NZD');
      await refused(order_id, { ...fields, signature: signRequest(fields, second.api_key) }, 206);
    });
  });

  describe('accounts and orders', () => {
    it('an unknown order answers 201; an unknown order with a bad signature 206', async () => {
      const ref = uniqueRef('none');
      expect(await refused(undefined, cancelBody(gw, ref), 201)).toMatchObject({ message: 'order not exist' });
      await refused(undefined, { ...cancelBody(gw, ref), signature: 'a'.repeat(64) }, 206);
    });

    it("another user's order is unknown to this user: 201", async () => {
      const { merchant_reference, order_id } = await gw.create();
      const other = await gw.newMerchant();
      await refused(order_id, cancelBody(gw, merchant_reference, other), 201);
    });

    it('an unknown user answers 110; a disabled one 205', async () => {
      const { merchant_reference, order_id } = await gw.create();
      expect(
        await refused(order_id, signed({ user_id: 'U404', merchant_reference }, gw.merchant.api_key), 110),
      ).toMatchObject({ message: 'User not exist' });
      const m = await gw.newMerchant();
      const mine = await gw.create({}, m);
      await gw.store.accounts.setUserStatus(m.user_id, 'disabled');
      const reply = await refused(mine.order_id, cancelBody(gw, mine.merchant_reference, m), 205);
      expect(reply.message).toBe(
        'Can not find out corresponding key for the user code or user is disabled or user is not activity',
      );
    });
  });

  describe('fields', () => {
    let ref: string;
    let order_id: string;
    beforeAll(async () => {
      ({ merchant_reference: ref, order_id } = await gw.create());
    });

    it.each(['user_id', 'merchant_reference', 'signature'])('missing, empty or null %s answers 204', async (field) => {
      const body = cancelBody(gw, ref);
      const { [field]: _gone, ...without } = body;
      await refused(order_id, without, 204);
      await refused(order_id, { ...body, [field]: '' }, 204);
      await refused(order_id, { ...body, [field]: null }, 204);
    });

    it.each(['user_id', 'merchant_reference', 'signature'])('%s of the wrong JSON type answers 207', async (field) => {
      const body = cancelBody(gw, ref);
      for (const value of [true, { v: 1 }, [ref]]) await refused(order_id, { ...body, [field]: value }, 207);
      await refused(order_id, JSON.stringify({ ...body, [field]: 'NUMBER' }).replace('"NUMBER"', '12'), 207);
    });

    it.each([
      ['user_id', 'U'.repeat(33)],
      ['merchant_reference', 'm'.repeat(65)],
      ['merchant_reference', 'a b'],
      ['merchant_reference', 'a/b'],
      ['signature', 'a'.repeat(1025)],
    ])('%s %j answers 207', async (field, value) => {
      await refused(order_id, { ...cancelBody(gw, ref), [field]: value }, 207);
    });
  });
});
