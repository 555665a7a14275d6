// The WeChat Pay connector end to end, in live mode, against the fake WeChat Pay API v3 (real HTTP,
// real keys: the fake verifies every Authorization, signs every answer with the platform key and
// encrypts its notifications with the APIv3 key) and a real merchant notification receiver.
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseCidrList } from '../../src/notify/callback-safety.js';
import { DatabaseUnavailable } from '../../src/ports/store.js';
import { paymentPaid } from '../../src/usecases/provider-payments.js';
import { resumePendingRefunds } from '../../src/usecases/resume-refunds.js';
import { Receiver } from '../notify/receiver.js';
import { addWallet, cancelBody, createHosted, gatewayData, refundBody } from '../support/api.js';
import { expectConcurrentCreatesOpenOnce, useAccount, wechatpayAccount } from '../support/channels.js';
import { FakeWechatPay, type AnswerSigning } from '../support/fake-wechatpay.js';
import { ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';
import { until } from '../support/wait.js';

const silent = pino({ level: 'silent' });
const UA = {
  desktop: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36',
  phone:
    'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Mobile Safari/537.36',
  wechat:
    'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Mobile Safari/537.36 MicroMessenger/8.0.44',
};

describe.each(ENGINES)('the WeChat Pay connector on %s', (engine) => {
  let fake: FakeWechatPay;
  let rx: Receiver;
  let gw: TestGateway;
  beforeAll(async () => {
    [fake, rx] = await Promise.all([FakeWechatPay.start(), Receiver.start()]);
    gw = await startTestGateway(engine, {
      mode: 'live',
      providerTimeoutMs: 500,
      refundWaitMs: 300,
      notify: { retryScheduleMs: [100], pollIntervalMs: 100, allowCidrs: parseCidrList('127.0.0.1/32') },
    });
    await useAccount(gw, wechatpayAccount(gw.merchant.wallet_id, fake));
  });
  afterAll(async () => {
    // Every request the gateway made carried a good Authorization and the platform key's id.
    expect(fake?.refused).toEqual([]);
    await gw?.close();
    await Promise.all([fake?.close(), rx?.close()]);
  });

  const order = (order_id: string) => gw.store.transactions.find(order_id);
  const callback_url = () => `${rx.url}/wechat`;
  const body = (over: Record<string, string> = {}, wallet?: Parameters<typeof createHosted>[2]) =>
    gw.createBody({ payment_method: 'wechat', callback_url: callback_url(), ...over }, wallet);
  const hosted = (over: Record<string, string> = {}, wallet?: Parameters<typeof createHosted>[2]) =>
    createHosted(gw, { payment_method: 'wechat', callback_url: callback_url(), ...over }, wallet);
  const checkout = (over: Record<string, string> = {}) =>
    gw.create({ payment_method: 'wechat', callback_url: callback_url(), ...over });

  async function paidOrder(): Promise<{ order_id: string; merchant_reference: string }> {
    const created = await hosted();
    await fake.pay(created.order_id);
    expect((await order(created.order_id))!.status).toBe('paid');
    return created;
  }

  it('merchant-hosted QR: a Native order in CNY fen at create, its code_url in the gateway data, paid by the encrypted notification, the merchant told', async () => {
    const { nonce, order_id, merchant_reference } = await hosted();
    const stored = (await order(order_id))!;
    const sent = JSON.parse(fake.orders.get(order_id)!.body) as Record<string, any>;
    expect(sent).toMatchObject({
      appid: fake.appid,
      mchid: fake.mchid,
      description: 'Pinot Noir, Otago',
      out_trade_no: order_id,
      notify_url: `${gw.ctx.config.publicUrl}/channels/wechatpay/notify`,
      amount: { total: stored.amount_cny, currency: 'CNY' },
    });
    // The order's end, in WeChat Pay's RFC 3339 with Beijing's offset.
    expect(Date.parse(sent.time_expire)).toBe(
      Math.floor((stored.created_at + gw.ctx.config.orderExpiryMs) / 1000) * 1000,
    );
    expect(sent.time_expire).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+08:00$/);
    expect(await gatewayData(gw, nonce)).toMatchObject({
      code: 0,
      data: { qr_code_url: fake.orders.get(order_id)!.code_url },
    });

    await fake.pay(order_id);
    expect(fake.notifications.at(-1)).toEqual({ out_trade_no: order_id, status: 204 });
    expect((await order(order_id))!.status).toBe('paid');
    expect((await gw.store.transactions.listPayments(order_id))[0]).toMatchObject({
      state: 'paid',
      provider_ref: fake.orders.get(order_id)!.transaction_id,
    });
    await until('the merchant to be notified', () =>
      rx.received.some(
        (r) => r.fields.get('merchant_reference') === merchant_reference && r.fields.get('status') === 'paid',
      ),
    );
    expect(await gw.query(merchant_reference)).toMatchObject({ code: 0, status: 'paid', payment_method: 'wechat' });
  });

  it("a re-create of the pending reference with another product_name and ip: the phone's page asks WeChat Pay for the same H5 order as first opened, and gets it", async () => {
    const phone = async (nonce: string) =>
      (await fetch(`${gw.url}/v2/checkout/${nonce}`, { headers: { 'user-agent': UA.phone } })).text();
    const first = await checkout();
    expect(await phone(first.reply.nonce)).toContain('id="pay-button"');
    const sent = fake.orders.get(`${first.order_id}R`)!.body;
    const again = await checkout({
      merchant_reference: first.merchant_reference,
      product_name: 'Riesling, Waipara',
      ip: '203.0.113.9',
    });
    expect(again.reply).toMatchObject({ code: 0 });
    expect((await order(first.order_id))!.product_name).toBe('Riesling, Waipara');
    // WeChat Pay takes an out_trade_no again only with the same parameters: the ones the payment was opened with.
    const orders = fake.calls.filter((c) => c === 'order').length;
    const html = await phone(again.reply.nonce);
    expect(html).toContain('id="pay-button"');
    expect(fake.calls.filter((c) => c === 'order').length).toBe(orders + 1);
    expect(fake.orders.get(`${first.order_id}R`)!.body).toBe(sent);
  });

  it('notifications: duplicates are taken; a probe signature, another key, a resource that does not open, another merchant are not', async () => {
    const { order_id } = await hosted();
    fake.orders.get(order_id)!.trade_state = 'SUCCESS';
    expect(await fake.notify(order_id, fake.notification(order_id, { signature: 'probe' }))).toBe(500);
    expect(await fake.notify(order_id, fake.notification(order_id, { signature: 'bad' }))).toBe(500);
    expect(
      await fake.notify(order_id, fake.notification(order_id, { apiv3Key: '0123456789abcdef0123456789abcdef' })),
    ).toBe(500);
    const tx = {
      mchid: '1900000999',
      out_trade_no: order_id,
      transaction_id: 'x',
      trade_state: 'SUCCESS',
      amount: { total: 1, currency: 'CNY' },
    };
    expect(await fake.notify(order_id, fake.notification(order_id, { transaction: tx }))).toBe(500);
    // A body changed after signing.
    const note = fake.notification(order_id);
    expect(await fake.notify(order_id, { ...note, body: note.body.replace('支付成功', 'paid') })).toBe(500);
    expect((await order(order_id))!.status).toBe('pending');
    expect(await fake.notify(order_id)).toBe(204);
    expect(await fake.notify(order_id)).toBe(204);
    expect((await order(order_id))!.status).toBe('paid');
    expect(await gw.store.outbox.listByOrder(order_id)).toHaveLength(1);
  });

  it('a notification the gateway could not record (the database away) is answered 500, sent again, then taken', async () => {
    const { order_id } = await hosted();
    fake.orders.get(order_id)!.trade_state = 'SUCCESS';
    const away = vi
      .spyOn(gw.store.transactions, 'findPayment')
      .mockRejectedValueOnce(new DatabaseUnavailable('no writable PostgreSQL primary'));
    // A 200 (the API's error answer) would tell WeChat Pay it was received, and it would not come again.
    expect(await fake.notify(order_id)).toBe(500);
    expect(away).toHaveBeenCalledTimes(1);
    away.mockRestore();
    // Nor is a body refused before the route (too large): not the API's 200.
    const tooLarge = await fetch(`${gw.url}/channels/wechatpay/notify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"id":"${'x'.repeat(70_000)}"}`,
    });
    expect(tooLarge.status).toBe(500);
    expect(await tooLarge.text()).toContain('FAIL');
    expect((await order(order_id))!.status).toBe('pending');
    expect(await fake.notify(order_id)).toBe(204);
    expect((await order(order_id))!.status).toBe('paid');
  });

  it("a paid amount other than the order's is not taken", async () => {
    const { order_id } = await hosted();
    const o = fake.orders.get(order_id)!;
    o.trade_state = 'SUCCESS';
    const tx = {
      mchid: fake.mchid,
      appid: fake.appid,
      out_trade_no: order_id,
      transaction_id: o.transaction_id,
      trade_state: 'SUCCESS',
      amount: { total: 1, currency: 'CNY' },
    };
    expect(await fake.notify(order_id, fake.notification(order_id, { transaction: tx }))).toBe(500);
    expect((await order(order_id))!.status).toBe('pending');
  });

  it.each<[AnswerSigning, RegExp]>([
    ['probe', /probe/],
    ['none', /without a WeChat Pay signature/],
    ['skewed', /more than 5 minutes/],
    ['wrong-key', /does not verify/],
  ])('an answer signed %s is no answer: the create is code 1 and nothing is stored as opened', async (signing, why) => {
    fake.signing = signing;
    try {
      const reply = await gw.post('/v2/transaction', body({ host_type: '1' }));
      expect(reply).toMatchObject({ code: 1, detail: expect.stringMatching(why) });
    } finally {
      fake.signing = 'ok';
    }
  });

  it('the hosted page: instructions on a desktop unless present_qr, the Native QR with it, H5 on a phone, the QR to long-press inside WeChat', async () => {
    const visit = async (ua: string, over: Record<string, string> = {}) => {
      const { reply, order_id } = await checkout(over);
      const res = await fetch(`${gw.url}/v2/checkout/${reply.nonce}`, { headers: { 'user-agent': ua } });
      return { order_id, nonce: reply.nonce as string, html: await res.text() };
    };
    const plain = await visit(UA.desktop);
    expect(plain.html).toContain('Continue in WeChat on your phone');
    expect(fake.orders.has(plain.order_id)).toBe(false);

    const qr = await visit(UA.desktop, { present_qr: '1' });
    expect(qr.html).toContain('alt="WeChat Pay QR code"');
    expect(fake.orders.get(qr.order_id)).toMatchObject({ trade_type: 'NATIVE' });

    const phone = await visit(UA.phone);
    const o = fake.orders.get(`${phone.order_id}R`)!;
    expect(o).toMatchObject({ trade_type: 'H5' });
    expect(JSON.parse(o.body)).toMatchObject({
      scene_info: { payer_client_ip: '122.122.122.1', h5_info: { type: 'Wap' } },
    });
    const href = /id="pay-button" href="([^"]+)"/.exec(phone.html)![1].replaceAll('&amp;', '&');
    expect(new URL(href).searchParams.get('redirect_url')).toBe(
      `${gw.ctx.config.publicUrl}/v2/checkout/${phone.nonce}`,
    );

    const inWechat = await visit(UA.wechat);
    expect(inWechat.html).toContain('Scan QR Code in Image');
    expect(fake.orders.get(inWechat.order_id)).toMatchObject({ trade_type: 'NATIVE' });
  });

  it('partial refunds: out_refund_no is the refund_id; a PROCESSING refund answers 0, stays pending, and is confirmed once WeChat Pay finishes it', async () => {
    const { order_id } = await paidOrder();
    expect(await gw.post('/refund', refundBody(gw, order_id, '20.00', 'a'))).toEqual({ code: 0, message: '' });
    fake.refundStatus = 'PROCESSING';
    try {
      expect(await gw.post('/refund', refundBody(gw, order_id, '100.00', 'b'))).toEqual({ code: 0, message: '' });
    } finally {
      fake.refundStatus = 'SUCCESS';
    }
    const refunds = await gw.store.refunds.listByOrder(order_id);
    expect(refunds.map((r) => r.refund_status)).toEqual(['succeeded', 'pending']);
    const o = fake.orders.get(order_id)!;
    expect([...o.refunds.keys()]).toEqual(refunds.map((r) => r.refund_id));
    expect([...o.refunds.values()].reduce((s, r) => s + r.refund, 0)).toBe(o.total);
    await resumePendingRefunds(gw.ctx, silent, 0);
    expect((await gw.store.refunds.listByOrder(order_id))[1].refund_status).toBe('pending');
    fake.settleRefunds();
    // The recovery takes refunds last changed before now: the round above touched this one, perhaps in this very millisecond.
    await new Promise((r) => setTimeout(r, 5));
    await resumePendingRefunds(gw.ctx, silent, 0);
    expect((await gw.store.refunds.listByOrder(order_id))[1].refund_status).toBe('succeeded');
  });

  it('a refund answered 500 after it was made, and one reset before: each made exactly once, under its refund_id', async () => {
    const { order_id } = await paidOrder();
    fake.fail('refund', 'http-500-after');
    fake.fail('refund-query', 'timeout');
    expect(await gw.post('/refund', refundBody(gw, order_id, '10.00', 'after'))).toMatchObject({ code: 1 });
    fake.fail('refund', 'timeout');
    fake.fail('refund-query', 'http-500');
    expect(await gw.post('/refund', refundBody(gw, order_id, '15.00', 'before'))).toMatchObject({ code: 1 });
    expect(fake.orders.get(order_id)!.refunds.size).toBe(1);
    expect(await resumePendingRefunds(gw.ctx, silent, 0)).toBe(2);
    const refunds = await gw.store.refunds.listByOrder(order_id);
    expect(refunds.map((r) => r.refund_status)).toEqual(['succeeded', 'succeeded']);
    expect([...fake.orders.get(order_id)!.refunds.keys()].sort()).toEqual(refunds.map((r) => r.refund_id).sort());
  });

  it('a refund WeChat Pay refuses (NOT_ENOUGH) answers 556 and releases its amount', async () => {
    const { order_id } = await paidOrder();
    fake.fail('refund', { business: 'NOT_ENOUGH', message: '基本账户余额不足' });
    expect(await gw.post('/refund', refundBody(gw, order_id, '20.00', 'r'))).toMatchObject({
      code: 556,
      detail: expect.stringMatching(/NOT_ENOUGH/),
    });
    expect((await order(order_id))!.refunded_amount).toBe(0);
  });

  it('cancel closes an unpaid order at WeChat Pay; a paid one answers 900 and the order is paid', async () => {
    const open = await hosted();
    expect(await gw.post('/cancel', cancelBody(gw, open.merchant_reference))).toMatchObject({ code: 0 });
    expect(fake.orders.get(open.order_id)).toMatchObject({ trade_state: 'CLOSED' });
    const paid = await hosted();
    await fake.pay(paid.order_id, { notify: false });
    expect(await gw.post('/cancel', cancelBody(gw, paid.merchant_reference))).toMatchObject({ code: 900 });
    expect((await order(paid.order_id))!.status).toBe('paid');
  });

  it('cancel of an order whose Native order never reached WeChat Pay: the close finds no order, so nothing can be paid, and the order is canceled', async () => {
    fake.fail('order', 'http-500');
    const sent = body({ host_type: '1' });
    expect(await gw.post('/v2/transaction', sent)).toMatchObject({ code: 1 });
    const created = { merchant_reference: sent.merchant_reference };
    const { order_id } = (await gw.store.transactions.findByReference(
      gw.merchant.user_id,
      created.merchant_reference,
    ))!;
    expect(fake.orders.has(order_id)).toBe(false);
    expect(await gw.store.transactions.listPayments(order_id)).toMatchObject([{ state: 'open' }]);
    expect(await gw.post('/cancel', cancelBody(gw, created.merchant_reference))).toMatchObject({ code: 0 });
    expect((await order(order_id))!.status).toBe('canceled');
    expect(await gw.store.transactions.listPayments(order_id)).toMatchObject([{ state: 'closed' }]);
  });

  it('a second payment of an order already paid (two flows both paid) is logged for an operator to refund; the order is paid once', async () => {
    const { order_id } = await paidOrder();
    const first = (await gw.store.transactions.listPayments(order_id))[0];
    const { provider, charged_amount, charged_currency } = first;
    const now = Date.now();
    const second = await gw.store.transactions.addPayment({
      out_trade_no: `${order_id}R`,
      order_id,
      provider,
      flow: 'redirect',
      attempt: 1,
      charged_amount,
      charged_currency,
      description: null,
      client_ip: null,
      payer: null,
      created_at: now,
      updated_at: now,
      next_check_at: now + 60_000,
    });
    const errors: Array<Record<string, unknown>> = [];
    const log = {
      info: () => {},
      warn: () => {},
      error: (fields: object, message: string) => void errors.push({ ...fields, message }),
    };
    const charge = { amount: first.charged_amount, currency: first.charged_currency };
    expect(await paymentPaid(gw.ctx, second, { provider_ref: '4200000000000000000000000002', charge }, log)).toBe(
      'paid',
    );
    expect(errors).toEqual([
      expect.objectContaining({
        out_trade_no: `${order_id}R`,
        paid_by: order_id,
        message: expect.stringMatching(/already paid through another .* refund this payment/),
      }),
    ]);
    // A duplicate report of the payment that paid it is not an error.
    errors.length = 0;
    expect(
      await paymentPaid(
        gw.ctx,
        (await gw.store.transactions.findPayment(order_id, 'durable'))!.payment,
        { provider_ref: 'x', charge },
        log,
      ),
    ).toBe('paid');
    expect(errors).toEqual([]);
  });

  it('a cancel while WeChat Pay is still making the order: the order is canceled, and the order WeChat Pay then makes is closed, never shown', async () => {
    const connector = gw.ctx.connectors.wechatpay;
    const open = connector.open.bind(connector);
    const { reply, order_id, merchant_reference } = await checkout();
    // The merchant's cancel arrives after the payment was recorded, before WeChat Pay has the order.
    connector.open = async (account, input) => {
      connector.open = open;
      expect(await gw.post('/cancel', cancelBody(gw, merchant_reference))).toMatchObject({ code: 0 });
      return open(account, input);
    };
    const html = await (
      await fetch(`${gw.url}/v2/checkout/${reply.nonce}`, { headers: { 'user-agent': UA.phone } })
    ).text();
    expect(html).not.toContain('id="pay-button"');
    expect((await order(order_id))!.status).toBe('canceled');
    expect(fake.orders.get(`${order_id}R`)).toMatchObject({ trade_state: 'CLOSED' });
  });

  it("a payment whose notification comes before its opening's answer is stored: the merchant-hosted create answers 0 and the order is paid", async () => {
    const connector = gw.ctx.connectors.wechatpay;
    const open = connector.open.bind(connector);
    connector.open = async (account, input) => {
      connector.open = open;
      const outcome = await open(account, input);
      await fake.pay(input.out_trade_no);
      return outcome;
    };
    const sent = body({ host_type: '1' });
    const created = await gw.post('/v2/transaction', sent);
    expect(created).toMatchObject({ code: 0 });
    const { order_id } = (await gw.store.transactions.findByReference(gw.merchant.user_id, sent.merchant_reference))!;
    expect((await order(order_id))!.status).toBe('paid');
    expect((await gw.store.transactions.findPayment(order_id, 'durable'))?.payment).toMatchObject({
      state: 'paid',
      payload: fake.orders.get(order_id)!.code_url,
    });
  });

  it('two payments of one order reported at once: the order is paid once, and the second charge is logged for a refund', async () => {
    const { order_id } = await hosted();
    const first = (await gw.store.transactions.listPayments(order_id))[0];
    const now = Date.now();
    const second = await gw.store.transactions.addPayment({
      out_trade_no: `${order_id}R`,
      order_id,
      provider: first.provider,
      flow: 'redirect',
      attempt: 1,
      charged_amount: first.charged_amount,
      charged_currency: first.charged_currency,
      description: null,
      client_ip: null,
      payer: null,
      created_at: now,
      updated_at: now,
      next_check_at: now + 60_000,
    });
    const pending = (await order(order_id))!;
    const errors: Array<Record<string, unknown>> = [];
    const log = {
      info: () => {},
      warn: () => {},
      error: (fields: object, message: string) => void errors.push({ ...fields, message }),
    };
    const charge = { amount: first.charged_amount, currency: first.charged_currency };
    expect(await paymentPaid(gw.ctx, first, { provider_ref: 'T-first', charge }, log)).toBe('paid');
    // The second report read the order while it was still pending: its settle finds it paid already.
    const find = gw.store.transactions.find.bind(gw.store.transactions);
    gw.store.transactions.find = async () => {
      gw.store.transactions.find = find;
      return pending;
    };
    expect(await paymentPaid(gw.ctx, second, { provider_ref: 'T-second', charge }, log)).toBe('paid');
    expect(errors).toEqual([expect.objectContaining({ out_trade_no: `${order_id}R`, paid_by: order_id })]);
  });

  async function jsapiVisit() {
    const wallet = await addWallet(gw, 'CNY');
    await useAccount(gw, wechatpayAccount(wallet.wallet_id, fake, { jsapi: true }));
    const { reply, order_id, merchant_reference } = await gw.create(
      { payment_method: 'wechat', callback_url: callback_url() },
      wallet,
    );
    const page = `${gw.url}/v2/checkout/${reply.nonce}`;
    const get = (url: string, cookie?: string) =>
      fetch(url, { headers: { 'user-agent': UA.wechat, ...(cookie && { cookie }) }, redirect: 'manual' });
    const first = await get(page);
    expect(first.status).toBe(302);
    const cookie = first.headers.get('set-cookie')!.split(';')[0];
    const authorize = new URL(first.headers.get('location')!);
    // WeChat sends the browser back to the page with a one-time code and the state.
    const back = new URL((await fetch(authorize, { redirect: 'manual' })).headers.get('location')!);
    return {
      wallet,
      order_id,
      merchant_reference,
      nonce: reply.nonce as string,
      page,
      cookie,
      authorize,
      back,
      get: (url: string) => get(url, cookie),
      getAnon: get,
    };
  }
  const sheetOf = (html: string) =>
    JSON.parse(/data-jsapi="([^"]+)"/.exec(html)![1].replaceAll('&quot;', '"').replaceAll('&amp;', '&')) as Record<
      string,
      string
    >;

  it("JSAPI inside WeChat: the page asks WeChat who the payer is, orders for that openid, and WeChat's sheet pays it; a state that is not the visit's is not taken", async () => {
    const v = await jsapiVisit();
    expect(`${v.authorize.origin}${v.authorize.pathname}`).toBe(`${fake.url}/connect/oauth2/authorize`);
    expect(v.authorize.hash).toBe('#wechat_redirect');
    expect(Object.fromEntries(v.authorize.searchParams)).toMatchObject({
      appid: fake.appid,
      response_type: 'code',
      scope: 'snsapi_base',
      redirect_uri: `${gw.ctx.config.publicUrl}/v2/checkout/${v.nonce}`,
    });
    expect(fake.orders.has(`${v.order_id}J`)).toBe(false);

    const forged = new URL(v.back);
    forged.searchParams.set('state', 'f'.repeat(32));
    expect((await v.get(`${v.page}${forged.search}`)).status).toBe(302);
    // Without this visit's cookie, the code is no use either: the page is not this browser's.
    expect((await v.getAnon(`${v.page}${v.back.search}`)).status).not.toBe(303);
    expect(fake.orders.has(`${v.order_id}J`)).toBe(false);

    // The code is used once, then leaves the address bar: the page shows the sheet at its own address.
    const used = await v.get(`${v.page}${v.back.search}`);
    expect(used.status).toBe(303);
    expect(used.headers.get('location')).toBe(`/v2/checkout/${v.nonce}`);
    const sent = fake.orders.get(`${v.order_id}J`)!;
    expect(sent).toMatchObject({ trade_type: 'JSAPI' });
    expect(JSON.parse(sent.body)).toMatchObject({
      payer: { openid: fake.openid },
      amount: { total: 12000, currency: 'CNY' },
    });
    const tokens = fake.tokenRequests;
    const params = sheetOf(await (await v.get(v.page)).text());
    expect(params).toMatchObject({ appId: fake.appid, package: `prepay_id=${sent.prepay_id}`, signType: 'RSA' });
    // A reload shows the same sheet without asking WeChat again.
    expect(sheetOf(await (await v.get(v.page)).text())).toEqual(params);
    expect(fake.tokenRequests).toBe(tokens);

    expect(
      await fake.payJsapi({ ...params, paySign: params.paySign.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')) }),
    ).toBe('paySign does not verify');
    expect(await fake.payJsapi(params)).toBe('ok');
    expect((await order(v.order_id))!.status).toBe('paid');
  });

  it('JSAPI: when WeChat Pay does not take the order, "try again" orders again for the payer already known, without a second round trip', async () => {
    const v = await jsapiVisit();
    fake.fail('order', 'http-500');
    const failed = await v.get(`${v.page}${v.back.search}`);
    expect(failed.status).toBe(200);
    const html = await failed.text();
    expect(html).toContain('id="pay-unavailable"');
    expect(html).toContain(`id="pay-retry" href="/v2/checkout/${v.nonce}"`);
    const tokens = fake.tokenRequests;
    const retried = await v.get(v.page);
    expect(retried.status).toBe(200);
    expect(sheetOf(await retried.text())).toMatchObject({
      package: `prepay_id=${fake.orders.get(`${v.order_id}J`)!.prepay_id}`,
    });
    expect(fake.tokenRequests).toBe(tokens);
  });

  it('concurrent creates of one merchant_reference open a trade at WeChat Pay for the stored order only: the requests signed for the orders that lost are never sent', async () => {
    await expectConcurrentCreatesOpenOnce(gw, body({ host_type: '1' }), () => fake.orders.keys());
    expect(fake.refused).toEqual([]);
  });

  it("a platform certificate beside the public key: notifications signed with either are taken (a move to the public key); without it the certificate's are not", async () => {
    try {
      fake.notificationKey = 'certificate';
      const before = await hosted();
      expect(await fake.pay(before.order_id).then(() => fake.notifications.at(-1))).toMatchObject({
        out_trade_no: before.order_id,
        status: 500,
      });
      expect((await order(before.order_id))!.status).toBe('pending');

      const wallet = await addWallet(gw, 'NZD');
      await useAccount(gw, wechatpayAccount(wallet.wallet_id, fake, { certificate: true }));
      const after = await hosted({}, wallet);
      await fake.pay(after.order_id);
      expect(fake.notifications.at(-1)).toMatchObject({ out_trade_no: after.order_id, status: 204 });
      expect((await order(after.order_id))!.status).toBe('paid');
      fake.notificationKey = 'public-key';
      const byKey = await hosted({}, wallet);
      await fake.pay(byKey.order_id);
      expect((await order(byKey.order_id))!.status).toBe('paid');
    } finally {
      fake.notificationKey = 'public-key';
    }
  });

  it("a cross-border account orders through /v3/global in the wallet's currency, reads its names (id, mweb_url), refunds with mchid and appid, closes with mchid", async () => {
    const wallet = await addWallet(gw, 'NZD');
    await useAccount(
      gw,
      wechatpayAccount(wallet.wallet_id, fake, { currency_mode: 'cross-border', currency: 'NZD', mcc: '5812' }),
    );
    const { order_id } = await hosted({ amount: '45.60' }, wallet);
    expect(JSON.parse(fake.orders.get(order_id)!.body)).toMatchObject({
      trade_type: 'NATIVE',
      merchant_category_code: '5812',
      amount: { total: 4560, currency: 'NZD' },
    });
    await fake.pay(order_id);
    expect((await order(order_id))!.status).toBe('paid');
    // The cross-border API names WeChat Pay's order number `id`; it is kept as the provider's reference.
    expect((await gw.store.transactions.listPayments(order_id))[0]).toMatchObject({
      state: 'paid',
      provider_ref: fake.orders.get(order_id)!.transaction_id,
    });
    // Its refund names the merchant and the AppID in the body (the fake refuses one without them).
    expect(await gw.post('/refund', refundBody(gw, order_id, '45.60', 'all', wallet))).toEqual({
      code: 0,
      message: '',
    });

    // A phone's page: the cross-border H5 order (MWEB) answers mweb_url, where the pay button goes.
    const phone = await gw.create({ payment_method: 'wechat', callback_url: callback_url(), amount: '12.00' }, wallet);
    const page = await (
      await fetch(`${gw.url}/v2/checkout/${phone.reply.nonce}`, { headers: { 'user-agent': UA.phone } })
    ).text();
    const opened = fake.orders.get(`${phone.order_id}R`)!;
    expect(opened).toMatchObject({ trade_type: 'MWEB', global: true });
    const href = /id="pay-button" href="([^"]+)"/.exec(page)![1].replaceAll('&amp;', '&');
    expect(href.startsWith(`${fake.url}/fake/h5?prepay_id=${opened.prepay_id}`)).toBe(true);
    // Cancelled: the close's body is {mchid} only (the fake refuses any other).
    expect(await gw.post('/cancel', cancelBody(gw, phone.merchant_reference, wallet))).toMatchObject({ code: 0 });
    expect(fake.orders.get(`${phone.order_id}R`)!.trade_state).toBe('CLOSED');
  });
});
