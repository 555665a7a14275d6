// A wallet's integration parameters in the console, on both engines: who may see the page and the
// key (by role and organisation, by direct URL), the key only after the password again (a wrong
// one counts against the sign-in throttle), rotation with an overlap window that the API honours,
// and callback health from failing notifications.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient } from '../../sdk/client.js';
import { createMerchant, type MerchantCredentials } from '../../src/cli/admin.js';
import { PASSWORD, consoleUser } from '../support/console-client.js';
import { ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';

describe.each(ENGINES)('console integration parameters on %s', (engine) => {
  let gw: TestGateway;
  let mine: MerchantCredentials;
  let other: MerchantCredentials;
  beforeAll(async () => {
    gw = await startTestGateway(engine);
    mine = await createMerchant(gw.store, { name: 'Kauri Books', currency: 'NZD' });
    other = await createMerchant(gw.store, { name: 'Elsewhere Ltd', currency: 'NZD' });
  });
  afterAll(async () => gw?.close());

  const keyOn = (body: string) => /id="api-key" class="secret">([^<]+)</.exec(body)?.[1];

  it('an owner sees the parameters, and the key only after entering the password again', async () => {
    const { client } = await consoleUser(gw, 'merchant', 'owner', mine.organisation_id);
    const list = await client.get('/console/wallets');
    expect(list.body).toContain(mine.wallet_id);
    expect(list.body).not.toContain(other.wallet_id);
    const pageBody = (await client.get(`/console/wallets/${mine.wallet_id}`)).body;
    expect(pageBody).toContain(mine.user_id);
    expect(pageBody).not.toContain(mine.api_key);
    const wrong = await client.post(`/console/wallets/${mine.wallet_id}/reveal`, {
      password: 'not my password at all',
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toContain('That password is not right.');
    expect(wrong.body).not.toContain(mine.api_key);
    const shown = await client.post(`/console/wallets/${mine.wallet_id}/reveal`, { password: PASSWORD });
    expect(shown.status).toBe(200);
    expect(keyOn(shown.body)).toBe(mine.api_key);
    expect(shown.body).not.toMatch(/api_key|previous_api_key/);
    const entries = await gw.store.console.listAudit({ organisation_id: mine.organisation_id, limit: 10 });
    expect(entries.map((e) => e.action)).toEqual(
      expect.arrayContaining(['wallet.reveal_key', 'console.password_failed']),
    );
    expect(JSON.stringify(entries)).not.toContain(mine.api_key);
  });

  it('staff and another organisation are refused, whatever the URL', async () => {
    const staff = await consoleUser(gw, 'merchant', 'staff', mine.organisation_id);
    const seen = await staff.client.get(`/console/wallets/${mine.wallet_id}`);
    expect(seen.status).toBe(200);
    expect(seen.body).toContain('may not see or rotate API keys');
    expect(seen.body).not.toContain('id="reveal-form"');
    expect((await staff.client.post(`/console/wallets/${mine.wallet_id}/reveal`, { password: PASSWORD })).status).toBe(
      403,
    );
    expect(
      (
        await staff.client.post(`/console/wallets/${mine.wallet_id}/rotate`, {
          password: PASSWORD,
          overlap_hours: '24',
        })
      ).status,
    ).toBe(403);
    const stranger = await consoleUser(gw, 'merchant', 'owner', other.organisation_id);
    for (const path of [`/console/wallets/${mine.wallet_id}`, '/console/wallets/W-NO-SUCH'])
      expect((await stranger.client.get(path)).status).toBe(404);
    const reveal = await stranger.client.post(`/console/wallets/${mine.wallet_id}/reveal`, { password: PASSWORD });
    expect(reveal.status).toBe(404);
    expect(reveal.body).not.toContain(mine.api_key);
    // Operators: support may look but not see keys; admin may.
    const support = await consoleUser(gw, 'operator', 'support');
    expect(
      (await support.client.post(`/console/wallets/${mine.wallet_id}/reveal`, { password: PASSWORD })).status,
    ).toBe(403);
    const admin = await consoleUser(gw, 'operator', 'admin');
    expect(
      keyOn((await admin.client.post(`/console/wallets/${other.wallet_id}/reveal`, { password: PASSWORD })).body),
    ).toBe(other.api_key);
  });

  it('rotation shows the new key once; the old key verifies inside the window, and not after a rotation without one; the form sent twice rotates once', async () => {
    const { client } = await consoleUser(gw, 'merchant', 'owner', mine.organisation_id);
    const w = await gw.store.accounts.findWallet(mine.wallet_id);
    const oldKey = w!.api_key;
    const fromOn = (body: string) => /name="from" value="([0-9a-f]+)"/.exec(body)![1];
    const from = fromOn((await client.get(`/console/wallets/${mine.wallet_id}`)).body);
    expect(
      (await client.post(`/console/wallets/${mine.wallet_id}/rotate`, { password: PASSWORD, overlap_hours: '5', from }))
        .status,
    ).toBe(400);
    const rotated = await client.post(`/console/wallets/${mine.wallet_id}/rotate`, {
      password: PASSWORD,
      overlap_hours: '24',
      from,
    });
    const newKey = keyOn(rotated.body)!;
    // The same form again (a reload of the result): nothing rotates, the key just given stays.
    const again = await client.post(`/console/wallets/${mine.wallet_id}/rotate`, {
      password: PASSWORD,
      overlap_hours: '24',
      from,
    });
    expect(again.status).toBe(409);
    expect(again.body).toContain('it was rotated already');
    expect(keyOn(again.body)).toBeUndefined();
    expect((await gw.store.accounts.findWallet(mine.wallet_id))!.api_key).toBe(newKey);
    expect(newKey).toMatch(/^[0-9A-F]{32}$/);
    expect(newKey).not.toBe(oldKey);
    expect(rotated.body).toMatch(/id="overlap">still verifies until/);
    const order = {
      payment_method: 'alipay',
      amount: '5.00',
      return_url: 'https://kauri.example/r',
      callback_url: 'https://kauri.example/n',
      ip: '203.0.113.1',
      product_name: 'Book',
    };
    const withKey = (apiKey: string) =>
      new GatewayClient({ baseUrl: gw.url, userId: mine.user_id, walletId: mine.wallet_id, apiKey });
    expect(await withKey(oldKey).createTransaction({ ...order, merchant_reference: 'console-rot-1' })).toMatchObject({
      code: 0,
    });
    expect(await withKey(newKey).createTransaction({ ...order, merchant_reference: 'console-rot-2' })).toMatchObject({
      code: 0,
    });
    const exposed = await client.post(`/console/wallets/${mine.wallet_id}/rotate`, {
      password: PASSWORD,
      overlap_hours: '0',
      from: fromOn(rotated.body),
    });
    const newest = keyOn(exposed.body)!;
    expect(exposed.body).toMatch(/id="overlap">none/);
    expect(await withKey(newKey).createTransaction({ ...order, merchant_reference: 'console-rot-3' })).toMatchObject({
      code: 206,
    });
    expect(await withKey(newest).createTransaction({ ...order, merchant_reference: 'console-rot-3' })).toMatchObject({
      code: 0,
    });
    const entries = await gw.store.console.listAudit({ organisation_id: mine.organisation_id, limit: 5 });
    const rotation = entries.find((e) => e.action === 'wallet.rotate_key');
    expect(rotation?.after).toBe('{"previous_key_expires_at":null}');
    expect(entries.filter((e) => e.action === 'wallet.rotate_key')).toHaveLength(2);
    expect(JSON.stringify(entries)).not.toContain(newest);
  });

  it('callback health lists the hosts whose notifications fail now, with the last failure', async () => {
    const { client } = await consoleUser(gw, 'merchant', 'staff', other.organisation_id);
    expect((await client.get(`/console/wallets/${other.wallet_id}`)).body).toContain('No notification is failing now.');
    const made = await gw.create({ callback_url: 'http://127.0.0.1:9/notify', merchant_reference: 'health-1' }, other);
    await gw.pay(made.order_id);
    const [row] = await gw.store.outbox.listByOrder(made.order_id);
    // One failed attempt, as the worker records it.
    const claimed = await gw.store.outbox.claimDue({
      now: Date.now() + 1,
      claimed_by: 'test',
      lease_ms: 60_000,
      limit: 10,
      per_host: 10,
    });
    const mineClaimed = claimed.find((r) => r.event_id === row.event_id)!;
    await gw.store.outbox.recordAttempt({
      event_id: row.event_id,
      claimed_by: 'test',
      claimed_until: mineClaimed.claimed_until!,
      delivered: false,
      next_attempt_at: Date.now() + 3_600_000,
      now: Date.now(),
      attempt: {
        attempted_at: Date.now(),
        http_status: null,
        response_excerpt: null,
        latency_ms: 3,
        error: 'connection refused (ECONNREFUSED)',
      },
    });
    const body = (await client.get(`/console/wallets/${other.wallet_id}`)).body;
    expect(body).toContain('127.0.0.1:9');
    expect(body).toContain('connection refused (ECONNREFUSED)');
  });
});
