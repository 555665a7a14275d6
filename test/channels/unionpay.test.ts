// The UnionPay connector (ACP 5.1.0) end to end, in live mode, against the fake UnionPay gateway
// (real HTTP; a root, a middle and UnionPay's certificate made by the test; the merchant's key in
// a .pfx with a password; every request's signature checked, every answer and notification signed)
// and a real merchant notification receiver: the page's signed form posted to the cashier, the
// back notification confirmed by queryTrans, the cashier's POST back to the page, forged and
// foreign-signed messages, a refused card tried again, partial refunds and a same-day revoke,
// reconciliation after a dropped notification. The page in Chromium: test/browser/provider-checkout.test.ts.
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCidrList } from '../../src/notify/callback-safety.js';
import { unionpayDescriptor } from '../../src/connectors/unionpay/descriptor.js';
import { resumePendingRefunds } from '../../src/usecases/resume-refunds.js';
import { Receiver } from '../notify/receiver.js';
import { refundBody } from '../support/api.js';
import { unionpayAccount, useAccount } from '../support/channels.js';
import { FakeUnionpay } from '../support/fake-unionpay.js';
import { ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';
import { Visitor } from '../support/visitor.js';
import { until } from '../support/wait.js';

const unescape = (s: string) =>
  s
    .replaceAll('&quot;', '"')
    .replaceAll('&#39;', "'")
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&amp;', '&');

/** The page's form to UnionPay: its action and fields, as a browser would post them. */
function formOn(page: string): { action: string; fields: Record<string, string> } {
  const form = /<form id="unionpay-form" method="post" action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/.exec(page);
  if (!form) throw new Error(`no UnionPay form on the page: ${page.slice(0, 300)}`);
  const fields: Record<string, string> = {};
  for (const m of form[2].matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
    fields[m[1]] = unescape(m[2]);
  return { action: unescape(form[1]), fields };
}

describe.each(ENGINES)('the UnionPay connector on %s', (engine) => {
  let fake: FakeUnionpay;
  let rx: Receiver;
  let gw: TestGateway;
  beforeAll(async () => {
    [fake, rx] = await Promise.all([FakeUnionpay.start(), Receiver.start()]);
    gw = await startTestGateway(engine, {
      mode: 'live',
      providerTimeoutMs: 1_000,
      channelReconcileAfterMs: 1_000,
      refundWaitMs: 300,
      notify: { retryScheduleMs: [100], pollIntervalMs: 100, allowCidrs: parseCidrList('127.0.0.1/32') },
    });
    await useAccount(gw, unionpayAccount(gw.merchant.wallet_id, fake));
  });
  afterAll(async () => {
    // Every request the gateway made (and every form it gave a browser) was signed with the merchant's key.
    expect(fake?.refused).toEqual([]);
    await gw?.close();
    await Promise.all([fake?.close(), rx?.close()]);
  });

  const order = async (order_id: string) => (await gw.store.transactions.find(order_id))!;
  async function checkout() {
    const { reply, order_id, merchant_reference } = await gw.create({
      payment_method: 'upi_upop',
      callback_url: `${rx.url}/unionpay`,
    });
    expect(reply).toMatchObject({ code: 0 });
    return { order_id, merchant_reference, visitor: new Visitor(gw, `/v2/checkout/${reply.nonce}`) };
  }
  /** The customer posts the page's form to UnionPay's cashier. */
  async function postForm(visitor: Visitor): Promise<{ fields: Record<string, string>; cashier: string }> {
    const { action, fields } = formOn((await visitor.get()).body);
    const res = await fetch(action, { method: 'POST', body: new URLSearchParams(fields) });
    return { fields, cashier: await res.text() };
  }
  const notified = (merchant_reference: string) => rx.first(merchant_reference);

  it("the page's signed consume goes to the cashier; the back notification is confirmed by queryTrans and settles the order", async () => {
    const { order_id, merchant_reference, visitor } = await checkout();
    const stored = await order(order_id);
    const { fields, cashier } = await postForm(visitor);
    expect(cashier).toContain('id="unionpay"');
    expect(fields).toMatchObject({
      version: '5.1.0',
      signMethod: '01',
      txnType: '01',
      txnSubType: '01',
      bizType: '000201',
      merId: fake.mer_id,
      orderId: `${order_id}F`,
      // A domestic account: the CNY amount, in fen, as ISO 4217 number 156.
      currencyCode: '156',
      txnAmt: String(stored.amount_cny),
      frontUrl: `${gw.ctx.config.publicUrl}${visitor.path}`,
      backUrl: `${gw.ctx.config.publicUrl}/channels/unionpay/notify`,
      certId: fake.merchantCertId,
    });
    expect(fields.txnTime).toMatch(/^\d{14}$/);
    // A reload shows the same form: one consume per payment.
    expect(formOn((await visitor.get()).body).fields).toEqual(fields);

    const asked = fake.calls.length;
    expect(await fake.pay(`${order_id}F`)).toMatchObject({ status: 200 });
    expect(fake.calls.slice(asked)).toEqual(['query']);
    expect(await order(order_id)).toMatchObject({ status: 'paid' });
    const consume = fake.consumes.get(`${order_id}F`)!;
    expect((await gw.store.transactions.listPayments(order_id))[0]).toMatchObject({
      state: 'paid',
      provider_ref: consume.queryId,
      charged_currency: 'CNY',
    });
    expect((await notified(merchant_reference)).fields.get('status')).toBe('paid');
    // UnionPay sends it again (up to five times): nothing more.
    expect(await fake.notify(consume)).toMatchObject({ status: 200 });
    expect(await gw.store.outbox.listByOrder(order_id)).toHaveLength(1);
  });

  it("the cashier's POST back to the page (no visit cookie) asks UnionPay, then shows the page", async () => {
    const { order_id, visitor } = await checkout();
    const { cashier } = await postForm(visitor);
    await fake.pay(`${order_id}F`, { notify: false });
    const back = formOn(cashier.replace('id="back-form"', 'id="unionpay-form"'));
    const res = await fetch(back.action, {
      method: 'POST',
      body: new URLSearchParams(back.fields),
      redirect: 'manual',
    });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(visitor.path);
    expect(await order(order_id)).toMatchObject({ status: 'paid' });
    // A POST to a page nobody opened finds nothing.
    expect((await fetch(`${gw.url}/v2/checkout/NOSUCHNONCE`, { method: 'POST', body: 'a=b' })).status).toBe(404);
  });

  it("forged notifications are refused: another CA's certificate naming UnionPay, one of the same CA that is not UnionPay's (a merchant's), a changed field", async () => {
    const { order_id, visitor } = await checkout();
    await postForm(visitor);
    await fake.pay(`${order_id}F`, { notify: false });
    const consume = fake.consumes.get(`${order_id}F`)!;
    // Paid at the fake, but the gateway is told only by forgeries: the order stays pending.
    consume.status = 'waiting';
    expect((await fake.notify(consume, { by: 'foreign' })).status).toBe(500);
    expect((await fake.notify(consume, { by: 'merchant' })).status).toBe(500);
    expect((await fake.notify(consume, { tamper: true })).status).toBe(500);
    expect(await order(order_id)).toMatchObject({ status: 'pending' });
  });

  it("an answer that is not UnionPay's is no answer: the order is not settled on it", async () => {
    const { order_id, visitor } = await checkout();
    await postForm(visitor);
    await fake.pay(`${order_id}F`, { notify: false });
    fake.answers = 'foreign';
    try {
      expect((await fake.notify(fake.consumes.get(`${order_id}F`)!)).status).toBe(500);
      fake.answers = 'unsigned';
      expect((await fake.notify(fake.consumes.get(`${order_id}F`)!)).status).toBe(500);
      expect(await order(order_id)).toMatchObject({ status: 'pending' });
    } finally {
      fake.answers = 'ok';
    }
    expect((await fake.notify(fake.consumes.get(`${order_id}F`)!)).status).toBe(200);
    expect(await order(order_id)).toMatchObject({ status: 'paid' });
  });

  it('a card the bank refused: the customer comes back and tries again with a new consume', async () => {
    const { order_id, visitor } = await checkout();
    await postForm(visitor);
    await fake.pay(`${order_id}F`, { fail: true });
    expect((await visitor.get('?from=unionpay')).status).toBe(303);
    const page = (await visitor.get()).body;
    expect(page).toContain('id="pay-again"');
    expect(formOn(page).fields.orderId).toBe(`${order_id}F2`);
    await postForm(visitor);
    await fake.pay(`${order_id}F2`);
    expect(await order(order_id)).toMatchObject({ status: 'paid' });
  });

  it('partial refunds (04) learned by querying them; a whole refund UnionPay wants revoked is a same-day revoke (31)', async () => {
    const { order_id, visitor } = await checkout();
    await postForm(visitor);
    await fake.pay(`${order_id}F`);
    const paid = await order(order_id);
    fake.refundsComplete = false;
    try {
      expect(await gw.post('/refund', refundBody(gw, order_id, '20.00', 'part'))).toEqual({ code: 0, message: '' });
      const [refund] = await gw.store.refunds.listByOrder(order_id);
      expect(refund.refund_status).toBe('pending');
      expect(fake.backs.get(refund.refund_id)).toMatchObject({
        txnType: '04',
        origQryId: fake.consumes.get(`${order_id}F`)!.queryId,
      });
      fake.finishRefunds();
      await resumePendingRefunds(gw.ctx, pino({ level: 'silent' }), 0);
      expect((await gw.store.refunds.listByOrder(order_id))[0].refund_status).toBe('succeeded');
    } finally {
      fake.refundsComplete = true;
    }
    // Another order refunded whole on its day: UnionPay answers that it must be revoked.
    const other = await checkout();
    await postForm(other.visitor);
    await fake.pay(`${other.order_id}F`);
    fake.revokeSameDay = true;
    try {
      const whole = (await order(other.order_id)).amount;
      expect(await gw.post('/refund', refundBody(gw, other.order_id, (whole / 100).toFixed(2), 'whole'))).toEqual({
        code: 0,
        message: '',
      });
      const [refund] = await gw.store.refunds.listByOrder(other.order_id);
      expect(fake.backs.get(`${refund.refund_id}V`)).toMatchObject({ txnType: '31' });
      expect(refund.refund_status).toBe('pending');
      await resumePendingRefunds(gw.ctx, pino({ level: 'silent' }), 0);
      expect((await gw.store.refunds.listByOrder(other.order_id))[0].refund_status).toBe('succeeded');
    } finally {
      fake.revokeSameDay = false;
    }
    expect(paid.status).toBe('paid');
  });

  it('a notification that never came: reconciliation asks queryTrans and settles the order', async () => {
    const { order_id, visitor } = await checkout();
    await postForm(visitor);
    await fake.pay(`${order_id}F`, { notify: false });
    await until('reconciliation to find it paid', async () => (await order(order_id)).status === 'paid', 5_000);
  });

  it('an account is checked whole: the .pfx opens with its password, the middle is issued by the root', () => {
    const account = unionpayAccount(gw.merchant.wallet_id, fake);
    expect(unionpayDescriptor.checkAccount(account, Date.now())).toEqual([]);
    expect(
      unionpayDescriptor.checkAccount(
        { ...account, secrets: { ...account.secrets, sign_cert_password: 'nope' } },
        Date.now(),
      ),
    ).toEqual([expect.stringContaining('cannot be opened with its password')]);
    expect(
      unionpayDescriptor.checkAccount(
        { ...account, config: { ...account.config, root_cert: fake.middle.pem } },
        Date.now(),
      ),
    ).toEqual(['the middle certificate is not issued by the root certificate']);
  });

  it("channel test: a signed query proves the account, and UnionPay's answer verifies; answers of a forger fail it", async () => {
    const account = unionpayAccount(gw.merchant.wallet_id, fake);
    const connector = gw.ctx.connectors.unionpay;
    expect(await connector.probe(account)).toMatchObject({ ok: true });
    fake.answers = 'foreign';
    try {
      expect(await connector.probe(account)).toMatchObject({
        ok: false,
        reason: expect.stringContaining("not UnionPay's") as string,
      });
    } finally {
      fake.answers = 'ok';
    }
  });
});
