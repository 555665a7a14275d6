// The books in the console over HTTP, on both engines (issue 40): a merchant's owner sees the
// balance card, its wallet's statement (and CSV), adds a bank account and asks for a payout; an
// operator verifies the account, sets fee plans, limits and the settlement delay, approves and
// batches the payout, downloads the file and marks it paid; staff only look; another merchant's
// user sees nothing of it; every change is in the audit log.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMerchant, type MerchantCredentials } from '../../src/cli/admin.js';
import { runSettlement } from '../../src/usecases/books.js';
import { runAutoPayouts } from '../../src/usecases/auto-payouts.js';
import { consoleUser, type ConsoleClient } from '../support/console-client.js';
import { ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';

describe.each(ENGINES)('the books in the console on %s', (engine) => {
  let gw: TestGateway;
  let shop: MerchantCredentials;
  let other: MerchantCredentials;
  let owner: ConsoleClient;
  let staff: ConsoleClient;
  let stranger: ConsoleClient;
  let admin: ConsoleClient;
  let support: ConsoleClient;
  beforeAll(async () => {
    gw = await startTestGateway(engine, {
      bankFiles: { nz: { account: '38-9016-0704505-00', name: 'Kiwi Payments' } },
    });
    shop = await createMerchant(gw.store, { name: 'Books Shop', currency: 'NZD' });
    other = await createMerchant(gw.store, { name: 'Other Shop', currency: 'NZD' });
    owner = (await consoleUser(gw, 'merchant', 'owner', shop.organisation_id)).client;
    staff = (await consoleUser(gw, 'merchant', 'staff', shop.organisation_id)).client;
    stranger = (await consoleUser(gw, 'merchant', 'owner', other.organisation_id)).client;
    admin = (await consoleUser(gw, 'operator', 'admin')).client;
    support = (await consoleUser(gw, 'operator', 'support')).client;
  });
  afterAll(async () => gw?.close());

  const books = () => `/console/wallets/${shop.wallet_id}/books`;

  it('a payment on the dashboard card and the statement; CSV; nothing for another merchant', async () => {
    const { order_id } = await gw.create({ amount: '120.00' }, shop);
    await gw.pay(order_id, 'paid');
    const dash = await owner.get('/console');
    expect(dash.body).toMatch(/id="balances"[\s\S]*NZD[\s\S]*120\.00/);
    const page = await owner.get(books());
    expect(page.status).toBe(200);
    expect(page.body).toContain(order_id);
    expect(page.body).toMatch(/id="closing"[\s\S]*120\.00/);
    const today = new Date().toISOString().slice(0, 10);
    const csv = await owner.get(`${books()}/statement.csv?from=${today}&to=${today}`);
    expect(csv.type).toMatch(/text\/csv/);
    const rows = csv.body.trim().split('\n');
    expect(rows[0]).toBe('date,kind,order_id,refund_id,payout_id,pending,available,reserved,memo');
    expect(rows.map((r) => r.split(',')[1])).toEqual(['kind', 'opening', 'payment', 'closing']);
    // Another organisation's user: not found, as if there were no such wallet.
    expect((await stranger.get(books())).status).toBe(404);
    expect((await stranger.get(`${books()}/statement.csv`)).status).toBe(404);
    expect((await stranger.get('/console')).body).not.toContain('120.00');
    // Operators' pages are not a merchant's.
    expect((await owner.get('/console/payouts')).status).toBe(404);
    expect((await owner.get('/console/balances')).status).toBe(404);
  });

  it('bank account, verification, payout request, approval, batch, file and paid; audited', async () => {
    await owner.get(books());
    const bad = await owner.post(`${books()}/bank-accounts`, {
      holder: 'Books Shop',
      nz_account: '01-0902-0068398-00',
    });
    expect(bad.status).toBe(400);
    expect(bad.body).toContain('check digits');
    await owner.get(books());
    expect(
      (await owner.post(`${books()}/bank-accounts`, { holder: 'Books Shop', nz_account: '01-0902-0068389-00' })).status,
    ).toBe(303);
    // Staff and a stranger cannot add one; a merchant cannot verify one.
    await staff.get(books());
    expect(
      (await staff.post(`${books()}/bank-accounts`, { holder: 'X', nz_account: '01-0902-0068389-00' })).status,
    ).toBe(403);
    await stranger.get('/console');
    expect(
      (await stranger.post(`${books()}/bank-accounts`, { holder: 'X', nz_account: '01-0902-0068389-00' })).status,
    ).toBe(404);
    const [account] = await gw.store.payouts.listBankAccounts(shop.wallet_id);
    await owner.get(books());
    expect((await owner.post(`/console/bank-accounts/${account.bank_account_id}/verify`, {})).status).toBe(404);
    await support.get('/console');
    expect((await support.post(`/console/bank-accounts/${account.bank_account_id}/verify`, {})).status).toBe(403);
    await admin.get(books());
    expect((await admin.post(`/console/bank-accounts/${account.bank_account_id}/verify`, {})).status).toBe(303);
    expect((await owner.get(books())).body).toContain('01-0902-****389-00');

    // Money available at once: the operator sets a delay of 0 days.
    await admin.get(books());
    expect((await admin.post(`${books()}/settlement`, { delay_days: '0' })).status).toBe(303);
    await runSettlement(gw.store, Date.now() + 1);
    await owner.get(books());
    const tooMuch = await owner.post(`${books()}/payouts`, { amount: '500.00' });
    expect(tooMuch.status).toBe(400);
    expect(tooMuch.body).toContain('120.00 NZD available');
    await owner.get(books());
    expect((await owner.post(`${books()}/payouts`, { amount: '100.00' })).status).toBe(303);
    const [payout] = await gw.store.payouts.list({ wallet_id: shop.wallet_id });
    expect(payout).toMatchObject({ amount: 10000, payout_status: 'requested' });

    const queue = await admin.get('/console/payouts');
    expect(queue.body).toContain(payout.payout_id);
    expect((await admin.post(`/console/payouts/${payout.payout_id}/approve`, {})).location).toBe(
      '/console/payouts?notice=saved',
    );
    await admin.get('/console/payouts');
    expect((await admin.post('/console/payouts/batch', { currency: 'NZD' })).status).toBe(303);
    const [batch] = await gw.store.payouts.listBatches();
    const file = await admin.get(`/console/payouts/batches/${batch.batch_id}/file`);
    expect(file.body.split('\r\n')[1]).toBe(
      `2,0109020068389000,50,10000,Books Shop,${payout.payout_id},,,,Kiwi Payments,,${payout.payout_id},`,
    );
    // AUD settings are not there: the batch says which is missing.
    await admin.get('/console/payouts');
    const aud = await admin.post('/console/payouts/batch', { currency: 'AUD' });
    expect(aud.status).toBe(400);
    expect(aud.body).toContain('PAYOUT_ABA_USER_ID');
    await admin.get('/console/payouts');
    expect((await admin.post(`/console/payouts/${payout.payout_id}/paid`, {})).status).toBe(303);
    expect((await gw.store.payouts.find(payout.payout_id))?.payout_status).toBe('paid');
    // Paid twice: refused with why.
    await admin.get('/console/payouts');
    const twice = await admin.post(`/console/payouts/${payout.payout_id}/paid`, {});
    expect(twice.status).toBe(409);
    expect(twice.body).toContain('is paid: it cannot be paid');
    expect(await gw.store.ledger.walletBalances(shop.wallet_id, 'NZD')).toMatchObject({ available: 2000, reserved: 0 });
    const actions = (await gw.store.console.listAudit({ limit: 200 })).map((e) => e.action);
    for (const a of [
      'bank_account.add',
      'bank_account.verify',
      'settlement.set',
      'payout.request',
      'payout.approved',
      'payout.batch',
      'payout.file',
      'payout.paid',
    ])
      expect(actions).toContain(a);
  });

  it('automatic payout: its owner sets it and turns it off, the daily payout on the page; staff and another merchant cannot', async () => {
    await owner.get(books());
    const bad = await owner.post(`${books()}/auto-payout`, { above: '10.00', keep: '20.00' });
    expect(bad.status).toBe(400);
    expect(bad.body).toContain('must not be more than');
    await staff.get(books());
    expect((await staff.post(`${books()}/auto-payout`, { above: '1.00' })).status).toBe(403);
    await stranger.get('/console');
    expect((await stranger.post(`${books()}/auto-payout`, { above: '1.00' })).status).toBe(404);
    expect(await gw.store.payouts.autoPayout(shop.wallet_id)).toBeUndefined();

    await owner.get(books());
    expect((await owner.post(`${books()}/auto-payout`, { above: '10.00', keep: '5.00' })).status).toBe(303);
    const on = await owner.get(books());
    expect(on.body).toMatch(/id="auto-payout"[\s\S]*more than[^<]*10\.00[^<]*above[^<]*5\.00/);
    expect(on.body).toContain('name="above" required inputmode="decimal" value="10.00"');
    // The day's run (this one, or the gateway's own job first): 20.00 available, 15.00 paid out.
    await runAutoPayouts(gw.store, Date.now());
    const [today] = await gw.store.payouts.autoPayoutDays(shop.wallet_id, 1);
    const payout = await gw.store.payouts.find(today.payout_id!);
    expect(payout).toMatchObject({ amount: 1500, fee: 0, payout_status: 'requested', requested_by: 'auto' });
    expect((await owner.get(books())).body).toMatch(new RegExp(`id="auto-payout"[\\s\\S]*payout ${payout!.payout_id}`));
    expect((await admin.get('/console/payouts')).body).toContain(payout!.payout_id);

    await owner.get(books());
    expect((await owner.post(`${books()}/auto-payout`, { off: '1' })).status).toBe(303);
    expect(await gw.store.payouts.autoPayout(shop.wallet_id)).toBeUndefined();
    expect((await owner.get(books())).body).toContain('Off: payouts are made only when asked for.');
    await owner.get(books());
    expect((await owner.post(`/console/payouts/${payout!.payout_id}/cancel`, {})).status).toBe(303);
    const audited = (await gw.store.console.listAudit({ limit: 200 })).filter((e) => e.action === 'payout.auto');
    expect(audited.map((e) => e.after)).toEqual(['{"off":true}', '{"above":1000,"keep":500}']);
  });

  it('operators: fee plans and limits with their history, every balance, the margin report', async () => {
    await admin.get(books());
    expect((await admin.post(`${books()}/fee-plans`, { method: 'alipay', percent: '2.5', fixed: '0.30' })).status).toBe(
      303,
    );
    await admin.get(books());
    const badPlan = await admin.post(`${books()}/fee-plans`, { method: 'alipay', percent: '2.555' });
    expect(badPlan.status).toBe(400);
    expect(badPlan.body).toContain('--percent');
    await admin.get(books());
    expect((await admin.post(`${books()}/limits`, { single_max: '1000' })).status).toBe(303);
    const page = await admin.get(books());
    expect(page.body).toMatch(/id="fee-plans"[\s\S]*alipay[\s\S]*2\.50/);
    expect(page.body).toMatch(/id="limits"[\s\S]*1,000\.00/);
    // Their history: who set what, when (the audit log), newest first.
    expect(page.body).toMatch(/id="history"[\s\S]*limits\.set[\s\S]*settlement\.set/);
    // The merchant sees neither, and cannot set them.
    expect((await owner.get(books())).body).not.toContain('id="fee-plans"');
    expect((await owner.post(`${books()}/limits`, { single_max: '1' })).status).toBe(404);
    // A paid order under the plan earns its fee: the margin report shows it.
    await new Promise((r) => setTimeout(r, 5));
    const { order_id } = await gw.create({ amount: '100.00' }, shop);
    await gw.pay(order_id, 'paid');
    const margin = await admin.get('/console/reports/margin');
    expect(margin.body).toMatch(/id="margin"[\s\S]*NZD[\s\S]*alipay[\s\S]*2\.80/);
    const all = await support.get('/console/balances');
    expect(all.body).toContain(shop.wallet_id);
    // Chinese throughout.
    await admin.post('/console/language', { lang: 'zh', back: '/console/payouts' });
    expect((await admin.get('/console/payouts')).body).toContain('提现队列');
  });
});
