// The POLi connector end to end, in live mode, against the fake POLi (real HTTP, HTTP Basic checked
// on every call) and a real merchant notification receiver: the create's limits, the hosted page's
// button to POLi, the nudge and the browser's return (both asked of GetTransaction), a customer who
// cancels and tries again, a dropped nudge found by reconciliation, a forged nudge, a refund refused
// before anything is recorded, and expiry. The page in Chromium: test/browser/provider-checkout.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { parseCidrList } from '../../src/notify/callback-safety.js';
import { queryAtProvider, servingOf } from '../../src/usecases/channels.js';
import { applyPaymentState } from '../../src/usecases/provider-payments.js';
import { captureLog } from '../support/log-capture.js';
import { Receiver } from '../notify/receiver.js';
import { refundBody } from '../support/api.js';
import { poliAccount, useAccount } from '../support/channels.js';
import { FakePoli } from '../support/fake-poli.js';
import { ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';
import { Visitor } from '../support/visitor.js';
import { until } from '../support/wait.js';

const LIFE_MS = 6_000;

describe.each(ENGINES)('the POLi connector on %s', (engine) => {
  let fake: FakePoli;
  let rx: Receiver;
  let gw: TestGateway;
  beforeAll(async () => {
    [fake, rx] = await Promise.all([FakePoli.start(), Receiver.start()]);
    gw = await startTestGateway(engine, {
      mode: 'live',
      providerTimeoutMs: 500,
      channelReconcileAfterMs: 1_000,
      orderExpiryMs: LIFE_MS,
      nonceTtlMs: 3_000,
      notify: { retryScheduleMs: [100], pollIntervalMs: 100, allowCidrs: parseCidrList('127.0.0.1/32') },
    });
    await useAccount(gw, poliAccount(gw.merchant.wallet_id, fake));
  });
  afterAll(async () => {
    // Every call the gateway made carried the merchant code and authentication code, and every Initiate was well formed.
    expect(fake?.refused).toEqual([]);
    await gw?.close();
    await Promise.all([fake?.close(), rx?.close()]);
  });

  const order = async (order_id: string) => (await gw.store.transactions.find(order_id))!;
  const callback_url = () => `${rx.url}/poli`;
  async function checkout(amount = '45.50') {
    const { reply, order_id, merchant_reference } = await gw.create({
      payment_method: 'polipay',
      amount,
      callback_url: callback_url(),
    });
    expect(reply).toMatchObject({ code: 0 });
    return { order_id, merchant_reference, visitor: new Visitor(gw, `/v2/checkout/${reply.nonce}`) };
  }
  const notified = (merchant_reference: string) => rx.first(merchant_reference);

  it('the page sends the customer to POLi; the nudge is asked of POLi, settles the order, and the merchant is told', async () => {
    const { order_id, merchant_reference, visitor } = await checkout();
    const href = await visitor.payButton();
    const t = fake.byReference(`${order_id}R`)!;
    expect(href).toBe(`${fake.url}/pay?token=${encodeURIComponent(t.token)}`);
    // What POLi was asked for: the order's amount in the wallet's currency, coming back to the page.
    expect(t).toMatchObject({
      PaymentAmount: 45.5,
      CurrencyCode: 'NZD',
      NotificationURL: `${gw.ctx.config.publicUrl}/channels/poli/notify`,
      SuccessURL: `${gw.ctx.config.publicUrl}${visitor.path}`,
      FailureURL: `${gw.ctx.config.publicUrl}${visitor.path}`,
      CancellationURL: `${gw.ctx.config.publicUrl}${visitor.path}`,
    });
    // A reload shows the same transaction: nothing more is initiated.
    expect(await visitor.payButton()).toBe(href);
    expect(fake.calls.filter((c) => c === 'Initiate')).toHaveLength(1);

    const asked = fake.calls.length;
    expect(await fake.finish(`${order_id}R`, 'Completed')).toMatchObject({ status: 200 });
    expect(fake.calls.slice(asked)).toEqual(['GetTransaction']);
    expect(await order(order_id)).toMatchObject({ status: 'paid' });
    expect((await gw.store.transactions.listPayments(order_id))[0]).toMatchObject({
      state: 'paid',
      provider_ref: t.TransactionRefNo,
      charged_amount: 4550,
      charged_currency: 'NZD',
    });
    expect((await notified(merchant_reference)).fields.get('status')).toBe('paid');
    expect(await gw.query(merchant_reference)).toMatchObject({ code: 0, status: 'paid', payment_method: 'polipay' });
    // A second nudge (POLi nudges again; a duplicate) changes nothing and is acknowledged.
    expect(await fake.nudge(t.token)).toMatchObject({ status: 200 });
    expect(await gw.store.outbox.listByOrder(order_id)).toHaveLength(1);
  });

  it("the browser's return with POLi's token asks POLi at once, then shows the page without the token", async () => {
    const { order_id, visitor } = await checkout();
    await visitor.payButton();
    const t = fake.byReference(`${order_id}R`)!;
    await fake.finish(`${order_id}R`, 'Completed', { nudge: false });
    const back = await visitor.get(`?token=${encodeURIComponent(t.token)}`);
    expect(back).toMatchObject({ status: 303, location: visitor.path });
    expect(await order(order_id)).toMatchObject({ status: 'paid' });
    expect((await visitor.get()).body).toContain('data-status="paid"');
  });

  it('a customer who cancels at POLi comes back and tries again: a new POLi transaction, the page says so', async () => {
    const { order_id, merchant_reference, visitor } = await checkout();
    const first = await visitor.payButton();
    const t1 = fake.byReference(`${order_id}R`)!;
    await fake.finish(`${order_id}R`, 'Cancelled', { nudge: false });
    expect((await visitor.get(`?token=${encodeURIComponent(t1.token)}`)).status).toBe(303);
    expect(await order(order_id)).toMatchObject({ status: 'pending' });
    expect((await gw.store.transactions.listPayments(order_id))[0]).toMatchObject({ attempt: 1, state: 'closed' });

    const page = await visitor.get();
    expect(page.body).toContain('id="pay-again"');
    const second = await visitor.payButton();
    expect(second).not.toBe(first);
    const t2 = fake.byReference(`${order_id}R2`)!;
    expect(t2.PaymentAmount).toBe(45.5);
    await fake.finish(`${order_id}R2`, 'Completed');
    expect(await order(order_id)).toMatchObject({ status: 'paid' });
    expect((await gw.store.transactions.listPayments(order_id)).map((p) => [p.attempt, p.state])).toEqual([
      [1, 'closed'],
      [2, 'paid'],
    ]);
    expect((await notified(merchant_reference)).fields.get('status')).toBe('paid');
  });

  it('a nudge that never came: reconciliation asks POLi by the stored token and settles the order', async () => {
    const { order_id, visitor } = await checkout();
    await visitor.payButton();
    await fake.finish(`${order_id}R`, 'Completed', { nudge: false });
    await until('reconciliation to find it paid', async () => (await order(order_id)).status === 'paid', 5_000);
  });

  it('ReceiptUnverified (POLi does not know whether the bank paid) leaves the order pending, and the log asks for an operator', async () => {
    const { order_id, visitor } = await checkout();
    await visitor.payButton();
    expect(await fake.finish(`${order_id}R`, 'ReceiptUnverified')).toMatchObject({ status: 200 });
    expect(await order(order_id)).toMatchObject({ status: 'pending' });
    const [payment] = await gw.store.transactions.listPayments(order_id);
    expect(payment.state).toBe('open');
    const { stream, lines } = captureLog<{ msg: string; attention?: string; out_trade_no?: string }>();
    const served = await servingOf(gw.ctx, await order(order_id));
    if (!served.ok) throw new Error(served.reason);
    const state = await queryAtProvider(served.serving, payment);
    await applyPaymentState(gw.ctx, payment, state, pino(stream));
    expect(lines).toContainEqual(
      expect.objectContaining({
        msg: 'provider payment needs an operator: the order stays pending',
        out_trade_no: `${order_id}R`,
        attention: expect.stringContaining('ReceiptUnverified') as string,
      }),
    );
    const [queued] = (await gw.store.reconciliation.listExceptions({ kind: 'provider_attention' })).filter(
      (x) => x.order_id === order_id,
    );
    expect(queued).toMatchObject({
      source: 'live',
      severity: 'normal',
      exception_status: 'open',
      out_trade_no: `${order_id}R`,
    });
  });

  it('a forged nudge (a token POLi does not know) is refused and settles nothing', async () => {
    const { order_id, visitor } = await checkout();
    await visitor.payButton();
    const forged = await fake.nudge('forged/token', `${gw.ctx.config.publicUrl}/channels/poli/notify`);
    expect(forged.status).not.toBe(200);
    // A nudge without a token at all.
    const empty = await fetch(`${gw.url}/channels/poli/notify`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'Token=',
    });
    expect(empty.status).not.toBe(200);
    expect(await order(order_id)).toMatchObject({ status: 'pending' });
  });

  it('a create under 1.00 is refused at create (454), with the reason, and nothing is opened at POLi', async () => {
    const small = await gw.post('/v2/transaction', gw.createBody({ payment_method: 'polipay', amount: '0.99' }));
    expect(small).toMatchObject({ code: 454, detail: expect.stringContaining('POLi takes 1.00 NZD or more') });
  });

  it('a refund of a POLi order is refused (556) and nothing is recorded', async () => {
    const { order_id, visitor } = await checkout();
    await visitor.payButton();
    await fake.finish(`${order_id}R`, 'Completed');
    expect(await order(order_id)).toMatchObject({ status: 'paid' });
    const r = await gw.post('/refund', refundBody(gw, order_id, '10.00'));
    expect(r).toMatchObject({ code: 556, detail: expect.stringContaining('poli has no refund') });
    expect(await gw.store.refunds.listByOrder(order_id)).toEqual([]);
    expect(await order(order_id)).toMatchObject({ status: 'paid', refunded_amount: 0 });
  });

  it('an order nobody paid ends failed after its life, POLi asked first; a transaction that timed out at POLi is closed', async () => {
    const { order_id, merchant_reference, visitor } = await checkout();
    await visitor.payButton();
    await fake.finish(`${order_id}R`, 'TimedOut', { nudge: false });
    await until('the order to expire', async () => (await order(order_id)).status === 'failed', LIFE_MS + 20_000);
    expect((await gw.store.transactions.listPayments(order_id))[0]).toMatchObject({ state: 'closed' });
    expect((await notified(merchant_reference)).fields.get('status')).toBe('failed');
  });
});
