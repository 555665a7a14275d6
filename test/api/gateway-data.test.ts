// GET {host_url}/{nonce} for merchant-hosted QR: fields, QR picture, signature, nonce rules;
// currency conversion (gateway data and query); live mode without sandbox routes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signRequest, verifyGatewayData, verifyQueryResponse } from '../../sdk/signing.js';
import { addWallet, cancelBody, createHosted, gatewayData, rawGet } from '../support/api.js';
import { alipayAccount, useAccount } from '../support/channels.js';
import { ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';

const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

describe.each(ENGINES)('gateway data on %s', (engine) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(engine);
  });
  afterAll(async () => gw?.close());

  it('has every field of the spec, signed', async () => {
    const { nonce, order_id, merchant_reference } = await createHosted(gw, {
      payment_method: 'wechat',
      product_name: 'Pinot Noir, Otago',
    });
    const reply = await gatewayData(gw, nonce);
    expect(reply).toMatchObject({ code: 0, message: 'SUCCESS' });
    const data = reply.data;
    expect(Object.keys(data).sort()).toEqual(
      [
        'order_id',
        'nonce',
        'payment_method',
        'amount',
        'amount_cny',
        'currency',
        'product_name',
        'organisation_id',
        'organisation_name',
        'user_id',
        'user_name',
        'wallet_id',
        'wallet_name',
        'qr_code',
        'qr_code_url',
        'currency_rate',
        'merchant_reference',
        'signature',
      ].sort(),
    );
    expect(data).toMatchObject({
      order_id,
      nonce,
      payment_method: 'wechat',
      amount: '120.00',
      amount_cny: '557.32',
      currency: 'NZD',
      product_name: 'Pinot Noir, Otago',
      organisation_id: gw.merchant.organisation_id,
      organisation_name: gw.merchant.organisation_name,
      user_id: gw.merchant.user_id,
      user_name: expect.any(String),
      wallet_id: gw.merchant.wallet_id,
      wallet_name: expect.any(String),
      qr_code_url: `${gw.ctx.config.publicUrl}/sandbox/pay/${order_id}`,
      currency_rate: '4.644300',
      merchant_reference,
      signature: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(Number.isInteger(data.organisation_id)).toBe(true);
    expect(verifyGatewayData(data, gw.merchant.api_key)).toBe(true);
    expect(verifyGatewayData({ ...data, amount: '1.00' }, gw.merchant.api_key)).toBe(false);
  });

  it('qr_code is a PNG data URI', async () => {
    const { nonce } = await createHosted(gw);
    const { data } = await gatewayData(gw, nonce);
    const m = /^data:image\/png;base64,([A-Za-z0-9+/]+=*)$/.exec(data.qr_code as string);
    expect(m).not.toBeNull();
    const png = Buffer.from(m![1], 'base64');
    expect(png.subarray(0, 8)).toEqual(PNG_MAGIC);
    expect(png.subarray(12, 16).toString('latin1')).toBe('IHDR');
    expect(png.readUInt32BE(16)).toBeGreaterThanOrEqual(100);
    expect(png.readUInt32BE(16)).toBe(png.readUInt32BE(20));
  });

  it('the QR text opens the sandbox payment page', async () => {
    const { nonce, order_id } = await createHosted(gw);
    const { data } = await gatewayData(gw, nonce);
    const page = await rawGet(gw, new URL(data.qr_code_url as string).pathname);
    expect(page.status).toBe(200);
    expect(page.text).toContain(order_id);
  });

  describe('nonces', () => {
    it('are single use: the second GET answers 3', async () => {
      const { nonce } = await createHosted(gw);
      expect((await gatewayData(gw, nonce)).code).toBe(0);
      const again = await gatewayData(gw, nonce);
      expect(again).toMatchObject({ code: 3, message: 'data error' });
      expect(again.detail).toMatch(/used/);
    });

    it('a HEAD does not use the nonce up (it is no route: 404)', async () => {
      const { nonce } = await createHosted(gw);
      const head = await fetch(`${gw.url}/v2/merchanthosted/gatewaydata/${nonce}`, { method: 'HEAD' });
      expect(head.status).toBe(404);
      expect((await gatewayData(gw, nonce)).code).toBe(0);
    });

    it('concurrent GETs of one nonce: exactly one succeeds', async () => {
      const { nonce } = await createHosted(gw);
      const replies = await Promise.all(Array.from({ length: 6 }, () => gatewayData(gw, nonce)));
      expect(replies.filter((r) => r.code === 0)).toHaveLength(1);
      expect(replies.filter((r) => r.code === 3)).toHaveLength(5);
    });

    it('an unknown nonce answers 201', async () => {
      expect(await gatewayData(gw, 'f'.repeat(32))).toMatchObject({ code: 201, message: 'order not exist' });
    });

    it('an empty nonce answers 204 as HTTP 200 JSON', async () => {
      for (const path of ['/v2/merchanthosted/gatewaydata/', '/v2/merchanthosted/gatewaydata']) {
        const res = await rawGet(gw, path);
        expect(res.status, path).toBe(200);
        expect(JSON.parse(res.text), path).toMatchObject({ code: 204, message: 'Some fields from input are null' });
      }
    });

    it('a hosted-checkout nonce is unknown here', async () => {
      const { reply } = await gw.create();
      expect(await gatewayData(gw, reply.nonce)).toMatchObject({ code: 201 });
    });

    it.each([101, 129, 5000])('a nonce of %i characters answers 207 as HTTP 200 JSON', async (length) => {
      const res = await rawGet(gw, `/v2/merchanthosted/gatewaydata/${'a'.repeat(length)}`);
      expect(res.status).toBe(200);
      expect(JSON.parse(res.text)).toMatchObject({ code: 207, message: 'Param is wrong' });
    });

    it('a nonce with broken %-encoding answers 3 as HTTP 200 JSON', async () => {
      const res = await rawGet(gw, '/v2/merchanthosted/gatewaydata/%E0%A4%A');
      expect(res.status).toBe(200);
      expect(JSON.parse(res.text)).toMatchObject({ code: 3, message: 'data error' });
    });

    it('a nonce of a paid order answers 900, of a failed or canceled one 901', async () => {
      const paid = await createHosted(gw);
      await gw.pay(paid.order_id, 'paid');
      expect(await gatewayData(gw, paid.nonce)).toMatchObject({ code: 900 });
      const failed = await createHosted(gw);
      await gw.pay(failed.order_id, 'failed');
      expect(await gatewayData(gw, failed.nonce)).toMatchObject({ code: 901 });
      const canceled = await createHosted(gw);
      expect((await gw.post('/cancel', cancelBody(gw, canceled.merchant_reference))).code).toBe(0);
      expect(await gatewayData(gw, canceled.nonce)).toMatchObject({ code: 901 });
    });
  });

  describe('currency conversion', () => {
    it('a wallet currency without a rate: nulls in gateway data, null and 0.00000 in the query', async () => {
      const aud = await addWallet(gw, 'AUD');
      const { nonce, merchant_reference } = await createHosted(gw, { amount: '0.01' }, aud);
      const { data } = await gatewayData(gw, nonce);
      expect(data).toMatchObject({ currency: 'AUD', amount: '0.01', amount_cny: null, currency_rate: null });
      expect(verifyGatewayData(data, aud.api_key)).toBe(true);

      const res = await rawGet(gw, queryPath(merchant_reference, aud.user_id, aud.api_key));
      expect(res.text).toContain('"amount":0.01,"amount_cny":null,"rate":0.00000,');
      expect(verifyQueryResponse(JSON.parse(res.text), aud.api_key)).toBe(true);
    });

    it('a CNY wallet converts at rate 1', async () => {
      const cny = await addWallet(gw, 'CNY');
      const { nonce, merchant_reference } = await createHosted(gw, { amount: '88.80' }, cny);
      expect((await gatewayData(gw, nonce)).data).toMatchObject({
        currency: 'CNY',
        amount: '88.80',
        amount_cny: '88.80',
        currency_rate: '1.000000',
      });
      const res = await rawGet(gw, queryPath(merchant_reference, cny.user_id, cny.api_key));
      expect(res.text).toContain('"amount":88.8,"amount_cny":88.8,"rate":1.00000,');
    });

    it('a wallet currency with a rate: amount_cny rounded half up to the fen', async () => {
      // 0.05 NZD at 4.6443 = 0.232215 CNY
      const { nonce, merchant_reference } = await createHosted(gw, { amount: '0.05' });
      expect((await gatewayData(gw, nonce)).data).toMatchObject({ amount_cny: '0.23', currency_rate: '4.644300' });
      const res = await rawGet(gw, queryPath(merchant_reference, gw.merchant.user_id, gw.merchant.api_key));
      expect(res.text).toContain('"amount":0.05,"amount_cny":0.23,"rate":4.64430,');
    });

    it('the rate is fixed when the order is created', async () => {
      const aud = await addWallet(gw, 'AUD');
      const { nonce } = await createHosted(gw, {}, aud);
      await gw.store.accounts.setRate('AUD', 'CNY', 5_000_000, Date.now());
      expect((await gatewayData(gw, nonce)).data).toMatchObject({ amount_cny: null, currency_rate: null });
      const later = await createHosted(gw, {}, aud);
      expect((await gatewayData(gw, later.nonce)).data).toMatchObject({
        amount_cny: '600.00',
        currency_rate: '5.000000',
      });
    });
  });
});

const NONCE_TTL_MS = 500;
describe.each(ENGINES)('expired nonce on %s', (engine) => {
  let gw: TestGateway;
  beforeAll(async () => {
    // Long enough that a loaded machine still uses a fresh nonce in time, short enough to wait out.
    gw = await startTestGateway(engine, { nonceTtlMs: NONCE_TTL_MS });
  });
  afterAll(async () => gw?.close());

  it('answers 3 and says it expired', async () => {
    const { nonce } = await createHosted(gw);
    await new Promise((r) => setTimeout(r, NONCE_TTL_MS + 100));
    const reply = await gatewayData(gw, nonce);
    expect(reply).toMatchObject({ code: 3, message: 'data error' });
    expect(reply.detail).toMatch(/expired/);
  });

  it('re-creating the order gives a fresh nonce that works', async () => {
    const first = await createHosted(gw);
    await new Promise((r) => setTimeout(r, NONCE_TTL_MS + 100));
    const again = await createHosted(gw, { merchant_reference: first.merchant_reference });
    expect(again.order_id).toBe(first.order_id);
    expect((await gatewayData(gw, again.nonce)).code).toBe(0);
  });
});

describe.each(ENGINES)('live mode on %s', (engine) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(engine, { mode: 'live' });
    await useAccount(gw, alipayAccount(gw.merchant.wallet_id, undefined));
  });
  afterAll(async () => gw?.close());

  it('has no sandbox routes', async () => {
    const { order_id } = await gw.create();
    const page = await rawGet(gw, `/sandbox/pay/${order_id}`);
    expect(page.status).toBe(404);
    const post = await fetch(`${gw.url}/sandbox/pay/${order_id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'result=paid',
    });
    expect(post.status).toBe(404);
    expect(await post.json()).toMatchObject({ code: 1 });
    expect(await gw.store.transactions.find(order_id)).toMatchObject({ status: 'pending' });
  });
});

function queryPath(merchant_reference: string, user_id: string, apiKey: string): string {
  const signature = signRequest({ merchant_reference, user_id }, apiKey);
  return `/v2/transaction/${encodeURIComponent(merchant_reference)}?${new URLSearchParams({ user_id, signature })}`;
}
