// Closing an organisation from the console, on both engines: refused while an order is pending or a
// wallet holds money, and with a wrong name; once closed its API users, wallets and console users are
// disabled for good (the API refuses it, its users are signed out, nothing can be enabled or invited).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleUser, type ConsoleClient } from '../support/console-client.js';
import { ENGINES, startTestGateway, uniqueRef, type TestGateway } from '../support/gateway.js';

describe.each(ENGINES)('closing an organisation on %s', (engine) => {
  let gw: TestGateway;
  let admin: ConsoleClient;
  beforeAll(async () => {
    gw = await startTestGateway(engine);
    admin = (await consoleUser(gw, 'operator', 'admin')).client;
  });
  afterAll(async () => gw?.close());

  const close = async (organisation_id: number, name: string) => {
    await admin.get(`/console/organisations/${organisation_id}`);
    return admin.post(`/console/organisations/${organisation_id}/close`, { name });
  };

  it('is refused while an order is pending or a wallet holds money, and with a name that is not its own', async () => {
    const m = await gw.newMerchant();
    const org = (await gw.store.accounts.findOrganisation(m.organisation_id))!;
    const order = await gw.create({ merchant_reference: uniqueRef('still-pending') }, m);
    const pending = await close(m.organisation_id, org.organisation_name);
    expect(pending.status).toBe(400);
    expect(pending.body).toContain(`Order ${order.order_id} is still pending`);
    await gw.pay(order.order_id);
    const holding = await close(m.organisation_id, org.organisation_name);
    expect(holding.status).toBe(400);
    expect(holding.body).toContain(`Wallet ${m.wallet_id} still holds money`);
    const wrong = await close(m.organisation_id, 'Someone Else Ltd');
    expect(wrong.status).toBe(400);
    expect((await gw.store.accounts.findOrganisation(m.organisation_id))!.closed_at).toBeNull();
  });

  it('disables its API users, wallets and console users for good', async () => {
    const m = await gw.newMerchant();
    const org = (await gw.store.accounts.findOrganisation(m.organisation_id))!;
    const owner = await consoleUser(gw, 'merchant', 'owner', m.organisation_id);
    expect((await owner.client.get('/console')).status).toBe(200);
    const closed = await close(m.organisation_id, ` ${org.organisation_name.toUpperCase()} `);
    expect(closed.status).toBe(200);
    expect(closed.body).toContain('The organisation is closed.');
    expect(closed.body).toContain('id="closed"');
    expect(closed.body).not.toContain('id="close-organisation"');
    // The API refuses it; its users are signed out and cannot sign in.
    const create = await gw.post('/v2/transaction', gw.createBody({ merchant_reference: uniqueRef('after') }, m));
    expect(create.code).toBe(205);
    expect((await owner.client.get('/console')).location).toBe('/console/sign-in');
    expect((await gw.store.accounts.findWallet(m.wallet_id))!.wallet_status).toBe('disabled');
    // Nothing of it can be enabled again, nor anyone invited.
    const base = `/console/organisations/${m.organisation_id}`;
    expect((await admin.post(`${base}/status`, { status: 'active', confirmed: 'yes' })).body).toContain(
      'This organisation is closed',
    );
    expect((await admin.post(`/console/wallets/${m.wallet_id}/status`, { status: 'active' })).body).toContain(
      'This organisation is closed',
    );
    expect((await admin.post(`${base}/invite`, { email: 'new@closed.example', role: 'staff' })).body).toContain(
      'This organisation is closed',
    );
    expect((await gw.store.accounts.findWallet(m.wallet_id))!.wallet_status).toBe('disabled');
    const list = (await admin.get('/console/organisations')).body;
    expect(list).toMatch(new RegExp(`${m.organisation_id}</a></td><td[^>]*>[^<]*</td><td[^>]*>closed</td>`));
    const entries = await gw.store.console.listAudit({ actions: ['organisation.close'], limit: 5 });
    expect(entries[0].object).toBe(String(m.organisation_id));
    // A second close says it is closed already.
    expect((await close(m.organisation_id, org.organisation_name)).body).toContain('This organisation is closed');
  });
});
