// Alipay's certificate mode end to end, against the fake Alipay in that mode (it refuses a request
// that does not name the app's and the root certificates' SNs, and names its own certificate in
// every answer): create, pay, query; and what the gateway says when Alipay has renewed its
// certificate. The SNs themselves: src/connectors/alipay/cert.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCidrList } from '../../src/notify/callback-safety.js';
import { Receiver } from '../notify/receiver.js';
import { createHosted } from '../support/api.js';
import { alipayAccount, useAccount } from '../support/channels.js';
import { FakeAlipay } from '../support/fake-alipay.js';
import { keyPair } from '../support/fake-server.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { until } from '../support/wait.js';

// The connector, not the store, is under test here: one engine.
describe('the Alipay connector in certificate mode', () => {
  let fake: FakeAlipay;
  let rx: Receiver;
  let gw: TestGateway;
  beforeAll(async () => {
    [fake, rx] = await Promise.all([FakeAlipay.start({ certMode: true }), Receiver.start()]);
    gw = await startTestGateway('sqlite', {
      mode: 'live',
      providerTimeoutMs: 500,
      notify: { retryScheduleMs: [100], pollIntervalMs: 100, allowCidrs: parseCidrList('127.0.0.1/32') },
    });
    await useAccount(gw, alipayAccount(gw.merchant.wallet_id, fake, { certMode: true }));
  });
  afterAll(async () => {
    await gw?.close();
    await Promise.all([fake?.close(), rx?.close()]);
  });

  it('every request names the certificates; a merchant-hosted QR is precreated, paid by the notification, the merchant told, the query paid', async () => {
    const { order_id, merchant_reference } = await createHosted(gw, { callback_url: `${rx.url}/alipay` });
    expect(fake.trades.get(order_id)).toMatchObject({ product: 'precreate', trade_status: 'WAIT_BUYER_PAY' });
    await fake.pay(order_id);
    expect(fake.notifications.at(-1)).toMatchObject({ out_trade_no: order_id, answer: 'success' });
    expect((await gw.store.transactions.find(order_id))!.status).toBe('paid');
    await until('the merchant to be notified', () =>
      rx.received.some((r) => r.fields.get('merchant_reference') === merchant_reference),
    );
    expect(await gw.query(merchant_reference)).toMatchObject({ code: 0, status: 'paid' });
    // The fake refuses a request without the app's SN or with another root SN: none was refused.
    expect(fake.refused).toEqual([]);
    expect(fake.calls).toContain('alipay.trade.precreate');
  });

  it('Alipay refusing the certificates (another app certificate registered) is no answer, its sub_code named', async () => {
    const registered = fake.certMode!.app_cert_sn;
    fake.certMode!.app_cert_sn = '0123456789abcdef0123456789abcdef';
    try {
      const res = await gw.post('/v2/transaction', gw.createBody({ host_type: '1', callback_url: `${rx.url}/alipay` }));
      expect(res).toMatchObject({ code: 1 });
      expect(fake.refused.at(-1)).toBe('alipay.trade.precreate: isv.app-cert-not-exist');
    } finally {
      fake.certMode!.app_cert_sn = registered;
      fake.refused.length = 0;
    }
  });

  it("once Alipay has renewed its certificate, the error says to download the new one (its SN and the configured one's)", async () => {
    const { alipay, certMode } = fake;
    fake.alipay = keyPair(3);
    fake.certMode = { ...certMode!, alipay_cert_sn: 'fedcba9876543210fedcba9876543210' };
    try {
      const res = await gw.post('/v2/transaction', gw.createBody({ host_type: '1', callback_url: `${rx.url}/alipay` }));
      expect(res).toMatchObject({
        code: 1,
        detail: expect.stringContaining(
          `certificate fedcba9876543210fedcba9876543210, not of the configured alipay_cert (${certMode!.alipay_cert_sn})`,
        ),
      });
    } finally {
      fake.alipay = alipay;
      fake.certMode = certMode;
    }
  });
});
