// The original service's published shop plugins (Latipay/latipay-2.0-plugin), replayed as they
// call the API: the wallet detail when the shop is configured, then a create in each plugin's own
// shape (its signing form, amount format and extra fields), whose answer the plugin verifies.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hmacSha256Hex, verifyCreateResponse } from '../../sdk/signing.js';
import { ENGINES, startTestGateway, uniqueRef, type TestGateway } from '../support/gateway.js';

/** PHP's ksort + `k=v&...` over every field, empty ones kept, then the key appended (the plugins do not drop empty values). */
function phpSortedSignature(fields: Record<string, string | number>, apiKey: string): string {
  const names = Object.keys(fields).sort();
  return hmacSha256Hex(apiKey, names.map((n) => `${n}=${fields[n]}`).join('&') + apiKey);
}

describe.each(ENGINES)('shop plugins of the original service on %s', (engine) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(engine);
  });
  afterAll(async () => gw?.close());

  async function detailMethods(signed: boolean, headers: Record<string, string> = {}): Promise<string[]> {
    const m = gw.merchant;
    const sig = signed ? `&signature=${hmacSha256Hex(m.api_key, m.wallet_id + m.user_id)}` : '';
    const res = await fetch(`${gw.url}/v2/detail/${m.wallet_id}?user_id=${m.user_id}${sig}`, { headers });
    expect(res.status).toBeLessThan(300);
    const json = await res.json();
    expect(json.code).toBe(0);
    return (json.payment_method as string).split(',').map((n) => n.trim().toLowerCase());
  }

  async function createAs(body: string, path = '/v2/transaction', contentType = 'application/json'): Promise<any> {
    const res = await fetch(gw.url + path, { method: 'POST', headers: { 'content-type': contentType }, body });
    const reply = await res.json();
    expect(reply, body).toMatchObject({ code: 0, message: 'SUCCESS' });
    expect(verifyCreateResponse(reply, gw.merchant.api_key)).toBe(true);
    return reply;
  }

  it('WooCommerce 3.1.0: signed detail, then a create signed in the sorted form with every field (backPage_url, present_qr)', async () => {
    const methods = await detailMethods(true);
    expect(methods).toEqual(expect.arrayContaining(['alipay', 'wechat', 'moneymore']));
    const m = gw.merchant;
    const fields = {
      user_id: m.user_id,
      wallet_id: m.wallet_id,
      amount: '120.00',
      payment_method: 'moneymore',
      return_url: 'https://shop.example/?wc-api=latipay',
      callback_url: 'https://shop.example/?wc-api=latipay',
      backPage_url: 'https://shop.example/cart/?cancel_order=true',
      merchant_reference: `1042_${uniqueRef('wc')}`,
      ip: '203.0.113.9',
      product_name: 'Pinot Noir, Otago',
      version: '2.0',
      present_qr: '1',
    };
    await createAs(JSON.stringify({ ...fields, signature: phpSortedSignature(fields, m.api_key) }));
  });

  it('Magento 2.3.1: unsigned detail with a JSON Content-Type, then a create of 120.0000 with present_qr as the number 1', async () => {
    const methods = await detailMethods(false, { 'content-type': 'application/json' });
    expect(methods).toContain('wechat');
    const m = gw.merchant;
    const fields = {
      user_id: m.user_id,
      wallet_id: m.wallet_id,
      payment_method: 'wechat',
      return_url: 'https://shop.example/latipay/payment/response',
      callback_url: 'https://shop.example/latipay/payment/callback',
      backPage_url: 'https://shop.example/checkout/cart',
      merchant_reference: `000000042_${uniqueRef('m2')}`,
      ip: '203.0.113.9',
      product_name: 'Order 000000042',
      version: '2.0',
      amount: '120.0000',
      present_qr: 1,
    };
    const reply = await createAs(JSON.stringify({ ...fields, signature: phpSortedSignature(fields, m.api_key) }));
    expect(reply.host_url).toMatch(/\/v2\/checkout$/);
    const order = await gw.store.transactions.findByReference(m.user_id, fields.merchant_reference);
    expect(order).toMatchObject({ amount: 12000, present_qr: '1', payment_method: 'wechat' });
  });

  it('OpenCart 3.0.2.0: signed detail, then a create whose amount is a JSON number', async () => {
    await detailMethods(true);
    const m = gw.merchant;
    const fields = {
      user_id: m.user_id,
      wallet_id: m.wallet_id,
      payment_method: 'alipay',
      return_url: 'https://shop.example/latipay2/url.php',
      callback_url: 'https://shop.example/latipay2/backUrl.php',
      backPage_url: 'https://shop.example/index.php?route=checkout/cart',
      merchant_reference: `77_${uniqueRef('oc')}`,
      ip: '203.0.113.9',
      product_name: 'Order 77',
      version: '2.0',
      present_qr: '1',
    };
    const signature = phpSortedSignature({ ...fields, amount: '120.5' }, m.api_key);
    await createAs(`${JSON.stringify({ ...fields, signature }).slice(0, -1)},"amount":120.5}`);
  });

  it('CS-Cart 4.6.2: the legacy concatenation signature, with its currency field', async () => {
    const m = gw.merchant;
    const body = {
      wallet_id: m.wallet_id,
      amount: '120.00',
      currency: m.currency,
      user_id: m.user_id,
      merchant_reference: uniqueRef('cscart'),
      return_url: 'https://shop.example/index.php?dispatch=payment_notification.return',
      callback_url: 'https://shop.example/index.php?dispatch=payment_notification.notify',
      ip: '203.0.113.9',
      version: '2.0',
      product_name: 'Order #1042',
      payment_method: 'alipay',
      present_qr: '1',
    };
    const signature = hmacSha256Hex(
      m.api_key,
      body.user_id + body.wallet_id + body.amount + body.payment_method + body.return_url + body.callback_url,
    );
    await createAs(JSON.stringify({ ...body, signature }));
  });

  it('ECShop: a create posted to /v2/transaction/ (trailing slash), as a form-typed JSON body', async () => {
    const m = gw.merchant;
    const fields = {
      user_id: m.user_id,
      wallet_id: m.wallet_id,
      amount: '88',
      payment_method: 'alipay',
      return_url: 'https://shop.example/respond.php?code=latipayalipay',
      callback_url: 'https://shop.example/latipaycallback.php',
      merchant_reference: `20261124-1-${uniqueRef('ec')}`,
      ip: '203.0.113.9',
      product_name: 'Order 2026112400001',
      version: '2.0',
    };
    await createAs(
      JSON.stringify({ ...fields, signature: phpSortedSignature(fields, m.api_key) }),
      '/v2/transaction/',
      'application/x-www-form-urlencoded',
    );
  });
});
