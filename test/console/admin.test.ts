// Configuration from the console, over HTTP on both engines: organisations, API users, wallets
// (methods, legacy signature), console users (invite, disable, password link, two-factor reset),
// exchange rates with history, the outbox page; each refused by direct URL to roles and
// organisations that may not, and audited with before and after. The API follows at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient } from '../../sdk/client.js';
import { createMerchant, type MerchantCredentials } from '../../src/cli/admin.js';
import { openAccount } from '../../src/usecases/channel-accounts.js';
import { TEST_MASTER_KEY, useAccount, wechatpayAccount } from '../support/channels.js';
import { CERT_MODE_FIXTURES, FakeAlipay } from '../support/fake-alipay.js';
import { FakeWechatPay } from '../support/fake-wechatpay.js';
import { ConsoleClient, PASSWORD, consoleUser } from '../support/console-client.js';
import { ENGINES, startTestGateway, uniqueRef, type TestGateway } from '../support/gateway.js';

describe.each(ENGINES)('console configuration on %s', (engine) => {
  let gw: TestGateway;
  let other: MerchantCredentials;
  let admin: ConsoleClient;
  beforeAll(async () => {
    gw = await startTestGateway(engine);
    other = await createMerchant(gw.store, { name: 'Elsewhere Ltd', currency: 'NZD' });
    admin = (await consoleUser(gw, 'operator', 'admin')).client;
  });
  afterAll(async () => gw?.close());

  const order = (merchant_reference: string, payment_method = 'alipay') => ({
    payment_method,
    amount: '9.00',
    return_url: 'https://x.example/r',
    callback_url: 'https://x.example/n',
    merchant_reference,
    ip: '203.0.113.5',
    product_name: 'Thing',
  });
  const linkOn = (body: string) => /id="one-time-link">[\s\S]*?<code>([^<]+)<\/code>/.exec(body)?.[1];

  it('an admin creates an organisation, adds a wallet, edits its settings and disables its API user; the API follows', async () => {
    const made = await admin.post('/console/organisations', { name: 'Tui Brewery', currency: 'NZD' });
    expect(made.status).toBe(303);
    const id = Number(/\/console\/organisations\/(\d+)\?notice=saved/.exec(made.location!)![1]);
    const orgPage = (await admin.get(`/console/organisations/${id}`)).body;
    expect(orgPage).toContain('Tui Brewery');
    const user_id = /<tr><td[^>]*>(U\d{9})<\/td>/.exec(orgPage)![1];
    expect((await admin.get('/console/organisations')).body).toContain('Tui Brewery');
    // A second organisation of the same name (whatever its case) is refused: nothing is made.
    const twice = await admin.post('/console/organisations', { name: ' tui brewery ', currency: 'NZD' });
    expect(twice.status).not.toBe(303);
    expect(twice.body).toContain('Not saved: an organisation named tui brewery exists already.');
    expect(
      (await gw.store.accounts.listOrganisations()).filter((o) => /tui brewery/i.test(o.organisation_name)),
    ).toHaveLength(1);
    // A second wallet, AUD, two methods.
    const form = new URLSearchParams({ _csrf: admin.csrf, user_id, currency: 'AUD', name: 'Tui AUD' });
    form.append('methods', 'alipay');
    form.append('methods', 'wechat');
    const added = await fetch(`${gw.url}/console/organisations/${id}/wallets`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: admin.cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    });
    expect(added.status).toBe(303);
    const wallets = await gw.store.accounts.listOrganisationWallets(id);
    const aud = wallets.find((w) => w.currency === 'AUD')!;
    expect(aud.payment_methods).toBe('alipay,wechat');
    // Settings: only alipay, legacy signature off.
    await admin.get(`/console/wallets/${aud.wallet_id}`);
    expect(
      (await admin.post(`/console/wallets/${aud.wallet_id}/settings`, { name: 'Tui AUD', methods: 'alipay' })).location,
    ).toBe(`/console/wallets/${aud.wallet_id}?notice=saved`);
    const changed = (await gw.store.accounts.findWallet(aud.wallet_id))!;
    expect([changed.payment_methods, changed.legacy_signatures]).toEqual(['alipay', 0]);
    const entry = (await gw.store.console.listAudit({ organisation_id: id, actions: ['wallet.update'], limit: 1 }))[0];
    expect(JSON.parse(entry.before!)).toMatchObject({ payment_methods: 'alipay,wechat', legacy_signatures: 'on' });
    expect(JSON.parse(entry.after!)).toMatchObject({ payment_methods: 'alipay', legacy_signatures: 'off' });
    const api = new GatewayClient({ baseUrl: gw.url, userId: user_id, walletId: aud.wallet_id, apiKey: aud.api_key });
    expect(await api.createTransaction(order('tui-1', 'wechat'))).toMatchObject({ code: 304 });
    expect(await api.createTransaction(order('tui-2'))).toMatchObject({ code: 0 });
    // The API user disabled: 205; enabled again: 0.
    const askedUser = await admin.post(`/console/api-users/${user_id}/status`, { status: 'disabled' });
    expect(askedUser.body).toContain(`Disable API user ${user_id} (Tui Brewery)? Its requests are refused (code 205)`);
    expect(await api.createTransaction(order('tui-2a'))).toMatchObject({ code: 0 });
    expect(
      (await admin.post(`/console/api-users/${user_id}/status`, { status: 'disabled', confirmed: 'yes' })).location,
    ).toBe(`/console/organisations/${id}?notice=saved`);
    expect(await api.createTransaction(order('tui-3'))).toMatchObject({ code: 205 });
    await admin.get(`/console/organisations/${id}`);
    await admin.post(`/console/api-users/${user_id}/status`, { status: 'active' });
    expect(await api.createTransaction(order('tui-3'))).toMatchObject({ code: 0 });
    // The whole organisation disabled in one step: its API users (205) and its console users
    // (signed out, refused at sign-in); enabled again, both come back.
    const invited = await admin.post(`/console/organisations/${id}/invite`, {
      email: 'brewer@tui.example',
      role: 'staff',
    });
    const brewer = new ConsoleClient(gw.url);
    const brewerLink = new URL(linkOn(invited.body)!).pathname;
    await brewer.get(brewerLink);
    await brewer.post(brewerLink, { password: PASSWORD, confirm: PASSWORD });
    expect((await brewer.signIn('brewer@tui.example', PASSWORD)).location).toBe('/console');
    await admin.get(`/console/organisations/${id}`);
    // The first post asks (naming the organisation and what stops); nothing changes until it is confirmed.
    const asked = await admin.post(`/console/organisations/${id}/status`, { status: 'disabled' });
    expect(asked.status).toBe(200);
    expect(asked.body).toContain('id="confirm"');
    expect(asked.body).toContain(`(${id})? Every API user of the organisation is refused (code 205)`);
    expect(await api.createTransaction(order('tui-4a'))).toMatchObject({ code: 0 });
    expect((await brewer.get('/console')).status).toBe(200);
    expect(
      (await admin.post(`/console/organisations/${id}/status`, { status: 'disabled', confirmed: 'yes' })).location,
    ).toBe(`/console/organisations/${id}?notice=saved`);
    expect(await api.createTransaction(order('tui-4'))).toMatchObject({ code: 205 });
    expect((await brewer.get('/console')).location).toBe('/console/sign-in');
    expect((await brewer.signIn('brewer@tui.example', PASSWORD)).location).not.toBe('/console');
    const disabled = (
      await gw.store.console.listAudit({ organisation_id: id, actions: ['organisation.disable'], limit: 1 })
    )[0];
    expect(JSON.parse(disabled.before!)).toEqual({
      api_users: { [user_id]: 'active' },
      console_users: { 'brewer@tui.example': 'active' },
    });
    expect(JSON.parse(disabled.after!)).toEqual({
      api_users: { [user_id]: 'disabled' },
      console_users: { 'brewer@tui.example': 'disabled' },
    });
    expect((await admin.get(`/console/organisations/${id}`)).body).toContain('Enable the organisation');
    const listRow = (body: string) =>
      /<tr><td[^>]*><a href="\/console\/organisations\/(\d+)">\d+<\/a><\/td><td[^>]*>Tui Brewery<\/td><td[^>]*>([^<]+)<\/td>/.exec(
        body,
      )?.[2];
    expect(listRow((await admin.get('/console/organisations')).body)).toBe('disabled');
    // Support may not; another organisation's owner is not told it exists.
    const support = (await consoleUser(gw, 'operator', 'support')).client;
    await support.get(`/console/organisations/${id}`);
    expect((await support.post(`/console/organisations/${id}/status`, { status: 'active' })).status).toBe(403);
    expect((await support.post(`/console/organisations/${id}/status`, { status: 'disabled' })).status).toBe(403);
    expect(await api.createTransaction(order('tui-4'))).toMatchObject({ code: 205 });
    await admin.post(`/console/organisations/${id}/status`, { status: 'active' });
    expect(await api.createTransaction(order('tui-4'))).toMatchObject({ code: 0 });
    expect(listRow((await admin.get('/console/organisations')).body)).toBe('active');
    expect((await brewer.signIn('brewer@tui.example', PASSWORD)).location).toBe('/console');
    // The wallet disabled on its own: creates refused (301), wallet detail too; its orders still
    // answer queries; another wallet of the organisation is not affected; enabled again, 0.
    const first = wallets.find((w) => w.currency === 'NZD')!;
    const other = new GatewayClient({
      baseUrl: gw.url,
      userId: user_id,
      walletId: first.wallet_id,
      apiKey: first.api_key,
    });
    await admin.get(`/console/wallets/${aud.wallet_id}`);
    const askedWallet = await admin.post(`/console/wallets/${aud.wallet_id}/status`, { status: 'disabled' });
    expect(askedWallet.body).toContain(`Disable wallet ${aud.wallet_id} (Tui AUD)?`);
    expect((await gw.store.accounts.findWallet(aud.wallet_id))!.wallet_status).toBe('active');
    expect((await support.post(`/console/wallets/${aud.wallet_id}/status`, { status: 'disabled' })).status).toBe(403);
    expect(
      (await admin.post(`/console/wallets/${aud.wallet_id}/status`, { status: 'disabled', confirmed: 'yes' })).location,
    ).toBe(`/console/wallets/${aud.wallet_id}?notice=saved`);
    expect(await api.createTransaction(order('tui-5'))).toMatchObject({ code: 301 });
    expect(await api.walletMethods()).toMatchObject({ code: 301 });
    expect(await api.query('tui-4')).toMatchObject({ code: 0, status: 'pending' });
    expect(await other.createTransaction(order('tui-6'))).toMatchObject({ code: 0 });
    expect((await admin.get(`/console/wallets/${aud.wallet_id}`)).body).toContain('Enable this wallet');
    const walletEntry = (
      await gw.store.console.listAudit({ organisation_id: id, actions: ['wallet.disable'], limit: 1 })
    )[0];
    expect([JSON.parse(walletEntry.before!), JSON.parse(walletEntry.after!)]).toEqual([
      { wallet_status: 'active' },
      { wallet_status: 'disabled' },
    ]);
    expect((await support.post(`/console/wallets/${aud.wallet_id}/status`, { status: 'active' })).status).toBe(403);
    await admin.post(`/console/wallets/${aud.wallet_id}/status`, { status: 'active' });
    expect(await api.createTransaction(order('tui-5'))).toMatchObject({ code: 0 });
    // A wallet without any method is refused with a message, and nothing changes.
    const none = await admin.post(`/console/wallets/${aud.wallet_id}/settings`, { name: 'Tui AUD' });
    expect(none.status).toBe(409);
    expect((await gw.store.accounts.findWallet(aud.wallet_id))!.payment_methods).toBe('alipay');
  });

  it('a refused wallet or invitation form comes back with what was typed, and why', async () => {
    await admin.get(`/console/organisations/${other.organisation_id}`);
    const noMethods = await admin.post(`/console/organisations/${other.organisation_id}/wallets`, {
      user_id: other.user_id,
      currency: 'JPY',
      name: 'Kauri JPY',
    });
    expect(noMethods.status).toBe(400);
    expect(noMethods.body).toContain('a wallet needs at least one payment method');
    const form = noMethods.body.slice(noMethods.body.indexOf('id="add-wallet"'));
    expect(form).toContain('value="Kauri JPY"');
    expect(form).toContain('<option value="JPY" selected>JPY</option>');
    expect(form).toContain(`<option value="${other.user_id}" selected>`);
    expect(form).not.toContain(' checked');
    expect(
      (await gw.store.accounts.listOrganisationWallets(other.organisation_id)).map((w) => w.wallet_name),
    ).not.toContain('Kauri JPY');
    const badEmail = await admin.post(`/console/organisations/${other.organisation_id}/invite`, {
      email: 'kauri at example',
      role: 'staff',
    });
    expect(badEmail.status).toBe(400);
    const invite = badEmail.body.slice(badEmail.body.indexOf('id="invite"'));
    expect(invite).toContain('value="kauri at example"');
    expect(invite).toContain('<option value="staff" selected>');
    const operator = await admin.post('/console/operators/invite', { email: 'nobody', role: 'support' });
    expect(operator.status).toBe(400);
    expect(operator.body.slice(operator.body.indexOf('id="invite"'))).toContain('value="nobody"');
  });

  it('invites a merchant owner with a one-time link; the owner manages their own console users only', async () => {
    await admin.get(`/console/organisations/${other.organisation_id}`);
    const invited = await admin.post(`/console/organisations/${other.organisation_id}/invite`, {
      email: 'owner@elsewhere.example',
      role: 'owner',
    });
    const link = linkOn(invited.body)!;
    expect(link).toMatch(/\/console\/welcome\//);
    const owner = new ConsoleClient(gw.url);
    await owner.get(new URL(link).pathname);
    expect((await owner.post(new URL(link).pathname, { password: PASSWORD, confirm: PASSWORD })).status).toBe(303);
    expect((await owner.signIn('owner@elsewhere.example', PASSWORD)).location).toBe('/console');
    const mine = await owner.get(`/console/organisations/${other.organisation_id}`);
    expect(mine.status).toBe(200);
    expect(mine.body).not.toContain('id="add-wallet"');
    const staffInvite = await owner.post(`/console/organisations/${other.organisation_id}/invite`, {
      email: 'staff@elsewhere.example',
      role: 'staff',
    });
    expect(linkOn(staffInvite.body)).toBeTruthy();
    // Not an operator's role, not another organisation, not configuration.
    expect(
      (
        await owner.post(`/console/organisations/${other.organisation_id}/invite`, {
          email: 'boss@elsewhere.example',
          role: 'admin',
        })
      ).status,
    ).toBe(400);
    expect(
      (
        await owner.post(`/console/organisations/${gw.merchant.organisation_id}/invite`, {
          email: 'spy@elsewhere.example',
          role: 'owner',
        })
      ).status,
    ).toBe(404);
    expect(await gw.store.console.findUserByEmail('spy@elsewhere.example')).toBeUndefined();
    expect((await owner.get('/console/organisations')).status).toBe(404);
    expect((await owner.get(`/console/organisations/${gw.merchant.organisation_id}`)).status).toBe(404);
    expect((await owner.post(`/console/api-users/${other.user_id}/status`, { status: 'disabled' })).status).toBe(403);
    expect(
      (await owner.post(`/console/wallets/${other.wallet_id}/settings`, { name: 'x', methods: 'alipay' })).status,
    ).toBe(403);
    expect((await owner.post('/console/rates', { from: 'NZD', to: 'CNY', rate: '9' })).status).toBe(403);
    expect((await owner.get('/console/outbox')).status).toBe(403);
    // The owner disables the staff user, whose session then ends.
    const staffLink = linkOn(staffInvite.body)!;
    const staff = new ConsoleClient(gw.url);
    await staff.get(new URL(staffLink).pathname);
    await staff.post(new URL(staffLink).pathname, { password: PASSWORD, confirm: PASSWORD });
    await staff.signIn('staff@elsewhere.example', PASSWORD);
    expect((await staff.get('/console')).status).toBe(200);
    const staffId = (await gw.store.console.findUserByEmail('staff@elsewhere.example'))!.console_user_id;
    await owner.get(`/console/organisations/${other.organisation_id}`);
    const ask = await owner.post(`/console/console-users/${staffId}/status`, { status: 'disabled' });
    expect(ask.body).toContain('Disable staff@elsewhere.example? They are signed out at once');
    expect((await staff.get('/console')).status).toBe(200);
    // Nobody is asked about disabling themselves: refused at the first step.
    const ownId = (await gw.store.console.findUserByEmail('owner@elsewhere.example'))!.console_user_id;
    const self = await owner.post(`/console/console-users/${ownId}/status`, { status: 'disabled' });
    expect([self.status, self.body.includes('you cannot disable yourself')]).toEqual([400, true]);
    expect(
      (await owner.post(`/console/console-users/${staffId}/status`, { status: 'disabled', confirmed: 'yes' })).status,
    ).toBe(200);
    expect((await staff.get('/console')).location).toBe('/console/sign-in');
    // A fresh password link for them (shown once), and the audit says who did what.
    const reset = await owner.post(`/console/console-users/${staffId}/password-link`, {});
    expect(linkOn(reset.body)).toMatch(/\/console\/welcome\//);
    const actions = (await gw.store.console.listAudit({ organisation_id: other.organisation_id, limit: 20 })).map(
      (e) => e.action,
    );
    expect(actions).toEqual(expect.arrayContaining(['user.invite', 'user.disable', 'user.password_link']));
  });

  it('support may look at rates and the outbox but not change them; rates keep their history', async () => {
    const support = (await consoleUser(gw, 'operator', 'support')).client;
    expect((await support.get('/console/rates')).status).toBe(200);
    expect((await support.post('/console/rates', { from: 'NZD', to: 'CNY', rate: '4.5' })).status).toBe(403);
    expect((await support.post('/console/organisations', { name: 'Nope', currency: 'NZD' })).status).toBe(403);
    await admin.get('/console/rates');
    expect((await admin.post('/console/rates', { from: 'NZD', to: 'CNY', rate: '4.5' })).location).toBe(
      '/console/rates?notice=saved',
    );
    await admin.post('/console/rates', { from: 'nzd', to: 'cny', rate: '4.6443' });
    const bad = await admin.post('/console/rates', { from: 'NZD', to: 'CNY', rate: '-1' });
    expect(bad.status).toBe(400);
    expect(bad.body).toContain('Not saved: the rate must be a positive decimal');
    // The form keeps what was typed.
    expect(bad.body).toContain('name="rate" inputmode="decimal" required value="-1"');
    expect(await gw.store.accounts.findRate('NZD', 'CNY')).toBe(4_644_300);
    // Only a wallet's currency to CNY is a rate the gateway uses.
    for (const [from, to] of [
      ['CNY', 'CNY'],
      ['NZD', 'AUD'],
    ]) {
      const refused = await admin.post('/console/rates', { from, to, rate: '1' });
      expect(refused.status).toBe(400);
      expect(refused.body).toContain(`not ${from} -&gt; ${to}`);
    }
    // Far from the last rate: asked again before anything changes, then set when confirmed.
    const far = await admin.post('/console/rates', { from: 'NZD', to: 'CNY', rate: '5.6' });
    expect(far.status).toBe(200);
    expect(far.body).toContain('5.6 is 20.6 % from the last NZD → CNY rate (4.6443)');
    expect(await gw.store.accounts.findRate('NZD', 'CNY')).toBe(4_644_300);
    expect(
      (await admin.post('/console/rates', { from: 'NZD', to: 'CNY', rate: '5.6', confirmed: 'yes' })).location,
    ).toBe('/console/rates?notice=saved');
    expect(await gw.store.accounts.findRate('NZD', 'CNY')).toBe(5_600_000);
    await admin.post('/console/rates', { from: 'NZD', to: 'CNY', rate: '4.6443', confirmed: 'yes' });
    expect(await gw.store.accounts.findRate('NZD', 'CNY')).toBe(4_644_300);
    const history = (await support.get('/console/rates')).body;
    const rows = [
      ...history.matchAll(
        /<tr><td[^>]*>[^<]+<\/td><td[^>]*>NZD\/CNY<\/td><td[^>]*class="num">([^<]+)<\/td><td[^>]*class="num">([^<]+)<\/td>/g,
      ),
    ].map((m) => [m[1], m[2]]);
    // Newest first: back to 4.6443, 5.6 confirmed, 4.5 -> 4.6443, and before it the change to 4.5.
    expect(rows[0]).toEqual(['5.6', '4.6443']);
    expect(rows[1]).toEqual(['4.6443', '5.6']);
    expect(rows[2]).toEqual(['4.5', '4.6443']);
    expect(rows[3][1]).toBe('4.5');
    const outbox = await support.get('/console/outbox');
    expect(outbox.status).toBe(200);
    expect(outbox.body).toMatch(/id="backlog">\d+</);
  });

  it('the outbox page lists the refunds a provider has not answered for over a minute, with their order', async () => {
    const paid = await gw.create({ merchant_reference: uniqueRef('waiting-refund'), amount: '30.00' });
    await gw.pay(paid.order_id, 'paid');
    const reserve = (refund_id: string, created_at: number) =>
      gw.store.refunds.reserve(
        {
          refund_id,
          order_id: paid.order_id,
          refund_amount: 500,
          reference: refund_id,
          dedupe_key: refund_id,
          created_at,
        },
        { refund_fee: 'none' },
      );
    expect(await reserve('Rwaitingforlong01', Date.now() - 5 * 60_000)).toEqual({ ok: true });
    expect(await reserve('Rjustasked000001', Date.now())).toEqual({ ok: true });
    // Asked about a moment ago by the recovery (its updated_at is now): still listed, by how long it has waited.
    await gw.store.refunds.touch('Rwaitingforlong01', Date.now());
    const support = (await consoleUser(gw, 'operator', 'support')).client;
    const section = (body: string) => body.slice(body.indexOf('id="refunds-waiting"'));
    const page = section((await support.get('/console/outbox')).body);
    expect(page).toContain('Rwaitingforlong01');
    expect(page).toContain(`href="/console/transactions/${paid.order_id}"`);
    expect(page).toContain('NZ$5.00');
    // Pending, but in its first minute: counted, not listed.
    expect(page).not.toContain('Rjustasked000001');
    expect(page).toMatch(/\b(\d+) refunds are pending with their provider/);
    expect(Number(/\b(\d+) refunds are pending/.exec(page)![1])).toBe(await gw.store.refunds.countPending());
    // Merchants' users do not see the operators' page.
    const owner = (await consoleUser(gw, 'merchant', 'owner', gw.merchant.organisation_id)).client;
    expect((await owner.get('/console/outbox')).status).toBe(403);
  });

  it("an admin turns off a user's two-factor and invites operators; support cannot", async () => {
    const support = await consoleUser(gw, 'operator', 'support');
    await gw.store.console.setTotp(support.console_user_id, '{"sealed":"stand-in"}', Date.now());
    await support.client.get('/console/operators');
    expect(
      (await support.client.post('/console/operators/invite', { email: 'new-op@example.com', role: 'support' })).status,
    ).toBe(403);
    const page = await admin.get('/console/operators');
    expect(page.body).toContain(support.email);
    // Asked first, naming whose; nothing changes until confirmed.
    const asked = await admin.post(`/console/console-users/${support.console_user_id}/reset-two-factor`, {});
    expect(asked.body).toContain(`Turn off two-factor sign-in for ${support.email}?`);
    expect(asked.body).toContain('id="confirm"');
    expect((await gw.store.console.findUser(support.console_user_id))!.totp_sealed).not.toBeNull();
    expect(
      (await admin.post(`/console/console-users/${support.console_user_id}/reset-two-factor`, { confirmed: 'yes' }))
        .status,
    ).toBe(200);
    expect((await gw.store.console.findUser(support.console_user_id))!.totp_sealed).toBeNull();
    const invited = await admin.post('/console/operators/invite', { email: 'new-op@example.com', role: 'support' });
    expect(linkOn(invited.body)).toMatch(/\/console\/welcome\//);
  });

  it('re-saving a WeChat Pay account from the form changes what was given and keeps the rest: JSAPI, its AppSecret, the keys', async () => {
    const fake = await FakeWechatPay.start();
    try {
      const path = `/console/wallets/${other.wallet_id}`;
      // Set with JSAPI on, as `gateway channel set --jsapi on --appsecret-file` does.
      await useAccount(gw, wechatpayAccount(other.wallet_id, fake, { jsapi: true }));
      const stored = async () => {
        const s = await gw.store.accounts.findChannelAccount(other.wallet_id, 'wechat');
        return openAccount(TEST_MASTER_KEY, s!);
      };
      expect((await stored()).config.jsapi).toBe('on');
      await admin.get(path);
      // Everything the form asks for, typed again, and a new mcc: JSAPI and its AppSecret stay.
      const saved = await admin.post(`${path}/channels`, {
        payment_method: 'wechat',
        provider: 'wechatpay',
        currency_mode: 'domestic',
        endpoint: fake.url,
        mchid: fake.mchid,
        appid: fake.appid,
        serial_no: fake.merchantSerial,
        platform_public_key: fake.platform.publicKey,
        platform_public_key_id: fake.platformKeyId,
        mcc: '5812',
        private_key: fake.merchant.privateKey,
        apiv3_key: fake.apiv3Key,
      });
      expect(saved.location).toBe(`${path}?notice=saved`);
      let account = await stored();
      expect(account.config).toMatchObject({ mcc: '5812', jsapi: 'on', oauth_endpoint: fake.url });
      expect(account.secrets).toMatchObject({
        appsecret: fake.appsecret,
        private_key: expect.stringContaining('PRIVATE KEY'),
      });
      // Only the field to change: the rest, secrets included, is kept.
      expect(
        (await admin.post(`${path}/channels`, { payment_method: 'wechat', provider: 'wechatpay', mcc: '7011' }))
          .location,
      ).toBe(`${path}?notice=saved`);
      account = await stored();
      expect(account.config).toMatchObject({ mcc: '7011', jsapi: 'on', mchid: fake.mchid });
      expect(account.secrets).toMatchObject({ appsecret: fake.appsecret, apiv3_key: fake.apiv3Key });
      // JSAPI turned off from the form, on purpose.
      await admin.post(`${path}/channels`, { payment_method: 'wechat', provider: 'wechatpay', jsapi: 'off' });
      expect((await stored()).config.jsapi).toBeUndefined();
    } finally {
      await fake.close();
      await gw.store.accounts.removeChannelAccount(other.wallet_id, 'wechat');
    }
  });

  it('an admin sets a provider account from the form: checked, secrets sealed and shown as fingerprints only; removed again', async () => {
    const alipay = await FakeAlipay.start();
    try {
      const path = `/console/wallets/${other.wallet_id}`;
      await admin.get(path);
      const bare = (pem: string) => pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '');
      const form = {
        payment_method: 'alipay',
        provider: 'alipay',
        currency_mode: 'domestic',
        endpoint: alipay.endpoint,
        app_id: alipay.app_id,
        alipay_public_key: bare(alipay.alipay.publicKey),
        private_key: bare(alipay.app.privateKey),
      };
      const notAKey = await admin.post(`${path}/channels`, {
        ...form,
        private_key: 'not a key',
        alipay_public_key: 'not a key either',
      });
      // The form again, open, with what was typed but the secrets, and why.
      expect(notAKey.status).toBe(400);
      expect(notAKey.body).toContain('<details class="provider-form" id="channel-form-alipay" open>');
      expect(notAKey.body).toMatch(/Not saved: [^<]*not an RSA[^<]*paste them again/);
      expect(notAKey.body).toContain(`value="${alipay.app_id}"`);
      expect(notAKey.body).toContain('>not a key either</textarea>');
      expect(notAKey.body).not.toContain('>not a key</textarea>');
      expect(notAKey.body).toContain('<option value="alipay" selected>');
      expect(await gw.store.accounts.findChannelAccount(other.wallet_id, 'alipay')).toBeUndefined();
      expect((await admin.post(`${path}/channels`, form)).location).toBe(`${path}?notice=saved`);
      const stored = (await gw.store.accounts.findChannelAccount(other.wallet_id, 'alipay'))!;
      expect(stored.provider).toBe('alipay');
      expect(stored.sealed_secrets).not.toContain(bare(alipay.app.privateKey).slice(0, 40));
      const page = (await admin.get(path)).body;
      expect(page).toContain(alipay.app_id);
      expect(page).toMatch(/sealed \(sha256 [0-9a-f]{16}\)/);
      expect(page).not.toContain(bare(alipay.app.privateKey).slice(0, 40));
      const entry = (await gw.store.console.listAudit({ actions: ['channel.set'], limit: 1 }))[0];
      expect(entry.after).not.toContain(bare(alipay.app.privateKey).slice(0, 40));
      // Owners may not configure.
      const owner = await consoleUser(gw, 'merchant', 'owner', other.organisation_id);
      await owner.client.get(path);
      expect((await owner.client.post(`${path}/channels/test`, { payment_method: 'alipay' })).status).toBe(403);
      expect((await owner.client.post(`${path}/channels/remove`, { payment_method: 'alipay' })).status).toBe(403);
      // The signed test call of `gateway channel test`, from the page: passed, then failed (Alipay answering 500).
      expect(page).toContain(`action="${path}/channels/test"`);
      const passed = await admin.post(`${path}/channels/test`, { payment_method: 'alipay' });
      expect([passed.status, passed.body.includes('Test of the alipay account passed')]).toEqual([200, true]);
      alipay.fail('alipay.trade.query', 'http-500');
      const failed = await admin.post(`${path}/channels/test`, { payment_method: 'alipay' });
      expect([failed.status, failed.body.includes('Test of the alipay account failed')]).toEqual([502, true]);
      // A connector that throws (or secrets that no longer open) is a failed test, said so: not a 500.
      const connector = gw.ctx.connectors.alipay;
      const probe = connector.probe.bind(connector);
      connector.probe = async () => {
        throw new Error('the sealed secrets do not open with this master key');
      };
      try {
        const thrown = await admin.post(`${path}/channels/test`, { payment_method: 'alipay' });
        expect([thrown.status, thrown.body.includes('failed: the sealed secrets do not open')]).toEqual([502, true]);
      } finally {
        connector.probe = probe;
      }
      expect(
        (await gw.store.console.listAudit({ actions: ['channel.test'], limit: 5 })).map((e) => JSON.parse(e.after!).ok),
      ).toEqual([false, false, true]);
      // A removal's confirmation is for an account the wallet has.
      expect((await admin.post(`${path}/channels/remove`, { payment_method: 'wechat' })).status).toBe(404);
      // Removing asks first, naming what stops; then it is gone.
      const ask = await admin.post(`${path}/channels/remove`, { payment_method: 'alipay' });
      expect(ask.body).toContain(`Remove the provider account of wallet ${other.wallet_id} for alipay?`);
      expect(await gw.store.accounts.findChannelAccount(other.wallet_id, 'alipay')).toBeDefined();
      expect(
        (await admin.post(`${path}/channels/remove`, { payment_method: 'alipay', confirmed: 'yes' })).location,
      ).toBe(`${path}?notice=saved`);
      expect(await gw.store.accounts.findChannelAccount(other.wallet_id, 'alipay')).toBeUndefined();
    } finally {
      await alipay.close();
    }
  });

  it('an admin sets an Alipay account in certificate mode from the form (the three certificates pasted); its signed test passes', async () => {
    const alipay = await FakeAlipay.start({ certMode: true });
    try {
      const path = `/console/wallets/${other.wallet_id}`;
      const page = (await admin.get(path)).body;
      for (const name of ['app_cert', 'alipay_cert', 'alipay_root_cert'])
        expect(page).toContain(`<textarea id="ch-alipay-${name}" name="${name}"`);
      const f = (name: string) => CERT_MODE_FIXTURES.file(name);
      const form = {
        payment_method: 'alipay',
        provider: 'alipay',
        currency_mode: 'domestic',
        endpoint: alipay.endpoint,
        app_id: alipay.app_id,
        app_cert: f('app.crt'),
        alipay_cert: f('alipay.crt'),
        alipay_root_cert: f('root.crt'),
        private_key: f('app.key'),
      };
      // Alipay's certificate where the app's belongs: refused, said why.
      const swapped = await admin.post(`${path}/channels`, { ...form, app_cert: f('alipay.crt') });
      expect([swapped.status, /app_cert is not the certificate of private_key/.test(swapped.body)]).toEqual([
        400,
        true,
      ]);
      expect((await admin.post(`${path}/channels`, form)).location).toBe(`${path}?notice=saved`);
      const passed = await admin.post(`${path}/channels/test`, { payment_method: 'alipay' });
      expect([passed.status, passed.body.includes('Test of the alipay account passed')]).toEqual([200, true]);
      expect(alipay.refused).toEqual([]);
      expect(
        (await admin.post(`${path}/channels/remove`, { payment_method: 'alipay', confirmed: 'yes' })).location,
      ).toBe(`${path}?notice=saved`);
    } finally {
      await alipay.close();
    }
  });
});
