// The sandbox channel's settle endpoint (POST /sandbox/pay/{order_id}), and a user without any
// wallet key (205) on the endpoints that look keys up by user.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DatabaseUnavailable } from '../../src/ports/store.js';
import { signRequest } from '../../sdk/signing.js';
import { cancelBody, rawGet, refundBody } from '../support/api.js';
import { ENGINES, startTestGateway, uniqueRef, type TestGateway } from '../support/gateway.js';

describe.each(ENGINES)('sandbox channel on %s', (engine) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(engine);
  });
  afterAll(async () => gw?.close());

  it.each(['paid', 'failed'] as const)('settles a payment as %s, with its notification queued', async (result) => {
    const { order_id } = await gw.create();
    expect(await gw.pay(order_id, result)).toEqual({ code: 0, message: 'SUCCESS', order_id, status: result });
    const order = await gw.store.transactions.find(order_id);
    expect(order).toMatchObject({ status: result, status_seq: 1 });
    expect(order!.pay_time).toEqual(expect.any(Number));
    const outbox = await gw.store.db
      .selectFrom('outbox')
      .select(['order_id', 'seq'])
      .where('order_id', '=', order_id)
      .execute();
    expect(outbox).toEqual([{ order_id, seq: 1 }]);
  });

  it('the payment app answers a page, not JSON, when the database is away; a JSON caller still gets the API answer', async () => {
    const { order_id } = await gw.create();
    const away = () =>
      vi
        .spyOn(gw.store.transactions, 'find')
        .mockRejectedValueOnce(new DatabaseUnavailable('no writable PostgreSQL primary'));
    let spy = away();
    const page = await fetch(`${gw.url}/sandbox/pay/${order_id}`, { headers: { 'accept-language': 'en' } });
    spy.mockRestore();
    expect([page.status, page.headers.get('content-type')]).toEqual([503, expect.stringMatching(/^text\/html/)]);
    expect(await page.text()).toContain('Please reload this page in a few seconds');
    spy = away();
    const form = await fetch(`${gw.url}/sandbox/pay/${order_id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'result=paid',
    });
    spy.mockRestore();
    expect(form.status).toBe(503);
    spy = away();
    const json = await gw.pay(order_id);
    spy.mockRestore();
    expect(json).toMatchObject({ code: 1, detail: expect.stringMatching(/send the same request again/) });
    expect((await gw.store.transactions.find(order_id))!.status).toBe('pending');
  });

  it('rejects a PayID transfer with its reason and Pay ID', async () => {
    const { order_id } = await gw.create({ payment_method: 'payid' });
    expect(await gw.pay(order_id, 'rejected', { message: 'Account closed', msgId: 'PAYID-1' })).toMatchObject({
      code: 0,
      status: 'rejected',
    });
    expect(await gw.store.transactions.find(order_id)).toMatchObject({
      status: 'rejected',
      status_message: 'Account closed',
      msgId: 'PAYID-1',
    });
  });

  it("a disabled merchant's order is not paid by anyone who posts to it: 205, the order stays pending", async () => {
    const other = await gw.newMerchant('NZD');
    const { order_id } = await gw.create({}, other);
    await gw.store.accounts.setUserStatus(other.user_id, 'disabled');
    gw.ctx.credentials.clear();
    expect(await gw.pay(order_id, 'paid')).toMatchObject({ code: 205 });
    expect((await gw.store.transactions.find(order_id))!.status).toBe('pending');
  });

  it('rejected is not an outcome for other methods: 207', async () => {
    const { order_id } = await gw.create({ payment_method: 'alipay' });
    expect(await gw.pay(order_id, 'rejected')).toMatchObject({ code: 207 });
    expect(await gw.store.transactions.find(order_id)).toMatchObject({ status: 'pending' });
  });

  it('a result other than paid, failed or rejected answers 207', async () => {
    const { order_id } = await gw.create();
    for (const result of ['', 'PAID', 'canceled', 'pending'])
      expect(await gw.pay(order_id, result as 'paid')).toMatchObject({ code: 207 });
    expect(await gw.store.transactions.find(order_id)).toMatchObject({ status: 'pending' });
  });

  it('a final order stays final: the same outcome again is 0, another is 900/901', async () => {
    const paid = await gw.create();
    await gw.pay(paid.order_id, 'paid');
    expect(await gw.pay(paid.order_id, 'paid')).toMatchObject({ code: 0, status: 'paid' });
    expect(await gw.pay(paid.order_id, 'failed')).toMatchObject({ code: 900 });
    const failed = await gw.create();
    await gw.pay(failed.order_id, 'failed');
    expect(await gw.pay(failed.order_id, 'paid')).toMatchObject({ code: 901 });
    expect((await gw.store.transactions.find(paid.order_id))!.status_seq).toBe(1);
  });

  it('concurrent outcomes: exactly one wins', async () => {
    const { order_id } = await gw.create();
    const results = Array.from({ length: 20 }, (_, i): 'paid' | 'failed' => (i % 2 ? 'failed' : 'paid'));
    const replies = await Promise.all(results.map((result) => gw.pay(order_id, result)));
    const order = await gw.store.transactions.find(order_id);
    expect(['paid', 'failed']).toContain(order!.status);
    // A report that lost the race is answered as if it came after: 900/901, not 0 and the winner's status.
    const lost = order!.status === 'paid' ? { code: 900 } : { code: 901 };
    replies.forEach((reply, i) =>
      expect(reply).toMatchObject(results[i] === order!.status ? { code: 0, status: order!.status } : lost),
    );
    expect(order!.status_seq).toBe(1);
    const outbox = await gw.store.db.selectFrom('outbox').select('seq').where('order_id', '=', order_id).execute();
    expect(outbox).toHaveLength(1);
  });

  it('a HEAD of the payment page is not a scan: the order can still be canceled', async () => {
    const { order_id, merchant_reference } = await gw.create();
    expect((await fetch(`${gw.url}/sandbox/pay/${order_id}`, { method: 'HEAD' })).status).toBe(404);
    expect(await gw.post('/cancel', cancelBody(gw, merchant_reference))).toMatchObject({ code: 0 });
  });

  it('an unknown order: POST answers 201, the page 404', async () => {
    expect(await gw.pay('2099010100000001')).toMatchObject({ code: 201 });
    expect((await rawGet(gw, '/sandbox/pay/2099010100000001')).status).toBe(404);
  });
});

describe.each(ENGINES)('a user without a wallet key on %s', (engine) => {
  let gw: TestGateway;
  let user_id: string;
  beforeAll(async () => {
    gw = await startTestGateway(engine);
    // Not possible through the CLI (a merchant always gets a wallet), but a data fix could leave one.
    user_id = `U${Date.now()}`;
    await gw.store.db
      .insertInto('users')
      .values({
        user_id,
        organisation_id: gw.merchant.organisation_id,
        user_name: 'No wallet',
        user_status: 'active',
        created_at: Date.now(),
      })
      .execute();
  });
  afterAll(async () => gw?.close());

  const m = () => ({ ...gw.merchant, user_id });

  it('query, refund and cancel answer 205', async () => {
    const ref = uniqueRef('nw');
    const signature = signRequest({ merchant_reference: ref, user_id }, gw.merchant.api_key);
    expect(await gw.get(`/v2/transaction/${ref}?${new URLSearchParams({ user_id, signature })}`)).toMatchObject({
      code: 205,
    });
    expect(await gw.post('/refund', refundBody(gw, '2099010100000001', '1.00', 'r', m()))).toMatchObject({ code: 205 });
    expect(await gw.post('/cancel', cancelBody(gw, ref, m()))).toMatchObject({ code: 205 });
  });

  it("create with another user's wallet answers 450", async () => {
    expect(await gw.post('/v2/transaction', gw.createBody({ user_id }))).toMatchObject({ code: 450 });
  });
});
