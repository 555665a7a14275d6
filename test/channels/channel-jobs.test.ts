// The jobs that keep an order from depending on a provider's notification, end to end against the
// fakes: reconciliation asks about a payment whose notification was dropped, expiry closes an
// order past its life at its provider and ends it failed, and a payment made after a refused close
// stays paid.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHosted } from '../support/api.js';
import { alipayAccount, useAccount, wechatpayAccount } from '../support/channels.js';
import { FakeAlipay } from '../support/fake-alipay.js';
import { FakeWechatPay } from '../support/fake-wechatpay.js';
import { ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';
import { until } from '../support/wait.js';

const LIFE_MS = 2_500;

describe.each(ENGINES)('reconciliation and expiry on %s', (engine) => {
  let alipay: FakeAlipay;
  let wechat: FakeWechatPay;
  let gw: TestGateway;
  beforeAll(async () => {
    [alipay, wechat] = await Promise.all([FakeAlipay.start(), FakeWechatPay.start()]);
    gw = await startTestGateway(engine, {
      mode: 'live',
      providerTimeoutMs: 500,
      channelReconcileAfterMs: 200,
      orderExpiryMs: LIFE_MS,
      nonceTtlMs: 1_000,
    });
    await useAccount(gw, alipayAccount(gw.merchant.wallet_id, alipay));
    await useAccount(gw, wechatpayAccount(gw.merchant.wallet_id, wechat));
  });
  afterAll(async () => {
    await gw?.close();
    await Promise.all([alipay?.close(), wechat?.close()]);
  });

  const statusOf = async (order_id: string) => (await gw.store.transactions.find(order_id))!.status;

  it('a payment whose notification was dropped is found paid by asking the provider', async () => {
    const a = await createHosted(gw);
    const w = await createHosted(gw, { payment_method: 'wechat' });
    await alipay.pay(a.order_id, { notify: false });
    await wechat.pay(w.order_id, { notify: false });
    await until(
      'both orders to be found paid',
      async () => (await statusOf(a.order_id)) === 'paid' && (await statusOf(w.order_id)) === 'paid',
      5_000,
    );
    expect(alipay.calls).toContain('alipay.trade.query');
    expect(wechat.calls).toContain('query');
    expect(await gw.store.outbox.listByOrder(a.order_id)).toHaveLength(1);
  });

  it('an unpaid order past its life is closed at its provider and ends failed, with its notification', async () => {
    const a = await createHosted(gw);
    const w = await createHosted(gw, { payment_method: 'wechat' });
    expect(await statusOf(a.order_id)).toBe('pending');
    await until(
      'both orders to expire',
      async () => (await statusOf(a.order_id)) === 'failed' && (await statusOf(w.order_id)) === 'failed',
      LIFE_MS + 5_000,
    );
    // The QR nobody scanned is cancelled at Alipay, so it cannot be paid later; WeChat Pay's order closed.
    expect(alipay.trades.get(a.order_id)).toMatchObject({ trade_status: 'TRADE_CLOSED' });
    expect(wechat.orders.get(w.order_id)).toMatchObject({ trade_state: 'CLOSED' });
    const [row] = await gw.store.outbox.listByOrder(a.order_id);
    expect(JSON.parse(row.payload)).toMatchObject({ status: 'failed' });
  });

  it('a payment made after its close was refused stays paid', async () => {
    const a = await createHosted(gw);
    alipay.scan(a.order_id);
    const from = alipay.calls.length;
    for (let i = 0; i < 200; i++)
      alipay.fail('alipay.trade.close', { business: 'ACQ.TRADE_STATUS_ERROR', message: 'the buyer is paying' });
    try {
      await until(
        'expiry to try to close it',
        () => alipay.calls.slice(from).includes('alipay.trade.close'),
        LIFE_MS + 5_000,
      );
      expect(await statusOf(a.order_id)).toBe('pending');
      await alipay.pay(a.order_id);
      expect(await statusOf(a.order_id)).toBe('paid');
    } finally {
      alipay.clearFaults();
    }
    await new Promise((r) => setTimeout(r, 500));
    expect(await statusOf(a.order_id)).toBe('paid');
  });
});
