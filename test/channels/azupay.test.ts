// The Azupay (PayID) connector end to end, in live mode, against the fake Azupay (real HTTP, the
// API key checked on every call, request ids in base64) and a real merchant notification receiver:
// the original WooCommerce plugin's `azupay` create, the PayID on the hosted page, the webhook
// checked by its per-request Authorization and confirmed by a GET, a wrong amount returned by
// Azupay (rejected, with message and msgId), expiry (failed), partial refunds, reconciliation
// after a dropped webhook, a cancel that deletes the request, and a create whose answer was lost.
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCidrList } from '../../src/notify/callback-safety.js';
import { resumePendingRefunds } from '../../src/usecases/resume-refunds.js';
import type { MerchantCredentials } from '../../src/cli/admin.js';
import { Receiver } from '../notify/receiver.js';
import { cancelBody, refundBody } from '../support/api.js';
import { azupayAccount, useAccount } from '../support/channels.js';
import { FakeAzupay } from '../support/fake-azupay.js';
import { ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';
import { Visitor } from '../support/visitor.js';
import { until } from '../support/wait.js';

describe.each(ENGINES)('the Azupay connector on %s', (engine) => {
  let fake: FakeAzupay;
  let rx: Receiver;
  let gw: TestGateway;
  let aud: MerchantCredentials;
  beforeAll(async () => {
    [fake, rx] = await Promise.all([FakeAzupay.start(), Receiver.start()]);
    gw = await startTestGateway(engine, {
      mode: 'live',
      providerTimeoutMs: 500,
      channelReconcileAfterMs: 1_000,
      refundWaitMs: 300,
      notify: { retryScheduleMs: [100], pollIntervalMs: 100, allowCidrs: parseCidrList('127.0.0.1/32') },
    });
    aud = await gw.newMerchant('AUD');
    await useAccount(gw, azupayAccount(aud.wallet_id, fake));
  });
  afterAll(async () => {
    // Every call the gateway made carried the API key, and every request was what the schema allows.
    expect(fake?.refused).toEqual([]);
    await gw?.close();
    await Promise.all([fake?.close(), rx?.close()]);
  });

  const order = async (order_id: string) => (await gw.store.transactions.find(order_id))!;
  async function checkout(over: Record<string, string> = {}) {
    const { reply, order_id, merchant_reference } = await gw.create(
      { payment_method: 'payid', amount: '45.50', callback_url: `${rx.url}/payid`, ...over },
      aud,
    );
    expect(reply).toMatchObject({ code: 0 });
    return { order_id, merchant_reference, visitor: new Visitor(gw, `/v2/checkout/${reply.nonce}`) };
  }
  const notified = (merchant_reference: string) => rx.first(merchant_reference);
  const payIdOn = (page: string) => /<code id="payid">([^<]+)<\/code>/.exec(page)?.[1];

  it("the WooCommerce plugin's payment_method=azupay is PayID: the page shows the PayID, the amount, the reference and the expiry; paid by the webhook", async () => {
    const { order_id, merchant_reference, visitor } = await checkout({ payment_method: 'azupay' });
    expect(await order(order_id)).toMatchObject({ payment_method: 'payid', channel: 'azupay' });
    const page = (await visitor.get()).body;
    const request = fake.byReference(`${order_id}T`)!;
    expect(payIdOn(page)).toBe(request.payID);
    expect(page).toContain('<code id="transfer-amount">45.50</code>');
    expect(page).toContain(`<code id="transfer-reference">${order_id}</code>`);
    expect(page).toContain(`<time datetime="${new Date(request.paymentExpiryDatetime).toISOString()}">`);
    // What Azupay was asked for: the amount in dollars, the order's end, a webhook with its own Authorization.
    expect(request).toMatchObject({
      paymentAmount: 45.5,
      notifyUrl: `${gw.ctx.config.publicUrl}/channels/azupay/notify`,
    });
    expect(request.notifyAuthorization).not.toContain(fake.api_key);
    expect(Date.parse(request.paymentExpiryDatetime)).toBe(
      (await order(order_id)).created_at + gw.ctx.config.orderExpiryMs,
    );
    // A reload shows the same PayID: nothing more is created.
    expect(payIdOn((await visitor.get()).body)).toBe(request.payID);
    expect(fake.calls.filter((c) => c === 'create')).toHaveLength(1);

    expect(await fake.pay(`${order_id}T`)).toMatchObject({ status: 200 });
    expect(await order(order_id)).toMatchObject({ status: 'paid' });
    expect((await gw.store.transactions.listPayments(order_id))[0]).toMatchObject({
      state: 'paid',
      provider_ref: request.paymentRequestId,
      charged_amount: 4550,
      charged_currency: 'AUD',
    });
    const n = await notified(merchant_reference);
    expect(Object.fromEntries(n.fields)).toMatchObject({
      payment_method: 'payid',
      status: 'paid',
      message: '',
      msgId: '',
    });
    expect(await gw.query(merchant_reference, { merchant: aud })).toMatchObject({
      code: 0,
      status: 'paid',
      payment_method: 'payid',
    });
    // A duplicate webhook changes nothing, nor a WAITING one arriving after it (out of order).
    expect(await fake.webhook(request)).toMatchObject({ status: 200 });
    const waiting = {
      ...fake.record(request),
      PaymentRequestStatus: { paymentRequestId: request.paymentRequestId, status: 'WAITING' },
    };
    expect(await fake.webhook(request, { body: JSON.stringify(waiting) })).toMatchObject({ status: 200 });
    expect(await order(order_id)).toMatchObject({ status: 'paid' });
    expect(await gw.store.outbox.listByOrder(order_id)).toHaveLength(1);
  });

  it('a payment of the wrong amount, returned by Azupay, is rejected with its reason and the PayID', async () => {
    const { order_id, merchant_reference, visitor } = await checkout();
    await visitor.get();
    const request = fake.byReference(`${order_id}T`)!;
    expect(await fake.pay(`${order_id}T`, { amount: 40 })).toMatchObject({ status: 200 });
    expect(await order(order_id)).toMatchObject({ status: 'rejected', msgId: request.payID });
    const n = await notified(merchant_reference);
    expect(n.fields.get('status')).toBe('rejected');
    expect(n.fields.get('message')).toContain('does not match');
    expect(n.fields.get('msgId')).toBe(request.payID);
  });

  it('an expired request ends the order failed, and the merchant is told', async () => {
    const { order_id, merchant_reference, visitor } = await checkout();
    await visitor.get();
    expect(await fake.expire(`${order_id}T`)).toMatchObject({ status: 200 });
    expect(await order(order_id)).toMatchObject({ status: 'failed' });
    expect((await notified(merchant_reference)).fields.get('status')).toBe('failed');
  });

  it('a webhook with another Authorization is refused; one that says COMPLETE of a waiting request settles nothing', async () => {
    const { order_id, visitor } = await checkout();
    await visitor.get();
    const request = fake.byReference(`${order_id}T`)!;
    expect((await fake.webhook(request, { authorization: fake.api_key })).status).toBe(500);
    expect((await fake.webhook(request, { authorization: 'forged' })).status).toBe(500);
    const lie = JSON.stringify({
      ...fake.record(request),
      PaymentRequestStatus: { paymentRequestId: request.paymentRequestId, status: 'COMPLETE', amountReceived: 45.5 },
    });
    expect(await fake.webhook(request, { body: lie })).toMatchObject({ status: 200 });
    expect(await order(order_id)).toMatchObject({ status: 'pending' });
  });

  it('partial refunds through Azupay, by the base64 request id; one in progress is learned later; more than is left is refused', async () => {
    const { order_id, visitor } = await checkout();
    await visitor.get();
    await fake.pay(`${order_id}T`);
    expect(await gw.post('/refund', refundBody(gw, order_id, '10.00', 'first', aud))).toEqual({ code: 0, message: '' });
    const request = fake.byReference(`${order_id}T`)!;
    expect(request.refunds).toMatchObject([{ amount: '10.00', status: 'COMPLETE' }]);
    expect(request.refunds[0].clientRefundID).toMatch(/^R[0-9a-f]{20}$/);
    fake.refundsComplete = false;
    try {
      expect(await gw.post('/refund', refundBody(gw, order_id, '5.50', 'second', aud))).toEqual({
        code: 0,
        message: '',
      });
      const pending = (await gw.store.refunds.listByOrder(order_id)).find((r) => r.refund_amount === 550)!;
      expect(pending.refund_status).toBe('pending');
      fake.finishRefunds();
      await resumePendingRefunds(gw.ctx, pino({ level: 'silent' }), 0);
      expect((await gw.store.refunds.listByOrder(order_id)).map((r) => r.refund_status).sort()).toEqual([
        'succeeded',
        'succeeded',
      ]);
    } finally {
      fake.refundsComplete = true;
    }
    expect(await gw.post('/refund', refundBody(gw, order_id, '30.01', 'too much', aud))).toMatchObject({ code: 550 });
    expect(await order(order_id)).toMatchObject({ status: 'paid', refunded_amount: 1550 });
  });

  it('a webhook that never came: reconciliation asks Azupay and settles the order', async () => {
    const { order_id, visitor } = await checkout();
    await visitor.get();
    await fake.pay(`${order_id}T`, { notify: false });
    await until('reconciliation to find it paid', async () => (await order(order_id)).status === 'paid', 5_000);
  });

  it("a merchant's cancel deletes the request at Azupay (its PayID de-registered)", async () => {
    const { order_id, merchant_reference, visitor } = await checkout();
    await visitor.get();
    const request = fake.byReference(`${order_id}T`)!;
    expect(await gw.post('/cancel', cancelBody(gw, merchant_reference, aud))).toMatchObject({ code: 0 });
    expect(fake.requests.has(request.paymentRequestId)).toBe(false);
    expect(await order(order_id)).toMatchObject({ status: 'canceled' });
  });

  it('a create whose answer was lost: the next visit finds the request Azupay made, and shows its PayID', async () => {
    const { order_id, visitor } = await checkout();
    fake.fail('create', 'timeout-after');
    expect((await visitor.get()).body).toContain('id="pay-unavailable"');
    const made = fake.byReference(`${order_id}T`)!;
    expect(payIdOn((await visitor.get()).body)).toBe(made.payID);
    expect([...fake.requests.values()].filter((r) => r.clientTransactionId === `${order_id}T`)).toHaveLength(1);
  });

  it('refuses what Azupay cannot take: a PayID create in a wallet of another currency has no account (302)', async () => {
    const nzd = await gw.newMerchant('NZD');
    const r = await gw.post('/v2/transaction', gw.createBody({ payment_method: 'payid' }, nzd));
    expect(r).toMatchObject({ code: 302 });
  });

  it('channel test: a call with the key proves the account; another key is said so', async () => {
    const account = azupayAccount(aud.wallet_id, fake);
    const connector = gw.ctx.connectors.azupay;
    expect(await connector.probe(account)).toMatchObject({ ok: true });
    const before = fake.refused.length;
    expect(await connector.probe({ ...account, secrets: { api_key: 'SECRwrong' } })).toMatchObject({
      ok: false,
      reason: expect.stringContaining('401') as string,
    });
    expect(fake.refused.splice(before)).toEqual([expect.stringContaining('wrong API key')]);
  });
});
