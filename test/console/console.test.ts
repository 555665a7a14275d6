// The console over HTTP, on both engines: invitation links, sign-in and its throttle, CSRF, sessions,
// who may see what (a merchant's user typing another organisation's order into the address bar),
// the audit log, the language.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMerchant, type MerchantCredentials } from '../../src/cli/admin.js';
import { inviteUser } from '../../src/usecases/console-auth.js';
import { runRetentionPass } from '../../src/usecases/retention.js';
import { createHosted, gatewayData, refundBody } from '../support/api.js';
import { ConsoleClient, PASSWORD, consoleUser } from '../support/console-client.js';
import { ENGINES, startTestGateway, uniqueRef, type TestGateway } from '../support/gateway.js';

describe.each(ENGINES)('console on %s', (engine) => {
  let gw: TestGateway;
  let other: MerchantCredentials;
  beforeAll(async () => {
    gw = await startTestGateway(engine);
    other = await createMerchant(gw.store, { name: 'Other Shop', currency: 'NZD' });
  });
  afterAll(async () => gw?.close());

  it('an invitation link sets the password once; sign-in then works, a wrong password does not', async () => {
    const made = await inviteUser(
      gw.ctx,
      { kind: 'cli', name: 'test' },
      { email: 'First.Operator@Example.com', kind: 'operator', role: 'admin', organisation_id: null },
    );
    expect(made.user.email).toBe('first.operator@example.com');
    const c = new ConsoleClient(gw.url);
    const path = new URL(made.link).pathname;
    expect((await c.get(path)).body).toContain('first.operator@example.com');
    const short = await c.post(path, { password: 'short', confirm: 'short' });
    expect(short.status).toBe(400);
    expect(short.body).toContain('at least 12 characters');
    expect((await c.post(path, { password: PASSWORD, confirm: PASSWORD })).location).toBe(
      '/console/sign-in?notice=password_set',
    );
    // Used up.
    expect((await c.get(path)).status).toBe(404);
    expect((await c.post(path, { password: 'another long password', confirm: 'another long password' })).status).toBe(
      404,
    );
    const wrong = await c.signIn('first.operator@example.com', 'not the password at all');
    expect(wrong.status).toBe(401);
    expect(wrong.body).toContain('The email or the password is not right.');
    const ok = await c.signIn('FIRST.operator@example.com', PASSWORD);
    expect(ok.location).toBe('/console');
    expect(c.hasCookie('gw_console')).toBe(true);
    // The session is kept by a hash of its id, with whom and where it was signed in from.
    const sessions = await sql<{
      session_hash: string;
      ip: string | null;
    }>`select session_hash, ip from console_sessions where console_user_id = ${made.user.console_user_id}`.execute(
      gw.store.db,
    );
    expect(sessions.rows).toHaveLength(1);
    expect(sessions.rows[0].session_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(sessions.rows[0].ip).toBe('127.0.0.1');
    expect((await c.get('/console')).body).toContain('first.operator@example.com');
    // The database keeps only a hash of the password.
    const row = await gw.store.console.findUserByEmail('first.operator@example.com');
    expect(row?.password_hash).toMatch(/^scrypt\$65536\$8\$1\$/);
    expect(row?.password_hash).not.toContain(PASSWORD);
  });

  it('refuses a form without its CSRF token, and one with a token of another browser', async () => {
    const { client } = await consoleUser(gw, 'operator', 'admin');
    const bare = await client.post('/console/sign-out', {}, { csrf: false });
    expect(bare.status).toBe(403);
    // An HTML page (the error handler sets the page's headers again).
    expect(bare.type).toBe('text/html; charset=utf-8');
    expect((await client.get('/console/no-such-page')).type).toBe('text/html; charset=utf-8');
    expect(bare.body).toContain('did not come from this console');
    const stranger = new ConsoleClient(gw.url);
    await stranger.get('/console/sign-in');
    expect((await client.post('/console/sign-out', { _csrf: stranger.csrf }, { csrf: false })).status).toBe(403);
    // Still signed in: nothing happened.
    expect((await client.get('/console')).status).toBe(200);
    expect((await client.post('/console/sign-out', {})).location).toBe('/console/sign-in?notice=signed_out');
    expect((await client.get('/console')).location).toBe('/console/sign-in');
  });

  it('takes forms only: another body type is 415, bytes that are not UTF-8 are 400, each a page that says so', async () => {
    const { client } = await consoleUser(gw, 'operator', 'admin');
    await client.get('/console');
    const send = async (type: string | undefined, body: string | Uint8Array<ArrayBuffer>) => {
      const res = await fetch(gw.url + '/console/sign-out', {
        method: 'POST',
        redirect: 'manual',
        body,
        headers: { cookie: client.cookieHeader(), ...(type && { 'content-type': type }) },
      });
      return { status: res.status, type: res.headers.get('content-type'), body: await res.text() };
    };
    const form = `_csrf=${encodeURIComponent(client.csrf)}`;
    for (const type of [
      'application/json',
      'text/plain',
      'multipart/form-data; boundary=x',
      'application/octet-stream',
    ]) {
      const r = await send(type, type === 'application/json' ? JSON.stringify({ _csrf: client.csrf }) : form);
      expect([type, r.status, r.type]).toEqual([type, 415, 'text/html; charset=utf-8']);
      expect(r.body).toContain('The form could not be read');
    }
    const latin1 = await send(
      'application/x-www-form-urlencoded',
      new Uint8Array(Buffer.concat([Buffer.from(`${form}&x=`), Buffer.from([0xe9])])),
    );
    expect(latin1.status).toBe(400);
    expect(latin1.body).toContain('The form could not be read');
    // Nothing happened: still signed in; the same form as a form signs out.
    expect((await client.get('/console')).status).toBe(200);
    expect((await send('application/x-www-form-urlencoded', form)).status).toBe(303);
  });

  it('refuses a control character in any field with a 400 page, before anything is stored (PostgreSQL text cannot hold NUL)', async () => {
    const { client: admin } = await consoleUser(gw, 'operator', 'admin');
    await admin.get('/console');
    const organisation_id = (await gw.store.accounts.findUser(gw.merchant.user_id))!.organisation_id;
    const forms: Array<[string, Record<string, string>]> = [
      ['/console/organisations', { name: 'Nul\u0000Brewery', currency: 'NZD' }],
      [`/console/organisations/${organisation_id}/rename`, { name: 'Renamed\u0000' }],
      ['/console/operators/invite', { email: 'nul\u0000@example.com', role: 'admin' }],
      ['/console/rates', { from: 'N\u0000Z', to: 'CNY', rate: '4.5' }],
      [
        `/console/wallets/${gw.merchant.wallet_id}/settings`,
        { name: 'Bell\u0007', methods: 'alipay', legacy_signatures: 'on' },
      ],
      // In a field's name too.
      ['/console/organisations', { 'na\u0000me': 'Tui', currency: 'NZD' }],
    ];
    for (const [path, fields] of forms) {
      const r = await admin.post(path, fields);
      expect([path, r.status, r.type]).toEqual([path, 400, 'text/html; charset=utf-8']);
      expect(r.body).toContain('holds a control character');
    }
    expect((await admin.get('/console/organisations')).body).not.toContain('Nul');
    expect((await gw.store.accounts.findWallet(gw.merchant.wallet_id))?.wallet_name).not.toContain('\u0007');
    // A textarea's line breaks and tabs are not control characters here: the form goes through to its route.
    expect(
      (await admin.post(`/console/organisations/${organisation_id}/rename`, { name: 'Line\r\nbreak\ttab' })).status,
    ).not.toBe(400);
  });

  it("answers an address holding NUL with a 400 page in the reader's language, not the API's JSON, and runs no route", async () => {
    const { client: admin } = await consoleUser(gw, 'operator', 'admin');
    await admin.get('/console');
    const organisation_id = (await gw.store.accounts.findUser(gw.merchant.user_id))!.organisation_id;
    for (const path of [
      '/console/transactions/%00',
      `/console/wallets/${gw.merchant.wallet_id}%00`,
      '/console/transactions?q=%00',
      '/console/%00',
    ]) {
      const r = await admin.get(path);
      expect([path, r.status, r.type]).toEqual([path, 400, 'text/html; charset=utf-8']);
      expect(r.body).toContain('The address holds a control character');
    }
    const rename = await admin.post(`/console/organisations/${organisation_id}%00/rename`, { name: 'Never stored' });
    expect([rename.status, rename.type]).toEqual([400, 'text/html; charset=utf-8']);
    expect((await admin.get('/console/organisations')).body).not.toContain('Never stored');
    const zh = await fetch(`${gw.url}/console/transactions/%00`, { headers: { 'accept-language': 'zh-CN' } });
    expect([zh.status, await zh.text()]).toEqual([400, expect.stringContaining('该地址含有控制字符')]);
  });

  it('answers an address the router cannot take (an over-long value, a broken %-escape) with the "nothing here" page, not the API\'s JSON', async () => {
    const { client: admin } = await consoleUser(gw, 'operator', 'admin');
    await admin.get('/console');
    for (const path of [
      `/console/transactions/${'x'.repeat(500)}`,
      '/console/transactions/%E0%A4%A',
      `/console/wallets/${'W'.repeat(300)}/channels/test`,
    ]) {
      const r = path.endsWith('/test') ? await admin.post(path, { payment_method: 'alipay' }) : await admin.get(path);
      expect([path.slice(0, 40), r.status, r.type]).toEqual([path.slice(0, 40), 404, 'text/html; charset=utf-8']);
      expect(r.body).toContain('There is nothing here, or you may not see it.');
    }
    const zh = await fetch(`${gw.url}/console/transactions/%E0%A4%A`, { headers: { 'accept-language': 'zh-CN' } });
    expect([zh.status, (await zh.text()).includes('lang="zh-CN"')]).toEqual([404, true]);
    // The API keeps its JSON answer for the same mistakes.
    const api = await fetch(`${gw.url}/v2/merchanthosted/gatewaydata/${'n'.repeat(300)}`);
    expect(api.headers.get('content-type')).toContain('application/json');
  });

  it('locks an account after 5 failed sign-ins, even for the right password, and says for how long', async () => {
    const { email } = await consoleUser(gw, 'merchant', 'owner', gw.merchant.organisation_id);
    const c = new ConsoleClient(gw.url);
    for (let i = 0; i < 5; i++) expect((await c.signIn(email, `wrong password ${i}!`)).status).toBe(401);
    const locked = await c.signIn(email, PASSWORD);
    expect(locked.status).toBe(429);
    expect(locked.body).toMatch(/Try again in 1[45] minutes/);
  });

  it("a merchant's user sees their organisation's orders only, whatever the URL or the filter", async () => {
    const mine = await gw.create({ merchant_reference: uniqueRef('mine') });
    const theirs = await gw.create({ merchant_reference: uniqueRef('theirs') }, other);
    const { client } = await consoleUser(gw, 'merchant', 'staff', gw.merchant.organisation_id);
    const own = await client.get(`/console/transactions/${mine.order_id}`);
    expect(own.status).toBe(200);
    expect(own.body).toContain(mine.merchant_reference);
    const foreign = await client.get(`/console/transactions/${theirs.order_id}`);
    expect(foreign.status).toBe(404);
    expect(foreign.body).not.toContain(theirs.merchant_reference);
    // The same answer as for an order that does not exist: nothing to learn from it.
    expect((await client.get('/console/transactions/NO-SUCH-ORDER')).status).toBe(404);
    const listed = await client.get(`/console/transactions?wallet_id=${other.wallet_id}`);
    expect(listed.body).not.toContain(theirs.order_id);
    const searched = await client.get(`/console/transactions?q=${theirs.merchant_reference}`);
    expect(searched.body).not.toContain(theirs.order_id);
    expect((await client.get(`/console/transactions?q=${mine.merchant_reference}`)).body).toContain(mine.order_id);
    // Staff may not read the audit log; an operator sees every organisation's order.
    expect((await client.get('/console/audit')).status).toBe(403);
    const { client: operator } = await consoleUser(gw, 'operator', 'support');
    expect((await operator.get(`/console/transactions/${theirs.order_id}`)).body).toContain('Other Shop');
  });

  it('pages through the list newest first with a cursor, and refuses a filter that is no filter', async () => {
    const org = await createMerchant(gw.store, { name: 'Pager', currency: 'NZD' });
    const refs: string[] = [];
    for (let i = 0; i < 53; i++) refs.push((await gw.create({ merchant_reference: uniqueRef(`p${i}`) }, org)).order_id);
    const { client } = await consoleUser(gw, 'merchant', 'owner', org.organisation_id);
    const first = await client.get('/console/transactions');
    const ids = (page: string) =>
      [...page.matchAll(/<td[^>]*><a href="\/console\/transactions\/([^"?]+)[?"]/g)].map((m) => m[1]);
    expect(ids(first.body)).toEqual(refs.slice(-50).reverse());
    const next = /id="next-page" rel="next" href="([^"]+)"/.exec(first.body)![1].replaceAll('&amp;', '&');
    const second = await client.get(next);
    expect(ids(second.body)).toEqual(refs.slice(0, 3).reverse());
    expect(second.body).not.toContain('id="next-page"');
    const bad = await client.get('/console/transactions?status=maybe&from=2026-02-30');
    expect(bad.status).toBe(400);
    expect(bad.body).toContain('status maybe');
    expect(bad.body).toContain('from 2026-02-30');
    // A range that ends before it begins is said to, not shown as an empty list.
    const backwards = await client.get('/console/transactions?from=2026-03-02&to=2026-03-01');
    expect(backwards.status).toBe(400);
    expect(backwards.body).toContain('The filter is not valid: from 2026-03-02 is after to 2026-03-01.');
    const oneDay = await client.get('/console/transactions?from=2026-03-01&to=2026-03-01');
    expect(oneDay.status).toBe(200);
    // This gateway runs in sandbox mode: every page says so.
    expect(oneDay.body).toContain(
      '<p class="sandbox-banner" id="sandbox-banner" role="status">Sandbox mode: a method without a provider account',
    );
  });

  it('signs out everywhere: every session of the user ends', async () => {
    const { email, client } = await consoleUser(gw, 'merchant', 'owner', gw.merchant.organisation_id);
    const phone = new ConsoleClient(gw.url);
    expect((await phone.signIn(email, PASSWORD)).location).toBe('/console');
    expect((await phone.get('/console')).status).toBe(200);
    await client.get('/console');
    expect((await client.post('/console/sign-out-everywhere', {})).location).toBe('/console/sign-in?notice=everywhere');
    expect((await phone.get('/console')).location).toBe('/console/sign-in');
    expect((await client.get('/console')).location).toBe('/console/sign-in');
  });

  it('keeps an audit log of console and CLI actions that the database will not let anyone change', async () => {
    const { client, email } = await consoleUser(gw, 'operator', 'admin');
    const log = await client.get('/console/audit');
    expect(log.status).toBe(200);
    expect(log.body).toContain('console.sign_in');
    expect(log.body).toContain(email);
    expect(log.body).toContain('user.invite');
    await expect(sql`update audit_log set action = 'nothing'`.execute(gw.store.db)).rejects.toThrow(/append-only/);
    await expect(sql`delete from audit_log`.execute(gw.store.db)).rejects.toThrow(/append-only/);
  });

  it("the dashboard shows each method's money paid and refunded in the window, and the net, whenever the orders were made", async () => {
    const shop = await createMerchant(gw.store, { name: 'Dashboard Shop', currency: 'NZD' });
    for (const amount of ['100.00', '50.00']) {
      const { order_id } = await gw.create({ amount, payment_method: 'alipay' }, shop);
      await gw.pay(order_id, 'paid');
      if (amount === '100.00')
        expect((await gw.post('/refund', refundBody(gw, order_id, '30.00', 'r', shop))).code).toBe(0);
    }
    // Paid today, but made before today (its life spans midnight): today's money, not today's orders.
    const late = await gw.create({ amount: '70.00', payment_method: 'alipay' }, shop);
    await gw.pay(late.order_id, 'paid');
    const startOfDay = Date.now() - (Date.now() % 86_400_000);
    await gw.store.db
      .updateTable('transactions')
      .set({ created_at: startOfDay - 60_000 })
      .where('order_id', '=', late.order_id)
      .execute();
    const { client } = await consoleUser(gw, 'merchant', 'owner', shop.organisation_id);
    const body = (await client.get('/console')).body;
    const today = body.slice(body.indexOf('id="h-dashboard.today"'), body.indexOf('id="h-dashboard.week"'));
    const cell = (label: string) => new RegExp(`data-label="${label}"[^>]*>([^<]*)<`).exec(today)?.[1];
    expect([cell('Volume'), cell('Refunded'), cell('Net'), cell('Orders')]).toEqual([
      expect.stringContaining('220.00'),
      expect.stringContaining('30.00'),
      expect.stringContaining('190.00'),
      '2',
    ]);
  });

  it("an owner refunds in two steps with the API's rules and codes; staff and other organisations cannot", async () => {
    const paid = await gw.create({ merchant_reference: uniqueRef('refund-me'), amount: '80.00' });
    await gw.pay(paid.order_id, 'paid');
    const path = `/console/transactions/${paid.order_id}`;
    const { client: staff } = await consoleUser(gw, 'merchant', 'staff', gw.merchant.organisation_id);
    expect((await staff.get(path)).body).not.toContain('id="refund-form"');
    expect((await staff.post(`${path}/refund`, { refund_amount: '1.00', confirmed: 'yes' })).status).toBe(403);
    const { client: stranger } = await consoleUser(gw, 'merchant', 'owner', other.organisation_id);
    expect((await stranger.post(`${path}/refund`, { refund_amount: '1.00', confirmed: 'yes' })).status).toBe(404);
    expect(await gw.store.refunds.listByOrder(paid.order_id)).toEqual([]);

    const { client: owner } = await consoleUser(gw, 'merchant', 'owner', gw.merchant.organisation_id);
    expect((await owner.get(path)).body).toContain('id="refund-form"');
    expect(
      (await owner.post(`${path}/refund`, { refund_amount: '30.00', reference: 'broken cork' }, { csrf: false }))
        .status,
    ).toBe(403);
    // An amount that cannot be refunded is refused at the first step, not repeated back for confirmation.
    for (const refund_amount of ['abc', '0', '0.00', '-1', '5.001', '80.01']) {
      const bad = await owner.post(`${path}/refund`, { refund_amount, reference: 'x' });
      expect([refund_amount, bad.status]).toEqual([refund_amount, 400]);
      expect(bad.body).toContain('at most what is left to refund (80.00 NZD)');
      expect(bad.body).not.toContain('confirmed');
    }
    const confirm = await owner.post(`${path}/refund`, { refund_amount: '30.00', reference: 'broken cork' });
    expect(confirm.status).toBe(200);
    expect(confirm.body).toContain('Refund 30.00 NZD of order');
    // Asking is not doing: nothing is refunded before the confirmation.
    expect(await gw.store.refunds.listByOrder(paid.order_id)).toEqual([]);
    const done = await owner.post(`${path}/refund`, {
      refund_amount: '30.00',
      reference: 'broken cork',
      confirmed: 'yes',
    });
    expect(done.location).toBe(`${path}?notice=refunded`);
    expect(
      (await gw.store.refunds.listByOrder(paid.order_id)).map((r) => [r.refund_amount, r.reference, r.refund_status]),
    ).toEqual([[3000, 'broken cork', 'succeeded']]);
    const again = await owner.post(`${path}/refund`, {
      refund_amount: '30.00',
      reference: 'broken cork',
      confirmed: 'yes',
    });
    expect(again.status).toBe(422);
    expect(again.body).toContain('code 562');
    const tooMuch = await owner.post(`${path}/refund`, { refund_amount: '60.00', confirmed: 'yes' });
    expect(tooMuch.body).toContain('code 550');
    const notAmount = await owner.post(`${path}/refund`, { refund_amount: '1.5.0', confirmed: 'yes' });
    expect(notAmount.body).toContain('code 550');
    expect(await gw.store.refunds.listByOrder(paid.order_id)).toHaveLength(1);
    const refunds = (await gw.store.console.listAudit({ limit: 50 })).filter(
      (e) => e.action === 'transaction.refund' && e.object === paid.order_id,
    );
    expect(refunds.map((e) => JSON.parse(e.after!).code).sort()).toEqual([0, 550, 550, 562]);
  });

  it('cancels a pending order in two steps as the API does; staff and other organisations cannot; a paid one is refused with 900', async () => {
    const pending = await gw.create({ merchant_reference: uniqueRef('cancel-me') });
    const path = `/console/transactions/${pending.order_id}`;
    const { client: staff } = await consoleUser(gw, 'merchant', 'staff', gw.merchant.organisation_id);
    expect((await staff.get(path)).body).not.toContain('id="cancel-form"');
    expect((await staff.post(`${path}/cancel`, { confirmed: 'yes' })).status).toBe(403);
    const { client: stranger } = await consoleUser(gw, 'merchant', 'owner', other.organisation_id);
    expect((await stranger.post(`${path}/cancel`, { confirmed: 'yes' })).status).toBe(404);
    expect((await gw.store.transactions.find(pending.order_id))!.status).toBe('pending');
    const { client: admin } = await consoleUser(gw, 'operator', 'admin');
    expect((await admin.get(path)).body).toContain('id="cancel-form"');
    const ask = await admin.post(`${path}/cancel`, {});
    expect(ask.body).toContain('id="confirm-cancel"');
    expect((await gw.store.transactions.find(pending.order_id))!.status).toBe('pending');
    expect((await admin.post(`${path}/cancel`, { confirmed: 'yes' })).location).toBe(`${path}?notice=canceled`);
    expect((await gw.store.transactions.find(pending.order_id))!.status).toBe('canceled');
    const paid = await gw.create({ merchant_reference: uniqueRef('paid-no-cancel') });
    await gw.pay(paid.order_id, 'paid');
    const refused = await admin.post(`/console/transactions/${paid.order_id}/cancel`, { confirmed: 'yes' });
    expect(refused.status).toBe(422);
    expect(refused.body).toContain('code 900');
    // In Chinese, the code is explained in Chinese before the API's own (English) message.
    await admin.post('/console/language', { lang: 'zh', back: '/console' });
    const zh = await admin.post(`/console/transactions/${paid.order_id}/cancel`, { confirmed: 'yes' });
    expect(zh.body).toContain('被拒绝，代码 900：交易已成功完成（transaction has been successfully completed');
    const entries = (await gw.store.console.listAudit({ limit: 50 })).filter((e) => e.action === 'transaction.cancel');
    expect(entries.map((e) => [e.object, JSON.parse(e.after!).code])).toEqual(
      expect.arrayContaining([
        [pending.order_id, 0],
        [paid.order_id, 900],
      ]),
    );
  });

  it('the timeline shows when the hosted page was opened, or the gateway data fetched', async () => {
    const { client } = await consoleUser(gw, 'merchant', 'staff', gw.merchant.organisation_id);
    const hosted = await gw.create({ merchant_reference: uniqueRef('opened') });
    expect((await client.get(`/console/transactions/${hosted.order_id}`)).body).not.toContain(
      'Hosted payment page opened',
    );
    expect((await fetch(`${gw.url}/v2/checkout/${hosted.reply.nonce}`)).status).toBe(200);
    expect((await client.get(`/console/transactions/${hosted.order_id}`)).body).toContain('Hosted payment page opened');
    // Created again (a fresh nonce): the renewal is not a visit.
    const renewed = await gw.create({ merchant_reference: uniqueRef('renewed') });
    expect((await gw.create({ merchant_reference: renewed.merchant_reference })).order_id).toBe(renewed.order_id);
    expect((await client.get(`/console/transactions/${renewed.order_id}`)).body).not.toContain(
      'Hosted payment page opened',
    );
    const qr = await createHosted(gw, { merchant_reference: uniqueRef('qr') });
    expect((await gatewayData(gw, qr.nonce)).code).toBe(0);
    expect((await client.get(`/console/transactions/${qr.order_id}`)).body).toContain(
      'Gateway data (the QR) fetched by the merchant',
    );
  });

  it("a transaction's page says what the customer was charged, how the order is hosted, and when it ended", async () => {
    const { client } = await consoleUser(gw, 'merchant', 'staff', gw.merchant.organisation_id);
    const order = await gw.create({ merchant_reference: uniqueRef('fields'), amount: '10.00' });
    const fields = (body: string) => body.slice(body.indexOf('id="fields"'), body.indexOf('</dl>'));
    const before = fields((await client.get(`/console/transactions/${order.order_id}`)).body);
    // The test gateway's rate NZD -> CNY is 4.6443: 10.00 NZD is 46.44 CNY.
    expect(before).toContain('CN¥46.44');
    expect(before).toContain('4.644300');
    expect(before).toContain('hosted checkout (0)');
    expect(before).toContain('sandbox');
    expect(before).not.toContain('pay_time');
    await gw.pay(order.order_id, 'paid');
    const after = fields((await client.get(`/console/transactions/${order.order_id}`)).body);
    expect(after).toContain('pay_time');
    const row = await gw.store.transactions.find(order.order_id);
    expect(after).toContain(
      new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'medium', timeZone: 'UTC' }).format(
        row!.pay_time!,
      ),
    );
    const qr = await createHosted(gw, { merchant_reference: uniqueRef('fields-qr') });
    expect(fields((await client.get(`/console/transactions/${qr.order_id}`)).body)).toContain('merchant-hosted QR (1)');
    await client.post('/console/language', { lang: 'zh', back: '/console' });
    expect(fields((await client.get(`/console/transactions/${qr.order_id}`)).body)).toContain('商户自有二维码 (1)');
  });

  it('the timeline says how many attempts retention removed, where they were', async () => {
    const { client } = await consoleUser(gw, 'merchant', 'staff', gw.merchant.organisation_id);
    const paid = await gw.create({ merchant_reference: uniqueRef('failing') });
    await gw.pay(paid.order_id, 'paid');
    const [row] = await gw.store.outbox.listByOrder(paid.order_id);
    const start = Date.now() - 3600_000;
    for (let i = 1; i <= 30; i++) {
      await gw.store.db
        .insertInto('notification_attempts')
        .values({
          event_id: row.event_id,
          attempted_at: start + i * 30_000,
          http_status: 502,
          response_excerpt: `try ${i}`,
          latency_ms: 5,
          error: null,
        })
        .execute();
    }
    await sql`update outbox set attempts = 30 where event_id = ${row.event_id}`.execute(gw.store.db);
    const path = `/console/transactions/${paid.order_id}`;
    expect((await client.get(path)).body).not.toContain('removed by retention');
    await runRetentionPass(gw.store, { now: Date.now(), attemptsDays: 30, nonceLifeMs: 24 * 3600_000 });
    const body = (await client.get(path)).body;
    const at = (text: string) => body.indexOf(text);
    expect(at('Earlier attempts removed by retention: 5')).toBeGreaterThan(at('<code>try 5</code>'));
    expect(at('Earlier attempts removed by retention: 5')).toBeLessThan(at('<code>try 11</code>'));
    expect(at('<code>try 5</code>')).toBeGreaterThan(0);
    for (const gone of [6, 7, 8, 9, 10]) expect(body).not.toContain(`<code>try ${gone}</code>`);
  });

  it('resends the latest notification now: owners and support may, staff may not', async () => {
    const paid = await gw.create({ merchant_reference: uniqueRef('resend-me') });
    await gw.pay(paid.order_id, 'paid');
    const pending = await gw.create({ merchant_reference: uniqueRef('nothing-yet') });
    const path = `/console/transactions/${paid.order_id}`;
    const { client: staff } = await consoleUser(gw, 'merchant', 'staff', gw.merchant.organisation_id);
    expect((await staff.post(`${path}/resend`, {})).status).toBe(403);
    const [before] = await gw.store.outbox.listByOrder(paid.order_id);
    await sql`update outbox set next_attempt_at = ${Date.now() + 3600_000} where event_id = ${before.event_id}`.execute(
      gw.store.db,
    );
    const { client: support } = await consoleUser(gw, 'operator', 'support');
    const sent = await support.post(`${path}/resend`, {});
    expect(sent.location).toBe(`${path}?notice=resent`);
    const [after] = await gw.store.outbox.listByOrder(paid.order_id);
    expect(after.event_id).toBe(before.event_id);
    expect(after.next_attempt_at).toBeLessThanOrEqual(Date.now());
    expect((await support.get(sent.location!)).body).toContain('queued to be sent again');
    const nothing = await support.post(`/console/transactions/${pending.order_id}/resend`, {});
    expect(nothing.status).toBe(409);
    expect(nothing.body).toContain('no notification to send again');
    expect(
      (await gw.store.console.listAudit({ limit: 50 })).some(
        (e) => e.action === 'transaction.resend' && e.object === paid.order_id,
      ),
    ).toBe(true);
  });

  it('speaks Chinese to a Chinese browser, and the switch sticks', async () => {
    const zh = new ConsoleClient(gw.url, { 'accept-language': 'zh-CN,zh;q=0.9,en;q=0.8' });
    const page = await zh.get('/console/sign-in');
    expect(page.body).toContain('<html lang="zh-CN"');
    expect(page.body).toContain('登录');
    const en = new ConsoleClient(gw.url, { 'accept-language': 'zh-CN' });
    await en.get('/console/sign-in');
    expect((await en.post('/console/language', { lang: 'en', back: '/console/sign-in' })).location).toBe(
      '/console/sign-in',
    );
    expect((await en.get('/console/sign-in')).body).toContain('<html lang="en-GB"');
    // The way back is always inside the console.
    expect((await en.post('/console/language', { lang: 'zh', back: 'https://evil.example/' })).location).toBe(
      '/console',
    );
  });
});

describe('console behind a proxy (TRUST_PROXY)', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway('sqlite', { trustProxy: '127.0.0.1' });
  });
  afterAll(async () => gw?.close());

  it('believes the trusted proxy: the cookies are Secure over https, and the client address is the forwarded one', async () => {
    const proxied = new ConsoleClient(gw.url, { 'x-forwarded-proto': 'https', 'x-forwarded-for': '203.0.113.9' });
    const first = await fetch(`${gw.url}/console/sign-in`, {
      headers: { 'x-forwarded-proto': 'https', 'x-forwarded-for': '203.0.113.9' },
    });
    expect(first.headers.getSetCookie().find((c) => c.startsWith('gw_console_csrf='))).toMatch(/; Secure/i);
    const plain = await fetch(`${gw.url}/console/sign-in`);
    expect(plain.headers.getSetCookie().find((c) => c.startsWith('gw_console_csrf='))).not.toMatch(/; Secure/i);
    const { email, console_user_id } = await consoleUser(gw, 'operator', 'admin');
    await proxied.get('/console/sign-in');
    const signedIn = await proxied.post('/console/sign-in', { email, password: PASSWORD });
    expect(signedIn.location).toBe('/console');
    const rows = await sql<{
      ip: string | null;
    }>`select ip from console_sessions where console_user_id = ${console_user_id} order by created_at desc`.execute(
      gw.store.db,
    );
    expect(rows.rows.map((r) => r.ip)).toContain('203.0.113.9');
    expect((await proxied.signIn(email, 'a wrong password here')).status).toBe(401);
    const [byAddress] = await gw.store.console.throttle(['address:203.0.113.9']);
    expect(byAddress?.failures).toBe(1);
  });
});
