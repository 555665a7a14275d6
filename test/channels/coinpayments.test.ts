// The CoinPayments connector end to end, in live mode, against the fake CoinPayments (real HTTP,
// every request's signature checked, webhooks signed the same way) and a real merchant
// notification receiver: the invoice opened from the hosted page, the webhook confirmed by a GET
// of the invoice, the browser's return, a timed-out invoice ending the order failed, a dropped
// webhook found by reconciliation, forged and replayed webhooks, a refund refused before anything
// is recorded. The page in Chromium: test/browser/provider-checkout.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCidrList } from '../../src/notify/callback-safety.js';
import { Receiver } from '../notify/receiver.js';
import { refundBody } from '../support/api.js';
import { coinpaymentsAccount, useAccount } from '../support/channels.js';
import { FakeCoinPayments } from '../support/fake-coinpayments.js';
import { ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';
import { Visitor } from '../support/visitor.js';
import { until } from '../support/wait.js';

describe.each(ENGINES)('the CoinPayments connector on %s', (engine) => {
  let fake: FakeCoinPayments;
  let rx: Receiver;
  let gw: TestGateway;
  beforeAll(async () => {
    [fake, rx] = await Promise.all([FakeCoinPayments.start(), Receiver.start()]);
    gw = await startTestGateway(engine, {
      mode: 'live',
      providerTimeoutMs: 500,
      channelReconcileAfterMs: 1_000,
      notify: { retryScheduleMs: [100], pollIntervalMs: 100, allowCidrs: parseCidrList('127.0.0.1/32') },
    });
    await useAccount(gw, coinpaymentsAccount(gw.merchant.wallet_id, fake));
  });
  afterAll(async () => {
    // Every call the gateway made was signed with the integration's secret, and every invoice well formed.
    expect(fake?.refused).toEqual([]);
    await gw?.close();
    await Promise.all([fake?.close(), rx?.close()]);
  });

  const order = async (order_id: string) => (await gw.store.transactions.find(order_id))!;
  const notify_url = () => `${gw.ctx.config.publicUrl}/channels/coinpayments/notify`;
  async function checkout(amount = '45.50') {
    const { reply, order_id, merchant_reference } = await gw.create({
      payment_method: 'coin_payments',
      amount,
      callback_url: `${rx.url}/coin`,
    });
    expect(reply).toMatchObject({ code: 0 });
    return { order_id, merchant_reference, visitor: new Visitor(gw, `/v2/checkout/${reply.nonce}`) };
  }
  const notified = (merchant_reference: string) => rx.first(merchant_reference);

  it("the page sends the customer to the invoice's checkout; the webhook is confirmed by a GET and settles the order", async () => {
    const { order_id, merchant_reference, visitor } = await checkout();
    const href = await visitor.payButton();
    const invoice = fake.byReference(`${order_id}R`)!;
    // The order's amount in the wallet's currency, by CoinPayments' id for it, in its smallest unit.
    expect(invoice).toMatchObject({ value: '4550', currencyId: '5058', notificationsUrl: notify_url() });
    const back = `${gw.ctx.config.publicUrl}${visitor.path}`;
    expect(new URL(href).searchParams.get('invoice-id')).toBe(invoice.id);
    expect(new URL(href).searchParams.get('success-url')).toBe(back);
    expect(new URL(href).searchParams.get('cancel-url')).toBe(back);
    // A reload shows the same invoice: CoinPayments would make a second one if asked again.
    expect(await visitor.payButton()).toBe(href);
    expect(fake.calls.filter((c) => c === 'createInvoice')).toHaveLength(1);

    // Seen on the chain, waiting for confirmations: still pending.
    expect(await fake.settle(`${order_id}R`, 'pending')).toMatchObject({ status: 200 });
    expect(await order(order_id)).toMatchObject({ status: 'pending' });
    const asked = fake.calls.length;
    expect(await fake.settle(`${order_id}R`, 'paid')).toMatchObject({ status: 200 });
    expect(fake.calls.slice(asked)).toContain('getInvoice');
    expect(await order(order_id)).toMatchObject({ status: 'paid' });
    expect((await gw.store.transactions.listPayments(order_id))[0]).toMatchObject({
      state: 'paid',
      provider_ref: invoice.id,
      charged_amount: 4550,
      charged_currency: 'NZD',
    });
    expect((await notified(merchant_reference)).fields.get('status')).toBe('paid');
    expect(await gw.query(merchant_reference)).toMatchObject({
      code: 0,
      status: 'paid',
      payment_method: 'coin_payments',
    });
    // Completed later (credited to the merchant's balance), and a replay of the first webhook: nothing more.
    expect(await fake.settle(`${order_id}R`, 'completed')).toMatchObject({ status: 200 });
    expect(await fake.webhook(invoice)).toMatchObject({ status: 200 });
    // Out of order: the 'pending' webhook arriving after the payment changes nothing.
    expect(await fake.webhook(invoice, { body: fake.webhookBody(invoice, 'pending') })).toMatchObject({ status: 200 });
    expect(await order(order_id)).toMatchObject({ status: 'paid' });
    expect(await gw.store.outbox.listByOrder(order_id)).toHaveLength(1);
  });

  it("a webhook that says paid when the invoice is not is settled by the invoice's own status", async () => {
    const { order_id, visitor } = await checkout();
    await visitor.payButton();
    const invoice = fake.byReference(`${order_id}R`)!;
    // Signed (the secret leaked, say) but untrue: the GET says unpaid.
    expect(await fake.webhook(invoice, { body: fake.webhookBody(invoice, 'paid') })).toMatchObject({ status: 200 });
    expect(await order(order_id)).toMatchObject({ status: 'pending' });
  });

  it('forged webhooks are refused and settle nothing: another secret, another address signed, no headers', async () => {
    const { order_id, visitor } = await checkout();
    await visitor.payButton();
    const invoice = fake.byReference(`${order_id}R`)!;
    invoice.status = 'paid';
    const body = fake.webhookBody(invoice);
    expect((await fake.webhook(invoice, { body, secret: 'not-the-secret' })).status).toBe(500);
    expect((await fake.webhook(invoice, { body, signedUrl: 'https://elsewhere.example/notify' })).status).toBe(500);
    const bare = await fetch(notify_url(), { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(bare.status).toBe(500);
    expect(await order(order_id)).toMatchObject({ status: 'pending' });
    invoice.status = 'unpaid';
  });

  it('a timed-out invoice ends the order failed, and the merchant is told', async () => {
    const { order_id, merchant_reference, visitor } = await checkout();
    await visitor.payButton();
    expect(await fake.settle(`${order_id}R`, 'timedOut')).toMatchObject({ status: 200 });
    expect(await order(order_id)).toMatchObject({ status: 'failed' });
    expect((await gw.store.transactions.listPayments(order_id))[0]).toMatchObject({ state: 'closed' });
    expect((await notified(merchant_reference)).fields.get('status')).toBe('failed');
    // The page shows the end, and opens nothing more.
    expect((await visitor.get()).body).toContain('data-status="failed"');
    expect(fake.calls.filter((c) => c === 'createInvoice').length).toBeGreaterThan(0);
  });

  it("the browser's return asks CoinPayments at once", async () => {
    const { order_id, visitor } = await checkout();
    await visitor.payButton();
    await fake.settle(`${order_id}R`, 'paid', { notify: false });
    expect(await visitor.get('?from=coinpayments')).toMatchObject({ status: 303, location: visitor.path });
    expect(await order(order_id)).toMatchObject({ status: 'paid' });
  });

  it('a webhook that never came: reconciliation asks for the invoice and settles the order', async () => {
    const { order_id, visitor } = await checkout();
    await visitor.payButton();
    await fake.settle(`${order_id}R`, 'completed', { notify: false });
    await until('reconciliation to find it paid', async () => (await order(order_id)).status === 'paid', 5_000);
  });

  it('no answer to the invoice (a timeout, a 500) is no refusal: the page asks the customer to try again, and nothing is failed', async () => {
    const { order_id, visitor } = await checkout();
    fake.fail('createInvoice', 'http-500');
    const page = await visitor.get();
    expect(page.body).toContain('id="pay-unavailable"');
    expect(await order(order_id)).toMatchObject({ status: 'pending' });
    // Tried again: the invoice is made.
    await visitor.payButton();
    expect(fake.byReference(`${order_id}R`)).toBeDefined();
  });

  it('a refund of a CoinPayments order is refused (556) and nothing is recorded', async () => {
    const { order_id, visitor } = await checkout();
    await visitor.payButton();
    await fake.settle(`${order_id}R`, 'paid');
    expect(await order(order_id)).toMatchObject({ status: 'paid' });
    const r = await gw.post('/refund', refundBody(gw, order_id, '10.00'));
    expect(r).toMatchObject({ code: 556, detail: expect.stringContaining('coinpayments has no refund') });
    expect(await gw.store.refunds.listByOrder(order_id)).toEqual([]);
  });

  it('channel test: a signed call proves the account; a wrong secret is said so', async () => {
    const account = coinpaymentsAccount(gw.merchant.wallet_id, fake);
    const connector = gw.ctx.connectors.coinpayments;
    expect(await connector.probe(account)).toMatchObject({ ok: true });
    const before = fake.refused.length;
    expect(await connector.probe({ ...account, secrets: { client_secret: 'wrong' } })).toMatchObject({
      ok: false,
      reason: expect.stringContaining('401') as string,
    });
    // The fake refused it for its signature, as CoinPayments would: not a failure of the gateway's requests.
    expect(fake.refused.splice(before)).toEqual([expect.stringContaining('bad signature')]);
  });
});
