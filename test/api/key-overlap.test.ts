// A wallet's key rotated with an overlap window: the replaced key still signs every request until
// the window ends (create, query, refund, cancel, wallet detail), and the answer to a request
// signed with it is signed with it too (the merchant's client verifies answers with the key it
// has). After the window, or after a rotation without one, the replaced key is refused (206).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient } from '../../sdk/client.js';
import { hmacSha256Hex } from '../../sdk/signing.js';
import { rotateWalletKey } from '../../src/usecases/wallet-keys.js';
import { addWallet } from '../support/api.js';
import { ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';

describe.each(ENGINES)('API key rotation with overlap on %s', (engine) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(engine);
  });
  afterAll(async () => gw?.close());

  const fields = (merchant_reference: string) => ({
    payment_method: 'alipay',
    amount: '12.30',
    return_url: 'https://shop.example/return',
    callback_url: 'https://shop.example/notify',
    merchant_reference,
    ip: '203.0.113.9',
    product_name: 'Kawakawa tea',
  });
  const client = (w: { user_id: string; wallet_id: string }, apiKey: string) =>
    new GatewayClient({ baseUrl: gw.url, userId: w.user_id, walletId: w.wallet_id, apiKey });

  it('inside the window both keys work, and each gets answers signed with its own key', async () => {
    const w = await addWallet(gw, 'NZD');
    const rotated = (await rotateWalletKey(gw.store, Date.now(), w.wallet_id))!;
    expect(rotated.previous_key_expires_at).toBeGreaterThan(Date.now() + 23 * 3600_000);
    const old = client(w, w.api_key);
    const fresh = client(w, rotated.api_key);
    // The client verifies the create and query answers' signatures with its own key, and throws when they do not match.
    expect(await old.createTransaction(fields('overlap-old'))).toMatchObject({ code: 0 });
    expect(await fresh.createTransaction(fields('overlap-new'))).toMatchObject({ code: 0 });
    expect(await old.query('overlap-old')).toMatchObject({ code: 0, status: 'pending' });
    expect(await fresh.query('overlap-old')).toMatchObject({ code: 0, status: 'pending' });
    expect(await old.cancel('overlap-old')).toMatchObject({ code: 0 });
    expect(await old.query('overlap-old')).toMatchObject({ code: 0, status: 'canceled' });
    const detail = await fetch(
      `${gw.url}/v2/detail/${w.wallet_id}?user_id=${w.user_id}&signature=${hmacSha256Hex(w.api_key, w.wallet_id + w.user_id)}`,
    );
    expect(await detail.json()).toMatchObject({ code: 0 });
  });

  it('a long poll signed with the replaced key is answered with a signature by that key', async () => {
    const w = await addWallet(gw, 'NZD');
    expect(await client(w, w.api_key).createTransaction(fields('overlap-poll'))).toMatchObject({ code: 0 });
    await rotateWalletKey(gw.store, Date.now(), w.wallet_id);
    const polling = client(w, w.api_key).query('overlap-poll', { block: true });
    await new Promise((r) => setTimeout(r, 100));
    expect(await client(w, w.api_key).cancel('overlap-poll')).toMatchObject({ code: 0 });
    expect(await polling).toMatchObject({ code: 0, status: 'canceled' });
  });

  it('after the window, or after a rotation without one, the replaced key is refused with 206', async () => {
    const w = await addWallet(gw, 'NZD');
    // The window as if it had ended a moment ago.
    expect(await gw.store.accounts.rotateApiKey(w.wallet_id, 'NEWKEY-AFTER-WINDOW', Date.now() - 1)).toBe(true);
    expect(await client(w, w.api_key).createTransaction(fields('after-window'))).toMatchObject({ code: 206 });
    expect(await client(w, 'NEWKEY-AFTER-WINDOW').createTransaction(fields('after-window'))).toMatchObject({ code: 0 });
    const exposed = (await rotateWalletKey(gw.store, Date.now(), w.wallet_id, 0))!;
    expect(exposed.previous_key_expires_at).toBeNull();
    expect(await client(w, 'NEWKEY-AFTER-WINDOW').query('after-window')).toMatchObject({ code: 206 });
    expect(await client(w, exposed.api_key).query('after-window')).toMatchObject({ code: 0 });
  });
});
