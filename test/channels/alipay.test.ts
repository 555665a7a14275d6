// The Alipay connector end to end, in live mode, against the fake Alipay (real HTTP, real keys,
// every signature verified both ways) and a real merchant notification receiver: create (both host
// types), the hosted page's flows, pay and notify, duplicates and forgeries, query, partial refunds,
// refunds without an answer, cancel, and the cross-border account. Reconciliation and expiry:
// channel-jobs.test.ts. The page in Chromium: test/browser/provider-checkout.test.ts.
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCidrList } from '../../src/notify/callback-safety.js';
import { resumePendingRefunds } from '../../src/usecases/resume-refunds.js';
import { Receiver } from '../notify/receiver.js';
import { addWallet, cancelBody, createHosted, gatewayData, refundBody } from '../support/api.js';
import { alipayAccount, expectConcurrentCreatesOpenOnce, useAccount } from '../support/channels.js';
import { consoleUser } from '../support/console-client.js';
import { FakeAlipay } from '../support/fake-alipay.js';
import { keyPair } from '../support/fake-server.js';
import { ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';
import { until } from '../support/wait.js';

const silent = pino({ level: 'silent' });
const UA = {
  desktop: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36',
  phone:
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1',
  wechat:
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 MicroMessenger/8.0.44',
};

describe.each(ENGINES)('the Alipay connector on %s', (engine) => {
  let fake: FakeAlipay;
  let rx: Receiver;
  let gw: TestGateway;
  beforeAll(async () => {
    [fake, rx] = await Promise.all([FakeAlipay.start(), Receiver.start()]);
    gw = await startTestGateway(engine, {
      mode: 'live',
      providerTimeoutMs: 500,
      refundWaitMs: 300,
      notify: { retryScheduleMs: [100], pollIntervalMs: 100, allowCidrs: parseCidrList('127.0.0.1/32') },
    });
    await useAccount(gw, alipayAccount(gw.merchant.wallet_id, fake));
  });
  afterAll(async () => {
    // Every request the gateway made carried a good signature and a Beijing-time timestamp.
    expect(fake?.refused).toEqual([]);
    await gw?.close();
    await Promise.all([fake?.close(), rx?.close()]);
  });

  const order = (order_id: string) => gw.store.transactions.find(order_id);
  // Every order's notification goes to the receiver on the loopback, never to an outside host.
  const callback_url = () => `${rx.url}/alipay`;
  const hosted = (over: Record<string, string> = {}, wallet?: Parameters<typeof createHosted>[2]) =>
    createHosted(gw, { callback_url: callback_url(), ...over }, wallet);
  const checkout = () => gw.create({ callback_url: callback_url() });
  const body = (over: Record<string, string> = {}, wallet?: Parameters<typeof createHosted>[2]) =>
    gw.createBody({ callback_url: callback_url(), ...over }, wallet);

  async function paidOrder(amount = '120.00'): Promise<{ order_id: string; merchant_reference: string }> {
    const created = await hosted({ amount });
    expect(await fake.pay(created.order_id)).toMatchObject({ trade_status: 'TRADE_SUCCESS' });
    expect((await order(created.order_id))!.status).toBe('paid');
    return created;
  }

  it('merchant-hosted QR: precreated in CNY at create, the QR in the gateway data, paid by the notification, the merchant told, the query paid', async () => {
    const { nonce, order_id, merchant_reference } = await hosted();
    const stored = (await order(order_id))!;
    const trade = fake.trades.get(order_id)!;
    // 120.00 NZD at 4.6443 CNY/NZD, charged in CNY by a domestic account.
    expect(trade).toMatchObject({
      total_amount: (stored.amount_cny! / 100).toFixed(2),
      trans_currency: null,
      subject: 'Pinot Noir, Otago',
      product: 'precreate',
    });
    expect(trade.notify_url).toBe(`${gw.ctx.config.publicUrl}/channels/alipay/notify`);
    const data = await gatewayData(gw, nonce);
    expect(data).toMatchObject({
      code: 0,
      data: { qr_code_url: trade.qr_code, qr_code: expect.stringMatching(/^data:image\/png;base64,/) },
    });

    fake.scan(order_id);
    await fake.pay(order_id);
    expect(fake.notifications.at(-1)).toMatchObject({ out_trade_no: order_id, answer: 'success' });
    expect((await order(order_id))!.status).toBe('paid');
    expect((await gw.store.transactions.listPayments(order_id))[0]).toMatchObject({
      state: 'paid',
      provider_ref: trade.trade_no,
      charged_currency: 'CNY',
    });
    await until('the merchant to be notified', () =>
      rx.received.some((r) => r.fields.get('merchant_reference') === merchant_reference),
    );
    expect(
      rx.received.find((r) => r.fields.get('merchant_reference') === merchant_reference)!.fields.get('status'),
    ).toBe('paid');
    expect(await gw.query(merchant_reference)).toMatchObject({ code: 0, status: 'paid' });
    // The console's page of the order names the payment at Alipay, what it charged, and Alipay's trade_no.
    const { client } = await consoleUser(gw, 'merchant', 'staff', gw.merchant.organisation_id);
    const page = (await client.get(`/console/transactions/${order_id}`)).body;
    const payments = page.slice(page.indexOf('id="payments"'), page.indexOf('</table>', page.indexOf('id="payments"')));
    expect(payments).toContain(trade.trade_no);
    expect(payments).toContain(`CN¥${(stored.amount_cny! / 100).toFixed(2)}`);
    expect(payments).toContain('<td data-label="Provider">alipay</td><td data-label="Flow">qr</td>');
    expect(payments).toContain('<td data-label="State">paid</td>');
    // Alipay's trade_no, as on the customer's receipt, finds the order in the list.
    const found = (await client.get(`/console/transactions?q=${trade.trade_no}`)).body;
    expect(found.slice(found.indexOf('id="transactions"'))).toContain(`>${order_id}</a>`);
  });

  it('the console asks Alipay now about a pending order whose notification did not come, and settles it; no answer changes nothing', async () => {
    const { order_id, merchant_reference } = await hosted();
    await fake.pay(order_id, { notify: false });
    expect((await order(order_id))!.status).toBe('pending');
    const path = `/console/transactions/${order_id}`;
    const { client: staff } = await consoleUser(gw, 'merchant', 'staff', gw.merchant.organisation_id);
    expect((await staff.get(path)).body).not.toContain('id="ask-provider-form"');
    expect((await staff.post(`${path}/ask-provider`, {})).status).toBe(403);
    const { client: owner } = await consoleUser(gw, 'merchant', 'owner', gw.merchant.organisation_id);
    expect((await owner.get(path)).body).toContain('id="ask-provider-form"');
    const asked = await owner.post(`${path}/ask-provider`, {});
    expect(asked.body).toContain(`Asked the provider. ${order_id}: paid (the order is settled).`);
    expect((await order(order_id))!.status).toBe('paid');
    await until('the merchant to be notified', () =>
      rx.received.some((r) => r.fields.get('merchant_reference') === merchant_reference),
    );
    expect(asked.body).not.toContain('id="ask-provider-form"');
    // Alipay not answering: said so, the order still pending.
    const other = await hosted();
    fake.fail('alipay.trade.query', 'http-500');
    const unknown = await owner.post(`/console/transactions/${other.order_id}/ask-provider`, {});
    expect(unknown.body).toContain(`${other.order_id}: no definite answer (HTTP 500 from Alipay)`);
    expect((await order(other.order_id))!.status).toBe('pending');
    // Asked again at once (a reload of the answer): refused on the order's page, Alipay not asked.
    const queries = fake.calls.filter((c) => c === 'alipay.trade.query').length;
    const again = await owner.post(`/console/transactions/${other.order_id}/ask-provider`, {});
    expect([again.status, again.body.includes('was asked about this order a moment ago')]).toEqual([409, true]);
    expect(fake.calls.filter((c) => c === 'alipay.trade.query').length).toBe(queries);
    // Paid at Alipay, but another amount than the order's: said so, not settled.
    const third = await hosted();
    await fake.pay(third.order_id, { notify: false });
    fake.trades.get(third.order_id)!.total_amount = '1.00';
    const mismatch = await owner.post(`/console/transactions/${third.order_id}/ask-provider`, {});
    expect(mismatch.body).toContain(
      `${third.order_id}: paid at the provider, but another amount or currency than the order&#39;s: not settled`,
    );
    expect((await order(third.order_id))!.status).toBe('pending');
    // And in the queue of money exceptions.
    expect(
      (await gw.store.reconciliation.listExceptions({ kind: 'amount_mismatch' }))
        .filter((x) => x.order_id === third.order_id)
        .map((x) => [x.source, x.exception_status, x.out_trade_no, x.detail]),
    ).toEqual([['live', 'open', third.order_id, expect.stringMatching(/the provider reports 100 CNY/)]]);
    const audit = (await gw.store.console.listAudit({ actions: ['transaction.ask_provider'], limit: 5 })).map((e) => [
      e.object,
      JSON.parse(e.after!),
    ]);
    expect(audit).toEqual([
      [third.order_id, [[third.order_id, 'mismatch']]],
      [other.order_id, [[other.order_id, 'unknown']]],
      [order_id, [[order_id, 'paid']]],
    ]);
  });

  it('the gateway data asks Alipay again for a QR a crash took back (it is acknowledged before it is on disk); Alipay not reached is code 1', async () => {
    const lose = async (order_id: string) => {
      await gw.store.db
        .updateTable('transactions')
        .set({ qr_code_url: null })
        .where('order_id', '=', order_id)
        .execute();
      await gw.store.db
        .updateTable('channel_payments')
        .set({ payload: null })
        .where('order_id', '=', order_id)
        .execute();
    };
    const lost = await hosted();
    const trade = fake.trades.get(lost.order_id)!;
    await lose(lost.order_id);
    expect(await gatewayData(gw, lost.nonce)).toMatchObject({
      code: 0,
      data: { qr_code_url: trade.qr_code, qr_code: expect.stringMatching(/^data:image\/png;base64,/) },
    });
    expect((await order(lost.order_id))!.qr_code_url).toBe(trade.qr_code);
    const unreachable = await hosted();
    await lose(unreachable.order_id);
    fake.fail('alipay.trade.precreate', 'http-500');
    expect(await gatewayData(gw, unreachable.nonce)).toMatchObject({
      code: 1,
      detail: expect.stringMatching(/could not be reached.*same merchant_reference/),
    });
    expect((await order(unreachable.order_id))!.status).toBe('pending');
  });

  it('duplicated and out-of-order notifications are taken and change nothing', async () => {
    const { order_id } = await paidOrder();
    expect(await fake.notify(order_id)).toBe('success');
    // A full refund's TRADE_CLOSED arriving late, or before the payment's own: the order stays paid.
    expect(await fake.notify(order_id, fake.notificationFields(order_id, { trade_status: 'TRADE_CLOSED' }))).toBe(
      'success',
    );
    expect(await fake.notify(order_id)).toBe('success');
    expect((await order(order_id))!.status).toBe('paid');
    expect(await gw.store.outbox.listByOrder(order_id)).toHaveLength(1);
  });

  it('a tampered notification, one of an unknown app and one of another amount are not taken', async () => {
    const { order_id } = await hosted();
    fake.scan(order_id).trade_status = 'TRADE_SUCCESS';
    const tampered = { ...fake.notificationFields(order_id), total_amount: '0.01' };
    expect(await fake.notify(order_id, tampered)).toBe('fail');
    expect(await fake.notify(order_id, fake.notificationFields(order_id, { app_id: '2021000000000099' }))).toBe('fail');
    // Signed by Alipay, but the trade's amount is not the order's: an operator must look.
    expect(await fake.notify(order_id, fake.notificationFields(order_id, { total_amount: '1.00' }))).toBe('fail');
    expect((await order(order_id))!.status).toBe('pending');
    expect(await fake.notify(order_id)).toBe('success');
    expect((await order(order_id))!.status).toBe('paid');
  });

  it('a notification of a trade the gateway did not open is taken and ignored', async () => {
    const { order_id } = await hosted();
    fake.trades.set('elsewhere-1', { ...fake.trades.get(order_id)!, out_trade_no: 'elsewhere-1' });
    expect(await fake.notify('elsewhere-1')).toBe('success');
    expect((await order(order_id))!.status).toBe('pending');
  });

  it("the hosted page opens the payment for its browser: a QR on a desktop, Alipay's mobile page on a phone, nothing inside WeChat", async () => {
    const visit = async (ua: string) => {
      const { reply, order_id } = await checkout();
      const res = await fetch(`${gw.url}/v2/checkout/${reply.nonce}`, {
        headers: { 'user-agent': ua },
        redirect: 'manual',
      });
      return { order_id, res, html: await res.text() };
    };
    const desktop = await visit(UA.desktop);
    expect(desktop.html).toContain('alt="Alipay QR code"');
    expect(fake.trades.get(desktop.order_id)).toMatchObject({ product: 'precreate' });

    const phone = await visit(UA.phone);
    const href = /id="pay-button" href="([^"]+)"/.exec(phone.html)?.[1]?.replaceAll('&amp;', '&');
    expect(href).toBeDefined();
    const url = new URL(href!);
    expect(`${url.origin}${url.pathname}`).toBe(fake.endpoint);
    expect(url.searchParams.get('method')).toBe('alipay.trade.wap.pay');
    expect(JSON.parse(url.searchParams.get('biz_content')!)).toMatchObject({
      out_trade_no: `${phone.order_id}R`,
      product_code: 'QUICK_WAP_WAY',
    });
    expect(url.searchParams.get('return_url')).toMatch(new RegExp(`/v2/checkout/`));
    // The signed address opens Alipay's page (the fake verifies it), which creates the trade.
    expect((await fetch(href!)).status).toBe(200);
    expect(fake.trades.get(`${phone.order_id}R`)).toMatchObject({ exists: true, product: 'wap.pay' });
    expect(await gw.store.transactions.listPayments(phone.order_id)).toMatchObject([
      { flow: 'redirect', out_trade_no: `${phone.order_id}R` },
    ]);

    // In WeChat the page first hands the visit to the phone's browser; no payment is opened.
    const wechat = await visit(UA.wechat);
    expect(wechat.res.status).toBe(303);
    expect(await gw.store.transactions.listPayments(wechat.order_id)).toEqual([]);
  });

  it("partial refunds ask Alipay for each one's share of the CNY charge with its refund_id; together they refund the charge exactly", async () => {
    const { order_id } = await paidOrder();
    for (const [amount, reference] of [
      ['33.33', 'a'],
      ['33.33', 'b'],
      ['53.34', 'c'],
    ] as const) {
      expect(await gw.post('/refund', refundBody(gw, order_id, amount, reference))).toEqual({ code: 0, message: '' });
    }
    const refunds = await gw.store.refunds.listByOrder(order_id);
    const made = fake.refundsOf(order_id);
    expect([...made.keys()].sort()).toEqual(refunds.map((r) => r.refund_id).sort());
    const total = [...made.values()].reduce((s, a) => s + Math.round(Number(a) * 100), 0);
    expect(total).toBe((await order(order_id))!.amount_cny);
    expect(await gw.post('/refund', refundBody(gw, order_id, '0.01', 'd'))).toMatchObject({ code: 550 });
  });

  it('a refund that times out after Alipay made it stays pending with its amount reserved, and is confirmed later by asking, never made twice', async () => {
    const { order_id } = await paidOrder();
    fake.fail('alipay.trade.refund', 'timeout-after');
    fake.fail('alipay.trade.fastpay.refund.query', 'timeout');
    const reply = await gw.post('/refund', refundBody(gw, order_id, '50.00', 'slow'));
    expect(reply).toMatchObject({
      code: 1,
      detail: expect.stringMatching(/has not given a final answer on refund .*never made twice/),
    });
    const [refund] = await gw.store.refunds.listByOrder(order_id);
    expect(refund).toMatchObject({ refund_status: 'pending' });
    expect((await order(order_id))!.refunded_amount).toBe(5000);
    // The merchant sends it again: the same refund, still waiting, not a second one.
    expect(await gw.post('/refund', refundBody(gw, order_id, '50.00', 'slow'))).toMatchObject({ code: 562 });
    expect(await resumePendingRefunds(gw.ctx, silent, 0)).toBe(1);
    expect((await gw.store.refunds.listByOrder(order_id))[0]).toMatchObject({ refund_status: 'succeeded' });
    expect([...fake.refundsOf(order_id).keys()]).toEqual([refund.refund_id]);
  });

  it('a refund Alipay answered with an error before making it is made by the recovery with the same refund_id', async () => {
    const { order_id } = await paidOrder();
    fake.fail('alipay.trade.refund', 'http-500');
    fake.fail('alipay.trade.fastpay.refund.query', 'http-500');
    expect(await gw.post('/refund', refundBody(gw, order_id, '20.00', 'r'))).toMatchObject({ code: 1 });
    expect(fake.refundsOf(order_id).size).toBe(0);
    await resumePendingRefunds(gw.ctx, silent, 0);
    const [refund] = await gw.store.refunds.listByOrder(order_id);
    expect(refund).toMatchObject({ refund_status: 'succeeded' });
    expect([...fake.refundsOf(order_id).entries()]).toEqual([
      [refund.refund_id, (refund.channel_amount! / 100).toFixed(2)],
    ]);
  });

  it('a refund Alipay refuses is failed and its amount released', async () => {
    const { order_id } = await paidOrder();
    fake.fail('alipay.trade.refund', {
      business: 'ACQ.SELLER_BALANCE_NOT_ENOUGH',
      message: 'seller balance not enough',
    });
    expect(await gw.post('/refund', refundBody(gw, order_id, '20.00', 'r'))).toMatchObject({
      code: 556,
      detail: expect.stringMatching(/SELLER_BALANCE_NOT_ENOUGH/),
    });
    expect((await order(order_id))!.refunded_amount).toBe(0);
    expect(await gw.post('/refund', refundBody(gw, order_id, '20.00', 'r'))).toMatchObject({ code: 0 });
  });

  it('cancel: a QR nobody scanned is cancelled at Alipay, a scanned one closed, a paid one answers 900 and the order is paid', async () => {
    const unscanned = await hosted();
    const calls = fake.calls.length;
    expect(await gw.post('/cancel', cancelBody(gw, unscanned.merchant_reference))).toMatchObject({ code: 0 });
    expect(fake.calls.slice(calls)).toEqual(['alipay.trade.close', 'alipay.trade.cancel']);
    expect(fake.trades.get(unscanned.order_id)).toMatchObject({ trade_status: 'TRADE_CLOSED' });
    expect((await order(unscanned.order_id))!.status).toBe('canceled');

    const scanned = await hosted();
    fake.scan(scanned.order_id);
    expect(await gw.post('/cancel', cancelBody(gw, scanned.merchant_reference))).toMatchObject({ code: 0 });
    expect(fake.trades.get(scanned.order_id)).toMatchObject({ trade_status: 'TRADE_CLOSED' });

    const paid = await hosted();
    await fake.pay(paid.order_id, { notify: false });
    expect(await gw.post('/cancel', cancelBody(gw, paid.merchant_reference))).toMatchObject({ code: 900 });
    expect((await order(paid.order_id))!.status).toBe('paid');
  });

  it('a cancel Alipay does not answer fails with code 1 and leaves the order pending', async () => {
    const { merchant_reference, order_id } = await hosted();
    fake.fail('alipay.trade.close', 'timeout');
    expect(await gw.post('/cancel', cancelBody(gw, merchant_reference))).toMatchObject({ code: 1 });
    expect((await order(order_id))!.status).toBe('pending');
  });

  it('a method no channel account serves is refused in live mode (302); Alipay not reached is code 1, the order kept for a retry', async () => {
    expect(await gw.post('/v2/transaction', body({ payment_method: 'polipay' }))).toMatchObject({
      code: 302,
      detail: expect.stringContaining('no payment provider serves polipay for wallet') as string,
    });
    // MoneyMore publishes no protocol: no provider of the gateway serves it, and the detail says so.
    expect(await gw.post('/v2/transaction', body({ payment_method: 'moneymore' }))).toMatchObject({
      code: 302,
      detail: expect.stringContaining('moneymore has no payment provider in this gateway') as string,
    });
    fake.fail('alipay.trade.precreate', 'http-500');
    const once = body({ host_type: '1' });
    expect(await gw.post('/v2/transaction', once)).toMatchObject({
      code: 1,
      detail: expect.stringMatching(/could not be reached.*same merchant_reference/),
    });
    const again = await gw.post('/v2/transaction', once);
    expect(again).toMatchObject({ code: 0 });
    expect(await gatewayData(gw, again.nonce)).toMatchObject({
      code: 0,
      data: { qr_code_url: expect.stringMatching(/^https:\/\/qr\.alipay\.com\//) },
    });
  });

  it('concurrent creates of one merchant_reference open a trade at Alipay for the stored order only: the requests signed for the orders that lost are never sent', async () => {
    await expectConcurrentCreatesOpenOnce(gw, body({ host_type: '1' }), () => fake.trades.keys());
    expect(fake.refused).toEqual([]);
  });

  it("a cross-border account prices in the wallet's currency", async () => {
    const wallet = await addWallet(gw, 'AUD');
    await gw.store.accounts.setRate('AUD', 'CNY', 4_700_000, Date.now());
    await useAccount(gw, alipayAccount(wallet.wallet_id, fake, { currency_mode: 'cross-border', currency: 'AUD' }));
    const { order_id } = await hosted({ amount: '45.60' }, wallet);
    expect(fake.trades.get(order_id)).toMatchObject({ total_amount: '45.60', trans_currency: 'AUD' });
    await fake.pay(order_id);
    expect((await order(order_id))!.status).toBe('paid');
    expect((await gw.store.transactions.listPayments(order_id))[0]).toMatchObject({
      charged_amount: 4560,
      charged_currency: 'AUD',
    });
  });

  it('cross-border: a notification that does not name the currency is checked by a query; a trade Alipay priced in CNY after all is never read as paid in AUD', async () => {
    const wallet = await addWallet(gw, 'AUD');
    await gw.store.accounts.setRate('AUD', 'CNY', 4_700_000, Date.now());
    await useAccount(gw, alipayAccount(wallet.wallet_id, fake, { currency_mode: 'cross-border', currency: 'AUD' }));
    try {
      fake.notificationNamesCurrency = false;
      const named = await hosted({ amount: '45.60' }, wallet);
      const queries = fake.calls.filter((c) => c === 'alipay.trade.query').length;
      await fake.pay(named.order_id);
      expect((await order(named.order_id))!.status).toBe('paid');
      expect(fake.calls.filter((c) => c === 'alipay.trade.query').length).toBe(queries + 1);
      expect(fake.notifications.at(-1)).toMatchObject({ out_trade_no: named.order_id, answer: 'success' });

      // An account whose contract does not take the currency fields: Alipay prices the trade in
      // CNY, 45.60 yuan for an AUD 45.60 order. Paid so, it is a mismatch, not a payment.
      fake.takesCurrency = false;
      const cny = await hosted({ amount: '45.60' }, wallet);
      expect(fake.trades.get(cny.order_id)).toMatchObject({ total_amount: '45.60', trans_currency: null });
      await fake.pay(cny.order_id);
      expect((await order(cny.order_id))!.status).toBe('pending');
      expect(fake.notifications.at(-1)).toMatchObject({ out_trade_no: cny.order_id, answer: 'fail' });
    } finally {
      fake.takesCurrency = true;
      fake.notificationNamesCurrency = true;
    }
  });

  it('an answer that does not verify with the configured Alipay key is no answer', async () => {
    const wallet = await addWallet(gw, 'NZD');
    await useAccount(gw, {
      ...alipayAccount(wallet.wallet_id, fake),
      config: { ...alipayAccount(wallet.wallet_id, fake).config, alipay_public_key: keyPair(2).publicKey },
    });
    expect(await gw.post('/v2/transaction', body({ host_type: '1' }, wallet))).toMatchObject({
      code: 1,
      detail: expect.stringMatching(/does not verify/),
    });
  });
});
