// Cached users and wallets are forgotten on every instance as soon as one of them (or the CLI)
// changes them: instance a disables a user and rotates a key, instance b must act on it at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signRequest } from '../../sdk/signing.js';
import { startPair, until, type GatewayPair } from './pair.js';

describe('credential changes across instances (PostgreSQL)', () => {
  let pair: GatewayPair;
  beforeAll(async () => {
    // A long TTL: only the NOTIFY can make instance b forget what it cached.
    pair = await startPair({ credentialCacheMs: 600_000 });
  });
  afterAll(async () => pair?.close());

  it('a user disabled on one instance is refused on the other', async () => {
    const { a, b } = pair;
    const { merchant_reference } = await a.create();
    expect((await b.query(merchant_reference, { merchant: a.merchant })).code).toBe(0);
    await a.store.accounts.setUserStatus(a.merchant.user_id, 'disabled');
    await until(
      'instance b refuses the disabled user',
      async () => (await b.query(merchant_reference, { merchant: a.merchant })).code === 205,
    );
    await a.store.accounts.setUserStatus(a.merchant.user_id, 'active');
    expect((await b.query(merchant_reference, { merchant: a.merchant })).code).toBe(0);
  });

  it('a key rotated on one instance stops verifying on the other', async () => {
    const { a, b } = pair;
    const { merchant_reference } = await a.create();
    const oldKey = a.merchant.api_key;
    expect((await b.query(merchant_reference, { merchant: a.merchant })).code).toBe(0);
    const newKey = 'ROTATED0123456789ABCDEF0123456789';
    await a.store.accounts.rotateApiKey(a.merchant.wallet_id, newKey, null);
    const signed = (key: string) => {
      const signature = signRequest({ merchant_reference, user_id: a.merchant.user_id }, key);
      return b.get(`/v2/transaction/${merchant_reference}?user_id=${a.merchant.user_id}&signature=${signature}`);
    };
    expect((await signed(newKey)).code).toBe(0);
    await until('instance b refuses the old key', async () => (await signed(oldKey)).code === 206);
  });
});
