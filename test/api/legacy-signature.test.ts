// The original service's legacy create signature: HMAC-SHA256, keyed with the api_key, of
// user_id + wallet_id + amount + payment_method + return_url + callback_url (nothing appended), as
// its CS-Cart plugin signs. Accepted while the wallet's legacy_signatures setting is on (the default).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hmacSha256Hex } from '../../sdk/signing.js';
import { createMerchant, createWallet, updateWallet, type MerchantCredentials } from '../../src/cli/admin.js';
import { jsonWithNumbers, rowCounts } from '../support/api.js';
import { ENGINES, startTestGateway, uniqueRef, type TestGateway } from '../support/gateway.js';

const COVERED = ['user_id', 'wallet_id', 'amount', 'payment_method', 'return_url', 'callback_url'] as const;

/** A create body as CS-Cart sends it (with its extra currency field and present_qr), signed the legacy way. */
function cscartBody(
  m: MerchantCredentials,
  over: Record<string, string> = {},
  signedAs: Record<string, string> = {},
): Record<string, string> {
  const body: Record<string, string> = {
    wallet_id: m.wallet_id,
    amount: '120.00',
    currency: m.currency,
    user_id: m.user_id,
    merchant_reference: uniqueRef('cscart'),
    return_url: 'https://shop.example/index.php?dispatch=payment_notification.return&payment=latipayv2',
    callback_url: 'https://shop.example/index.php?dispatch=payment_notification.notify&payment=latipayv2',
    ip: '122.122.122.1',
    version: '2.0',
    product_name: 'Order #1042',
    payment_method: 'alipay',
    present_qr: '1',
    ...over,
  };
  const s = { ...body, ...signedAs };
  body.signature = hmacSha256Hex(m.api_key, COVERED.map((f) => s[f]).join(''));
  return body;
}

describe.each(ENGINES)('legacy create signature on %s', (engine) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(engine);
  });
  afterAll(async () => gw?.close());

  it('a new wallet has the setting on: its DEFAULT holds when nothing is said', async () => {
    const w = await gw.store.accounts.findWallet(gw.merchant.wallet_id);
    expect(w?.legacy_signatures).toBe(1);
    // Inserted without the column at all, as an integration of an older release would.
    await gw.store.db
      .insertInto('wallets')
      .values({
        wallet_id: `W-${uniqueRef('d')}`.slice(0, 32),
        user_id: gw.merchant.user_id,
        wallet_name: 'x',
        currency: 'NZD',
        api_key: 'KEY1234',
        payment_methods: 'alipay',
        created_at: 1,
      })
      .execute();
    const rows = await gw.store.db
      .selectFrom('wallets')
      .select(['legacy_signatures'])
      .where('user_id', '=', gw.merchant.user_id)
      .execute();
    expect(rows.map((r) => r.legacy_signatures)).not.toContain(null);
    expect(new Set(rows.map((r) => r.legacy_signatures))).toEqual(new Set([1]));
  });

  it('is accepted while the wallet allows it, and the order is made as with any signature', async () => {
    const body = cscartBody(gw.merchant);
    const reply = await gw.post('/v2/transaction', body);
    expect(reply).toMatchObject({ code: 0, message: 'SUCCESS', nonce: expect.any(String) });
    const order = await gw.store.transactions.findByReference(gw.merchant.user_id, body.merchant_reference);
    expect(order).toMatchObject({
      amount: 12000,
      payment_method: 'alipay',
      product_name: 'Order #1042',
      present_qr: '1',
      status: 'pending',
    });
  });

  it('an amount written as a JSON number is signed as written', async () => {
    const body = cscartBody(gw.merchant, { amount: '120.5' });
    expect(await gw.post('/v2/transaction', jsonWithNumbers(body, { amount: '120.5' }))).toMatchObject({ code: 0 });
  });

  it.each(COVERED)('a signature over another %s answers 206 and stores nothing', async (field) => {
    const other: Record<string, string> = {
      user_id: 'U000000999',
      wallet_id: 'W00000999',
      amount: '12.00',
      payment_method: 'wechat',
      return_url: 'https://evil.example/return',
      callback_url: 'https://evil.example/notify',
    };
    const before = await rowCounts(gw);
    const reply = await gw.post('/v2/transaction', cscartBody(gw.merchant, {}, { [field]: other[field] }));
    expect(reply).toMatchObject({ code: 206, message: 'Signature from Merchant request is wrong' });
    expect(await rowCounts(gw)).toEqual(before);
  });

  it("another wallet's key, the fields in another order, or the key appended answer 206", async () => {
    const m = gw.merchant;
    const second = await createWallet(gw.store, { user_id: m.user_id, currency: 'NZD' });
    const body = cscartBody(m);
    const message = COVERED.map((f) => body[f]).join('');
    for (const signature of [
      hmacSha256Hex(second.api_key, message),
      hmacSha256Hex(
        m.api_key,
        body.wallet_id + body.user_id + body.amount + body.payment_method + body.return_url + body.callback_url,
      ),
      hmacSha256Hex(m.api_key, message + m.api_key),
    ]) {
      expect(await gw.post('/v2/transaction', { ...body, signature })).toMatchObject({ code: 206 });
    }
  });

  it('covers none of the other fields: while on, a captured request replays with another reference (the documented risk)', async () => {
    const body = cscartBody(gw.merchant);
    expect((await gw.post('/v2/transaction', body)).code).toBe(0);
    const replay = { ...body, merchant_reference: uniqueRef('replayed'), product_name: 'Something else' };
    expect((await gw.post('/v2/transaction', replay)).code).toBe(0);
  });

  it('is refused with 206 once the operator turns it off, and accepted again when turned back on; the spec form works throughout', async () => {
    const m = await createMerchant(gw.store, { name: 'Legacy off', currency: 'NZD' });
    const settings = await updateWallet(gw.store, m.wallet_id, { legacy_signatures: 0 });
    expect(settings).toMatchObject({ wallet_id: m.wallet_id, legacy_signatures: 'off' });
    const before = await rowCounts(gw);
    expect(await gw.post('/v2/transaction', cscartBody(m))).toMatchObject({
      code: 206,
      detail: expect.stringMatching(/signing rules/),
    });
    expect(await rowCounts(gw)).toEqual(before);
    expect(await gw.post('/v2/transaction', gw.createBody({}, m))).toMatchObject({ code: 0 });
    await updateWallet(gw.store, m.wallet_id, { legacy_signatures: 1 });
    expect(await gw.post('/v2/transaction', cscartBody(m))).toMatchObject({ code: 0 });
  });

  it('a wallet created with the setting off refuses it from the start', async () => {
    const m = await createMerchant(gw.store, { name: 'Strict', currency: 'NZD', legacy_signatures: 0 });
    expect((await gw.store.accounts.findWallet(m.wallet_id))?.legacy_signatures).toBe(0);
    expect((await gw.post('/v2/transaction', cscartBody(m))).code).toBe(206);
    const w = await createWallet(gw.store, { user_id: m.user_id, currency: 'AUD', legacy_signatures: 0 });
    expect((await gw.store.accounts.findWallet(w.wallet_id))?.legacy_signatures).toBe(0);
  });

  it('is only for create: a refund or cancel signed by concatenation is still 206', async () => {
    const { order_id, merchant_reference } = await gw.create();
    const m = gw.merchant;
    const cancel = {
      user_id: m.user_id,
      merchant_reference,
      signature: hmacSha256Hex(m.api_key, m.user_id + merchant_reference),
    };
    expect((await gw.post('/cancel', cancel)).code).toBe(206);
    await gw.pay(order_id);
    const refund = {
      user_id: m.user_id,
      order_id,
      refund_amount: '1.00',
      reference: 'r',
      signature: hmacSha256Hex(m.api_key, `${m.user_id}${order_id}1.00r`),
    };
    expect((await gw.post('/refund', refund)).code).toBe(206);
  });
});
