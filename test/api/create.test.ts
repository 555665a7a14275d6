// POST /v2/transaction: success for every channel and method, amounts and signature variants,
// account errors and duplicate merchant_reference. Field-by-field bad input: create-fields.test.ts.
// (Over 300 lines: one endpoint's behaviour; each case is short.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hmacSha256Hex, signRequest, verifyCreateResponse } from '../../sdk/signing.js';
import { PAYMENT_METHODS } from '../../src/domain/transaction.js';
import {
  addWallet,
  cancelBody,
  createHosted,
  gatewayData,
  jsonWithNumbers,
  rawGet,
  rawPost,
  rowCounts,
} from '../support/api.js';
import { ENGINES, startTestGateway, uniqueRef, type TestGateway } from '../support/gateway.js';

describe.each(ENGINES)('create on %s', (engine) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(engine);
  });
  afterAll(async () => gw?.close());

  const post = (body: unknown) => gw.post('/v2/transaction', body);

  describe('hosted checkout', () => {
    it.each(PAYMENT_METHODS)('%s: SUCCESS with a signed host_url and a fresh nonce', async (payment_method) => {
      const body = gw.createBody({ payment_method });
      const reply = await post(body);
      expect(reply).toEqual({
        code: 0,
        message: 'SUCCESS',
        host_url: `${gw.ctx.config.publicUrl}/v2/checkout`,
        nonce: expect.stringMatching(/^[0-9a-f]{32}$/),
        signature: expect.stringMatching(/^[0-9a-f]{64}$/),
      });
      expect(verifyCreateResponse(reply, gw.merchant.api_key)).toBe(true);
      const order = await gw.store.transactions.findByReference(gw.merchant.user_id, body.merchant_reference);
      expect(order).toMatchObject({ status: 'pending', payment_method, amount: 12000, currency: 'NZD', host_type: 0 });
      // The nonce starts with its creation millisecond (so new nonces sort together in the index).
      expect(parseInt(reply.nonce.slice(0, 11), 16)).toBe(order!.created_at);
      expect(order!.order_id).toMatch(/^\d{8}\d{8,}$/);
    });

    it('the page at {host_url}/{nonce} names the order', async () => {
      const { reply, order_id } = await gw.create();
      const page = await rawGet(gw, `${new URL(reply.host_url).pathname}/${reply.nonce}`);
      expect(page.status).toBe(200);
      expect(page.contentType).toMatch(/text\/html/);
      expect(page.text).toContain(order_id);
    });

    it('accepts optional backPage_url and wechat present_qr', async () => {
      const reply = await post(
        gw.createBody({ payment_method: 'wechat', present_qr: '1', backPage_url: 'https://merchantsite.com/back' }),
      );
      expect(reply.code).toBe(0);
    });

    it('nonces differ from one creation to the next', async () => {
      const a = await gw.create();
      const b = await gw.create();
      expect(a.reply.nonce).not.toBe(b.reply.nonce);
      expect(a.order_id).not.toBe(b.order_id);
    });
  });

  describe('merchant-hosted QR (host_type 1)', () => {
    it.each(['alipay', 'wechat'])('%s: host_url is the gateway data address', async (payment_method) => {
      const { reply, nonce } = await createHosted(gw, { payment_method });
      expect(reply).toMatchObject({
        code: 0,
        message: 'SUCCESS',
        host_url: `${gw.ctx.config.publicUrl}/v2/merchanthosted/gatewaydata`,
      });
      expect(new URL(reply.host_url).pathname).toBe('/v2/merchanthosted/gatewaydata');
      expect(verifyCreateResponse(reply, gw.merchant.api_key)).toBe(true);
      expect((await gatewayData(gw, nonce)).code).toBe(0);
    });

    it.each(PAYMENT_METHODS.filter((m) => m !== 'alipay' && m !== 'wechat'))(
      '%s is refused with 303',
      async (payment_method) => {
        const before = await rowCounts(gw);
        expect(await post(gw.createBody({ payment_method, host_type: '1' }))).toMatchObject({
          code: 303,
          message: 'Wrong pay type from merchant',
        });
        expect(await rowCounts(gw)).toEqual(before);
      },
    );

    it('version may be a JSON number 2.0 (signed as 2.0); 2 is refused as any other version', async () => {
      const body = gw.createBody({ version: '2.0' });
      expect(await post(jsonWithNumbers(body, { version: '2.0' }))).toMatchObject({ code: 0 });
      const two = gw.createBody({ version: '2' });
      expect(await post(jsonWithNumbers(two, { version: '2' }))).toMatchObject({ code: 207 });
    });

    it('host_type may be a JSON number', async () => {
      const body = gw.createBody({ host_type: '1' });
      const reply = await post(jsonWithNumbers(body, { host_type: '1' }));
      expect(reply).toMatchObject({ code: 0, host_url: `${gw.ctx.config.publicUrl}/v2/merchanthosted/gatewaydata` });
    });
  });

  describe('amounts', () => {
    it('a JSON number is sign-checked as written: 120.00', async () => {
      const body = gw.createBody({ amount: '120.00' });
      const text = jsonWithNumbers(body, { amount: '120.00' });
      expect(text).toContain('"amount":120.00');
      expect((await post(text)).code).toBe(0);
      expect((await gw.store.transactions.findByReference(gw.merchant.user_id, body.merchant_reference))!.amount).toBe(
        12000,
      );
    });

    it('a JSON number 120.0 is signed as 120.0, not 120 or 120.00', async () => {
      const body = gw.createBody({ amount: '120.0' });
      expect((await post(jsonWithNumbers(body, { amount: '120.0' }))).code).toBe(0);
      const signedAs120 = gw.createBody({ amount: '120' });
      expect(
        await post(jsonWithNumbers(signedAs120, { amount: '120.0' }).replace('"amount":120.0', '"amount":120.00')),
      ).toMatchObject({ code: 206 });
      const signedAs12000 = gw.createBody({ amount: '120.00' });
      expect(await post(jsonWithNumbers(signedAs12000, { amount: '120.0' }))).toMatchObject({ code: 206 });
    });

    it.each([
      ['0.01', 1],
      ['1', 100],
      ['120.5', 12050],
      ['999999999999.99', 99999999999999],
    ])('%s is stored as %i minor units', async (amount, minor) => {
      const body = gw.createBody({ amount });
      expect((await post(body)).code).toBe(0);
      expect((await gw.store.transactions.findByReference(gw.merchant.user_id, body.merchant_reference))!.amount).toBe(
        minor,
      );
    });

    it.each(['0', '0.00', '1.234', '1'.repeat(13), '1000000000000.00'])(
      '%s is refused with 207 and nothing stored',
      async (amount) => {
        const before = await rowCounts(gw);
        expect(await post(gw.createBody({ amount }))).toMatchObject({ code: 207, message: 'Param is wrong' });
        expect(await rowCounts(gw)).toEqual(before);
      },
    );
  });

  describe('signatures', () => {
    it('an empty optional field may be left out of the message or kept as name=', async () => {
      const omitted = gw.createBody({ backPage_url: '' });
      expect(await post(omitted)).toMatchObject({ code: 0 });

      const kept = gw.createBody({ backPage_url: '' });
      const { signature: _ignored, ...fields } = kept;
      const message =
        Object.keys(fields)
          .sort()
          .map((k) => `${k}=${fields[k]}`)
          .join('&') + gw.merchant.api_key;
      expect(message).toContain('&backPage_url=&');
      kept.signature = hmacSha256Hex(gw.merchant.api_key, message);
      expect(await post(kept)).toMatchObject({ code: 0 });
    });

    it('accepts the hex digest in uppercase', async () => {
      const body = gw.createBody();
      expect((await post({ ...body, signature: body.signature.toUpperCase() })).code).toBe(0);
    });

    it('fields the schema does not name are part of the signed message', async () => {
      const body = gw.createBody({ extra_note: 'x' });
      expect((await post(body)).code).toBe(0);
      expect(await post({ ...body, extra_note: 'y' })).toMatchObject({ code: 206 });
    });

    it.each([
      ['a changed field', (b: Record<string, string>) => ({ ...b, amount: '120.01' })],
      ['an added field', (b: Record<string, string>) => ({ ...b, backPage_url: 'https://evil.example/' })],
      [
        'a removed optional field',
        (b: Record<string, string>) => {
          const { present_qr: _p, ...rest } = b;
          return rest;
        },
      ],
      ['a signature of 63 characters', (b: Record<string, string>) => ({ ...b, signature: b.signature.slice(1) })],
      ['a signature that is not hex', (b: Record<string, string>) => ({ ...b, signature: 'z'.repeat(64) })],
      [
        'a valid digest of another message',
        (b: Record<string, string>) => ({ ...b, signature: hmacSha256Hex(gw.merchant.api_key, 'x') }),
      ],
    ])('%s answers 206 and stores nothing', async (_what, tamper) => {
      const before = await rowCounts(gw);
      const reply = await post(tamper(gw.createBody({ present_qr: '1', payment_method: 'wechat' })));
      expect(reply).toMatchObject({ code: 206, message: 'Signature from Merchant request is wrong' });
      expect(reply.detail).toEqual(expect.any(String));
      expect(await rowCounts(gw)).toEqual(before);
    });

    it("a signature made with another merchant's key answers 206", async () => {
      const other = await gw.newMerchant();
      const body = gw.createBody();
      body.signature = signRequest({ ...body, signature: undefined }, other.api_key);
      expect(await post(body)).toMatchObject({ code: 206 });
    });

    it("a signature made with another wallet's key of the same user answers 206", async () => {
      const second = await addWallet(gw, 'NZD');
      const body = gw.createBody();
      body.signature = signRequest({ ...body, signature: undefined }, second.api_key);
      expect(await post(body)).toMatchObject({ code: 206 });
      expect((await post(gw.createBody({}, second))).code).toBe(0);
    });
  });

  describe('accounts', () => {
    it('an unknown user_id answers 110', async () => {
      expect(await post(gw.createBody({ user_id: 'U999999999' }))).toMatchObject({
        code: 110,
        message: 'User not exist',
      });
    });

    it('a disabled user answers 205, and works again when enabled', async () => {
      const m = await gw.newMerchant();
      await gw.store.accounts.setUserStatus(m.user_id, 'disabled');
      expect(await post(gw.createBody({}, m))).toMatchObject({
        code: 205,
        message: 'Can not find out corresponding key for the user code or user is disabled or user is not activity',
      });
      await gw.store.accounts.setUserStatus(m.user_id, 'active');
      expect((await post(gw.createBody({}, m))).code).toBe(0);
    });

    it('an unknown wallet_id answers 301', async () => {
      expect(await post(gw.createBody({ wallet_id: 'W404' }))).toMatchObject({
        code: 301,
        message: 'Wrong account info or currency info',
      });
    });

    it("a currency field other than the wallet's answers 301; the wallet's own is accepted", async () => {
      expect(await post(gw.createBody({ currency: 'AUD' }))).toMatchObject({
        code: 301,
        message: 'Wrong account info or currency info',
      });
      expect((await post(gw.createBody({ currency: 'NZD' }))).code).toBe(0);
    });

    it("another user's wallet answers 450", async () => {
      const other = await gw.newMerchant();
      // Signed with the other wallet's own key: the ids, not the signature, are what is wrong.
      expect(await post(gw.createBody({ user_id: gw.merchant.user_id }, other))).toMatchObject({
        code: 450,
        message: 'Wallet not assign to user',
      });
    });

    it('a wallet limited to some methods answers 304 for the others', async () => {
      const limited = await addWallet(gw, 'NZD', 'alipay,wechat');
      expect(await post(gw.createBody({ payment_method: 'polipay' }, limited))).toMatchObject({
        code: 304,
        message: 'Wallet does not support this payment method',
      });
      expect((await post(gw.createBody({ payment_method: 'wechat' }, limited))).code).toBe(0);
    });

    it.each(['unionpay', 'Alipay', 'onlineBank'])('payment_method %s answers 303', async (payment_method) => {
      expect(await post(gw.createBody({ payment_method }))).toMatchObject({ code: 303 });
    });
  });

  describe('duplicate merchant_reference', () => {
    it('a pending order gets a fresh nonce, and the old one stops working', async () => {
      const merchant_reference = uniqueRef('dup');
      const first = await createHosted(gw, { merchant_reference });
      const again = await createHosted(gw, { merchant_reference, product_name: 'Renamed' });
      expect(again.order_id).toBe(first.order_id);
      expect(again.nonce).not.toBe(first.nonce);
      expect(await gatewayData(gw, first.nonce)).toMatchObject({ code: 3, message: 'data error' });
      expect(await gatewayData(gw, again.nonce)).toMatchObject({
        code: 0,
        data: { order_id: first.order_id, product_name: 'Renamed' },
      });
    });

    it('a paid order answers 900; a failed one 901; a canceled one 901', async () => {
      for (const [result, code] of [
        ['paid', 900],
        ['failed', 901],
      ] as const) {
        const { order_id, merchant_reference } = await gw.create();
        await gw.pay(order_id, result);
        expect(await post(gw.createBody({ merchant_reference }))).toMatchObject({ code });
      }
      const { merchant_reference } = await gw.create();
      expect((await gw.post('/cancel', cancelBody(gw, merchant_reference))).code).toBe(0);
      expect(await post(gw.createBody({ merchant_reference }))).toMatchObject({ code: 901 });
    });

    it.each([
      ['amount', { amount: '99.00' }],
      ['payment_method', { payment_method: 'wechat' }],
      ['host_type', { host_type: '1' }],
    ])('a pending order re-created with a different %s answers 3', async (_field, change) => {
      const { merchant_reference, order_id } = await gw.create();
      const before = await rowCounts(gw);
      expect(await post(gw.createBody({ merchant_reference, ...change }))).toMatchObject({
        code: 3,
        message: 'data error',
      });
      expect(await rowCounts(gw)).toEqual(before);
      expect(await gw.store.transactions.find(order_id)).toMatchObject({
        amount: 12000,
        payment_method: 'alipay',
        host_type: 0,
      });
    });

    it('a pending order re-created from another wallet of the user answers 3', async () => {
      const second = await addWallet(gw, 'NZD');
      const { merchant_reference } = await gw.create();
      expect(await post(gw.createBody({ merchant_reference }, second))).toMatchObject({ code: 3 });
    });

    it('the same merchant_reference is independent per user', async () => {
      const other = await gw.newMerchant();
      const { merchant_reference, order_id } = await gw.create();
      const theirs = await gw.create({ merchant_reference }, other);
      expect(theirs.order_id).not.toBe(order_id);
    });

    it('an existing reference: renewed, paid 900, different amount 3; nothing but the nonce written', async () => {
      const pending = await createHosted(gw);
      const paid = await gw.create();
      await gw.pay(paid.order_id, 'paid');
      const before = await rowCounts(gw);
      const again = await post(gw.createBody({ merchant_reference: pending.merchant_reference, host_type: '1' }));
      expect(again).toMatchObject({ code: 0 });
      expect(await gatewayData(gw, pending.nonce)).toMatchObject({ code: 3 });
      // The older nonce stopped working by expiring at the renewal, not by being marked used: nobody opened anything.
      const old = await gw.store.db
        .selectFrom('nonces')
        .select(['used_at', 'expires_at'])
        .where('nonce', '=', pending.nonce)
        .executeTakeFirstOrThrow();
      expect(old.used_at).toBeNull();
      expect(Number(old.expires_at)).toBeLessThanOrEqual(Date.now());
      expect(await gatewayData(gw, again.nonce)).toMatchObject({ code: 0, data: { order_id: pending.order_id } });
      expect(await post(gw.createBody({ merchant_reference: paid.merchant_reference }))).toMatchObject({ code: 900 });
      expect(
        await post(gw.createBody({ merchant_reference: pending.merchant_reference, host_type: '1', amount: '1.00' })),
      ).toMatchObject({ code: 3 });
      const after = await rowCounts(gw);
      // The renewal's nonce is the only new row.
      expect(after).toEqual({ ...before, nonces: before.nonces + 1 });
    });

    it('concurrent creations of one merchant_reference make one order', async () => {
      const merchant_reference = uniqueRef('race');
      const replies = await Promise.all(Array.from({ length: 8 }, () => post(gw.createBody({ merchant_reference }))));
      for (const r of replies) expect(r.code).toBe(0);
      const rows = await gw.store.db
        .selectFrom('transactions')
        .select('order_id')
        .where('merchant_reference', '=', merchant_reference)
        .execute();
      expect(rows).toHaveLength(1);
    });
  });

  it('a form-encoded or text/plain body is read like JSON', async () => {
    const form = await rawPost(
      gw,
      '/v2/transaction',
      new URLSearchParams(gw.createBody()).toString(),
      'application/x-www-form-urlencoded',
    );
    expect(form.json).toMatchObject({ code: 0 });
    const plain = await rawPost(gw, '/v2/transaction', JSON.stringify(gw.createBody()), 'text/plain');
    expect(plain.json).toMatchObject({ code: 0 });
  });
});
