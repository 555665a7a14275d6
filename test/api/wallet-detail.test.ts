// GET /v2/detail/{wallet_id}: the wallet's payment methods, called as the original service's shop
// plugins call it: signed (WooCommerce, OpenCart: HMAC of wallet_id + user_id) and unsigned with a
// JSON Content-Type on the GET (Magento).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient } from '../../sdk/client.js';
import { hmacSha256Hex, signRequest } from '../../sdk/signing.js';
import { PAYMENT_METHODS } from '../../src/domain/transaction.js';
import { updateWallet } from '../../src/cli/admin.js';
import { addWallet, rowCounts } from '../support/api.js';
import { ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';

const ALL = 'Wechat,Alipay,MoneyMore,Polipay,PayID,UPI_UPOP,Coin_Payments';

describe.each(ENGINES)('wallet detail on %s', (engine) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(engine);
  });
  afterAll(async () => gw?.close());

  /** The answer as a PHP plugin reads it: HTTP status, the JSON text, and the parsed object. */
  async function detail(
    path: string,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; text: string; json: any; type: string }> {
    const res = await fetch(gw.url + path, { headers });
    const text = await res.text();
    return { status: res.status, text, json: JSON.parse(text), type: res.headers.get('content-type') ?? '' };
  }
  const wooPath = (wallet_id: string, user_id: string, api_key: string) =>
    `/v2/detail/${wallet_id}?user_id=${user_id}&signature=${hmacSha256Hex(api_key, wallet_id + user_id)}`;

  it('WooCommerce: signed with HMAC(wallet_id + user_id): HTTP 200, integer code 0 and every method the wallet takes', async () => {
    const m = gw.merchant;
    const res = await detail(wooPath(m.wallet_id, m.user_id, m.api_key));
    expect(res.status).toBe(200);
    expect(res.type).toBe('application/json; charset=utf-8');
    expect(res.text).toBe(`{"code":0,"message":"SUCCESS","payment_method":"${ALL}"}`);
  });

  it('Magento: unsigned, with Content-Type: application/json on the GET, gets the same answer', async () => {
    const m = gw.merchant;
    const res = await detail(`/v2/detail/${m.wallet_id}?user_id=${m.user_id}`, { 'content-type': 'application/json' });
    expect(res.status).toBe(200);
    expect(res.json).toStrictEqual({ code: 0, message: 'SUCCESS', payment_method: ALL });
    // An empty signature parameter counts as none.
    expect((await detail(`/v2/detail/${m.wallet_id}?user_id=${m.user_id}&signature=`)).json.code).toBe(0);
  });

  it("the SDK's walletMethods gets them as create values; with another user's id it gets 450 and none", async () => {
    const m = gw.merchant;
    const client = new GatewayClient({ baseUrl: gw.url, userId: m.user_id, walletId: m.wallet_id, apiKey: m.api_key });
    expect(await client.walletMethods()).toEqual({
      code: 0,
      message: 'SUCCESS',
      payment_method: ALL,
      methods: [...PAYMENT_METHODS],
    });
    const other = await gw.newMerchant();
    const wrong = new GatewayClient({
      baseUrl: gw.url,
      userId: other.user_id,
      walletId: m.wallet_id,
      apiKey: other.api_key,
    });
    expect(await wrong.walletMethods()).toMatchObject({ code: 450, methods: [] });
  });

  it('the sorted form (user_id=..&wallet_id=.. + key) is accepted too', async () => {
    const m = gw.merchant;
    const signature = signRequest({ user_id: m.user_id, wallet_id: m.wallet_id }, m.api_key);
    expect((await detail(`/v2/detail/${m.wallet_id}?user_id=${m.user_id}&signature=${signature}`)).json).toMatchObject({
      code: 0,
      payment_method: ALL,
    });
  });

  it("lists exactly the wallet's methods, in its order, and follows a change at once", async () => {
    const w = await addWallet(gw, 'AUD', 'alipay,wechat');
    expect((await detail(wooPath(w.wallet_id, w.user_id, w.api_key))).json.payment_method).toBe('Alipay,Wechat');
    await updateWallet(gw.store, w.wallet_id, { methods: 'moneymore,alipay' });
    expect((await detail(wooPath(w.wallet_id, w.user_id, w.api_key))).json.payment_method).toBe('MoneyMore,Alipay');
  });

  it('every name, lower-cased and trimmed as the plugins do, is a payment_method a create accepts', async () => {
    const m = gw.merchant;
    const names = (await detail(wooPath(m.wallet_id, m.user_id, m.api_key))).json.payment_method.split(',');
    for (const name of names) {
      const reply = await gw.post('/v2/transaction', gw.createBody({ payment_method: name.trim().toLowerCase() }));
      expect(reply, name).toMatchObject({ code: 0, message: 'SUCCESS' });
    }
  });

  describe('refusals: HTTP 200 with the usual codes, signed or not', () => {
    it('an unknown user answers 110; a disabled user 205', async () => {
      const m = gw.merchant;
      expect((await detail(wooPath(m.wallet_id, 'U404', m.api_key))).json).toMatchObject({
        code: 110,
        message: 'User not exist',
      });
      expect((await detail(`/v2/detail/${m.wallet_id}?user_id=U404`)).json.code).toBe(110);
      const other = await gw.newMerchant();
      await gw.store.accounts.setUserStatus(other.user_id, 'disabled');
      for (const path of [
        wooPath(other.wallet_id, other.user_id, other.api_key),
        `/v2/detail/${other.wallet_id}?user_id=${other.user_id}`,
      ]) {
        const res = await detail(path);
        expect(res.status).toBe(200);
        expect(res.json).toMatchObject({ code: 205, detail: expect.stringMatching(/disabled/) });
      }
    });

    it('an unknown wallet answers 301; a wallet of another user 450', async () => {
      const m = gw.merchant;
      expect((await detail(wooPath('W404', m.user_id, m.api_key))).json).toMatchObject({
        code: 301,
        message: 'Wrong account info or currency info',
      });
      expect((await detail(`/v2/detail/W404?user_id=${m.user_id}`)).json.code).toBe(301);
      const other = await gw.newMerchant();
      expect((await detail(wooPath(other.wallet_id, m.user_id, m.api_key))).json).toMatchObject({
        code: 450,
        message: 'Wallet not assign to user',
      });
      expect((await detail(`/v2/detail/${other.wallet_id}?user_id=${m.user_id}`)).json.code).toBe(450);
    });

    it('a signature that is sent must verify: 206 otherwise', async () => {
      const m = gw.merchant;
      const second = await addWallet(gw, 'NZD');
      const bad = [
        hmacSha256Hex(m.api_key, m.user_id + m.wallet_id),
        hmacSha256Hex(second.api_key, m.wallet_id + m.user_id),
        hmacSha256Hex(m.api_key, m.wallet_id + m.user_id).slice(1),
        'not-hex',
      ];
      for (const signature of bad) {
        const res = await detail(`/v2/detail/${m.wallet_id}?user_id=${m.user_id}&signature=${signature}`);
        expect(res.status).toBe(200);
        expect(res.json, signature).toMatchObject({ code: 206, message: 'Signature from Merchant request is wrong' });
      }
    });

    it('a rotated key: the old one is refused at once, the new one accepted', async () => {
      const w = await addWallet(gw, 'CNY');
      expect((await detail(wooPath(w.wallet_id, w.user_id, w.api_key))).json.code).toBe(0);
      await gw.store.accounts.rotateApiKey(w.wallet_id, 'NEWKEY1234', null);
      expect((await detail(wooPath(w.wallet_id, w.user_id, w.api_key))).json.code).toBe(206);
      expect((await detail(wooPath(w.wallet_id, w.user_id, 'NEWKEY1234'))).json.code).toBe(0);
    });

    it('a missing or empty user_id or wallet_id answers 204; one too long 207', async () => {
      const m = gw.merchant;
      expect((await detail(`/v2/detail/${m.wallet_id}`)).json.code).toBe(204);
      expect((await detail(`/v2/detail/${m.wallet_id}?user_id=`)).json.code).toBe(204);
      expect((await detail(`/v2/detail/?user_id=${m.user_id}`)).json.code).toBe(204);
      expect((await detail(`/v2/detail?user_id=${m.user_id}`)).json.code).toBe(204);
      expect((await detail(`/v2/detail/${'W'.repeat(33)}?user_id=${m.user_id}`)).json.code).toBe(207);
      expect((await detail(`/v2/detail/${m.wallet_id}?user_id=${'U'.repeat(33)}`)).json.code).toBe(207);
      expect((await detail(`/v2/detail/${m.wallet_id}?user_id=${m.user_id}&user_id=${m.user_id}`)).json.code).toBe(207);
    });

    it('writes nothing', async () => {
      const before = await rowCounts(gw);
      const m = gw.merchant;
      await detail(wooPath(m.wallet_id, m.user_id, m.api_key));
      await detail(`/v2/detail/${m.wallet_id}?user_id=${m.user_id}&signature=${'0'.repeat(64)}`);
      expect(await rowCounts(gw)).toEqual(before);
    });
  });
});
