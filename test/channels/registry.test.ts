// Which connector serves an order: a wallet's channel account for a method, in both modes; the
// sandbox for the other methods in sandbox mode only; and the sandbox's payment app never settles
// an order a real provider serves.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signed } from '../support/api.js';
import { alipayAccount, useAccount } from '../support/channels.js';
import { FakeAlipay } from '../support/fake-alipay.js';
import { ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';

describe.each(ENGINES)('the connector registry in sandbox mode on %s', (engine) => {
  let fake: FakeAlipay;
  let gw: TestGateway;
  beforeAll(async () => {
    fake = await FakeAlipay.start();
    gw = await startTestGateway(engine);
    await useAccount(gw, alipayAccount(gw.merchant.wallet_id, fake));
  });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
  });

  it("alipay goes to the wallet's Alipay account, the other methods to the sandbox", async () => {
    const alipay = await gw.create({ host_type: '1' });
    expect(await gw.store.transactions.find(alipay.order_id)).toMatchObject({
      channel: 'alipay',
      qr_code_url: fake.trades.get(alipay.order_id)!.qr_code,
    });
    const poli = await gw.create({ payment_method: 'polipay' });
    expect(await gw.store.transactions.find(poli.order_id)).toMatchObject({
      channel: 'sandbox',
      qr_code_url: expect.stringContaining(`/sandbox/pay/${poli.order_id}`),
    });
    expect(await gw.pay(poli.order_id)).toMatchObject({ code: 0, status: 'paid' });
  });

  it('the sandbox payment app does not show, settle or refuse refunds of an order a real provider serves', async () => {
    const { order_id } = await gw.create();
    expect((await fetch(`${gw.url}/sandbox/pay/${order_id}`)).status).toBe(404);
    expect(await gw.pay(order_id)).toMatchObject({ code: 201 });
    const refunds = await fetch(`${gw.url}/sandbox/refunds/${order_id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'answer=refuse',
    });
    expect(await refunds.json()).toMatchObject({ code: 201 });
    expect((await gw.store.transactions.find(order_id))!.status).toBe('pending');
  });

  it('an account removed while its orders are pending: their refunds and cancels say so, nothing is half done', async () => {
    const { order_id, merchant_reference } = await gw.create({ host_type: '1' });
    await gw.store.accounts.removeChannelAccount(gw.merchant.wallet_id, 'alipay');
    gw.ctx.credentials.clear();
    try {
      const cancel = await gw.post(
        '/cancel',
        signed({ user_id: gw.merchant.user_id, merchant_reference }, gw.merchant.api_key),
      );
      expect(cancel).toMatchObject({ code: 1, detail: expect.stringMatching(/no longer has an account with alipay/) });
      expect((await gw.store.transactions.find(order_id))!.status).toBe('pending');
      // A new alipay order now goes to the sandbox (sandbox mode).
      const next = await gw.create();
      expect((await gw.store.transactions.find(next.order_id))!.channel).toBe('sandbox');
    } finally {
      await useAccount(gw, alipayAccount(gw.merchant.wallet_id, fake));
    }
  });
});
