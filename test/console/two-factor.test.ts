// Two-factor sign-in (TOTP) and the user's sessions, over HTTP on both engines: enrolment with a
// code from the secret shown, the secret sealed at rest, the code step after the password (a code
// works once; wrong codes lock the account like wrong passwords), turning it off with the password,
// and ending one's other sessions.
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleClient, PASSWORD, consoleUser } from '../support/console-client.js';
import { ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';

const codeOf = (secret: string, at = Date.now()) =>
  new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' }).generate({ timestamp: at });

describe.each(ENGINES)('two-factor sign-in on %s', (engine) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(engine);
  });
  afterAll(async () => gw?.close());

  /** Turns two-factor on for the signed-in client; returns the secret, when its confirming code was made, and the recovery codes shown. */
  async function enrol(client: ConsoleClient): Promise<{ secret: string; at: number; codes: string[] }> {
    const form = await client.get('/console/account/two-factor');
    expect(form.status).toBe(200);
    expect(form.body).toMatch(/<img id="totp-qr" src="data:image\/png;base64,/);
    const secret = /id="totp-secret">([A-Z2-7 ]+)</.exec(form.body)![1].replace(/ /g, '');
    const pending = /name="pending" value="([^"]+)"/.exec(form.body)![1];
    const wrong = await client.post('/console/account/two-factor', {
      pending,
      code: codeOf(secret) === '000000' ? '111111' : '000000',
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toContain('That code is not right');
    // The same secret is offered again after a wrong code.
    expect(wrong.body).toContain(secret.slice(0, 4));
    const at = Date.now();
    const ok = await client.post('/console/account/two-factor', { pending, code: codeOf(secret, at) });
    expect(ok.status).toBe(200);
    const codes = [...ok.body.matchAll(/<li><code>([A-Z2-9]{5}-[A-Z2-9]{5})<\/code><\/li>/g)].map((m) => m[1]);
    expect(codes).toHaveLength(10);
    return { secret, at, codes };
  }

  it('enrols with a code from the secret shown, keeps the secret sealed, then asks for a code after the password', async () => {
    const { client, email, console_user_id } = await consoleUser(gw, 'merchant', 'owner', gw.merchant.organisation_id);
    expect((await client.get('/console/account')).body).toContain('Off: signing in asks only for your password.');
    const { secret, at } = await enrol(client);
    expect((await client.get('/console/account')).body).toContain('On: signing in asks for a code');
    const stored = await gw.store.console.findUser(console_user_id);
    expect(stored?.totp_sealed).toBeTruthy();
    expect(stored?.totp_sealed).not.toContain(secret);

    const browser = new ConsoleClient(gw.url);
    const afterPassword = await browser.signIn(email, PASSWORD);
    expect(afterPassword.location).toBe('/console/sign-in/code');
    // The password alone opens nothing.
    expect((await browser.get('/console')).location).toBe('/console/sign-in');
    expect((await browser.get('/console/sign-in/code')).body).toContain('autocomplete="one-time-code"');
    // The code the enrolment used is used up; the next step's code works once.
    expect((await browser.post('/console/sign-in/code', { code: codeOf(secret, at) })).status).toBe(401);
    const next = codeOf(secret, at + 30_000);
    expect((await browser.post('/console/sign-in/code', { code: next })).location).toBe('/console');
    expect((await browser.get('/console')).status).toBe(200);
    const replay = new ConsoleClient(gw.url);
    await replay.signIn(email, PASSWORD);
    expect((await replay.post('/console/sign-in/code', { code: next })).status).toBe(401);
    const actions = (await gw.store.console.listAudit({ organisation_id: gw.merchant.organisation_id, limit: 20 })).map(
      (e) => e.action,
    );
    expect(actions).toEqual(expect.arrayContaining(['user.totp_enable', 'console.sign_in_code_failed']));
  });

  it('wrong codes lock the account as wrong passwords do; a forged pending cookie gets nothing', async () => {
    const { client, email } = await consoleUser(gw, 'operator', 'support');
    const { secret } = await enrol(client);
    const browser = new ConsoleClient(gw.url);
    await browser.signIn(email, PASSWORD);
    const right = codeOf(secret, Date.now() + 30_000);
    const wrongCode = right === '123456' ? '654321' : '123456';
    for (let i = 0; i < 5; i++)
      expect((await browser.post('/console/sign-in/code', { code: wrongCode })).status).toBe(401);
    const locked = await browser.post('/console/sign-in/code', { code: right });
    expect(locked.status).toBe(429);
    expect(locked.body).toContain('Too many failed sign-ins');
    // The password again does not reset the count of wrong codes.
    const again = new ConsoleClient(gw.url);
    expect((await again.signIn(email, PASSWORD)).status).toBe(429);
    // A pending note made up by the browser is not signed: back to the password.
    const forger = new ConsoleClient(gw.url);
    await forger.get('/console/sign-in');
    const forged = await fetch(`${gw.url}/console/sign-in/code`, {
      redirect: 'manual',
      headers: { cookie: `gw_console_2fa=${encodeURIComponent(`cu_x.${Date.now() + 60_000}`)}` },
    });
    expect(forged.headers.get('location')).toBe('/console/sign-in');
  });

  it('turning two-factor off takes the password; sessions can be ended one by one', async () => {
    const { client, email } = await consoleUser(gw, 'operator', 'admin');
    await enrol(client);
    const wrong = await client.post('/console/account/two-factor/disable', { password: 'not the password at all' });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toContain('That password is not right.');
    expect((await client.post('/console/account/two-factor/disable', { password: PASSWORD })).location).toBe(
      '/console/account?notice=totp_off',
    );
    const phone = new ConsoleClient(gw.url);
    expect((await phone.signIn(email, PASSWORD)).location).toBe('/console');
    const page = (await client.get('/console/account')).body;
    const others = [...page.matchAll(/name="session" value="([0-9a-f]{64})"/g)].map((m) => m[1]);
    expect(others).toHaveLength(1);
    expect(page).toContain('this browser');
    // Another user's session cannot be ended from here.
    const stranger = await consoleUser(gw, 'operator', 'admin');
    await stranger.client.get('/console/account');
    await stranger.client.post('/console/account/sessions/end', { session: others[0] });
    expect((await phone.get('/console')).status).toBe(200);
    expect((await client.post('/console/account/sessions/end', { session: others[0] })).location).toBe(
      '/console/account?notice=ended',
    );
    expect((await phone.get('/console')).location).toBe('/console/sign-in');
    expect((await client.get('/console')).status).toBe(200);
  });

  it('a recovery code signs in once in place of a code; new codes replace the old; none are kept in the clear', async () => {
    const { client, email, console_user_id } = await consoleUser(gw, 'merchant', 'staff', gw.merchant.organisation_id);
    const { codes } = await enrol(client);
    expect((await client.get('/console/account')).body).toContain('Recovery codes left: 10.');
    const stored = await gw.store.console.countRecoveryCodes(console_user_id);
    expect(stored).toBe(10);

    const lost = new ConsoleClient(gw.url);
    await lost.signIn(email, PASSWORD);
    // Typed in lower case without the dash: the same code.
    const typed = codes[3].toLowerCase().replace('-', '');
    expect((await lost.post('/console/sign-in/code', { code: typed })).location).toBe('/console');
    const again = new ConsoleClient(gw.url);
    await again.signIn(email, PASSWORD);
    const used = await again.post('/console/sign-in/code', { code: codes[3] });
    expect(used.status).toBe(401);
    expect(used.body).toContain('<details id="use-recovery" open>');
    expect((await client.get('/console/account')).body).toContain('Recovery codes left: 9.');

    // New codes: the old ones stop working.
    const renewed = await client.post('/console/account/two-factor/recovery-codes', { password: PASSWORD });
    const fresh = [...renewed.body.matchAll(/<li><code>([A-Z2-9]{5}-[A-Z2-9]{5})<\/code><\/li>/g)].map((m) => m[1]);
    expect(fresh).toHaveLength(10);
    expect((await again.post('/console/sign-in/code', { code: codes[4] })).status).toBe(401);
    expect((await again.post('/console/sign-in/code', { code: fresh[0] })).location).toBe('/console');
    expect(
      (await client.post('/console/account/two-factor/recovery-codes', { password: 'not my password at all' })).status,
    ).toBe(400);
  });

  it('required of an organisation: its users without two-factor are taken to set it up and cannot turn it off', async () => {
    const org = await gw.newMerchant();
    const owner = await consoleUser(gw, 'merchant', 'owner', org.organisation_id);
    const staff = await consoleUser(gw, 'merchant', 'staff', org.organisation_id);
    const elsewhere = await consoleUser(gw, 'merchant', 'staff', gw.merchant.organisation_id);
    // Staff may not require it; another organisation's owner is not found.
    expect(
      (await staff.client.post(`/console/organisations/${org.organisation_id}/two-factor`, { required: 'on' })).status,
    ).toBe(403);
    await owner.client.get(`/console/organisations/${org.organisation_id}`);
    const set = await owner.client.post(`/console/organisations/${org.organisation_id}/two-factor`, { required: 'on' });
    expect(set.location).toBe(`/console/organisations/${org.organisation_id}?notice=saved`);
    // Nothing opens but the set-up; another organisation's users are not affected.
    expect((await staff.client.get('/console/transactions')).location).toBe('/console/account/two-factor?required=1');
    expect((await owner.client.get('/console')).location).toBe('/console/account/two-factor?required=1');
    expect((await elsewhere.client.get('/console/transactions')).status).toBe(200);
    const form = await staff.client.get('/console/account/two-factor?required=1');
    expect(form.body).toContain('Two-factor sign-in is required here');
    await enrol(staff.client);
    expect((await staff.client.get('/console/transactions')).status).toBe(200);
    const off = await staff.client.post('/console/account/two-factor/disable', { password: PASSWORD });
    expect(off.status).toBe(400);
    expect(off.body).toContain('it cannot be turned off');
    expect((await gw.store.console.findUser(staff.console_user_id))!.totp_sealed).toBeTruthy();
    const entries = await gw.store.console.listAudit({ actions: ['settings.two_factor'], limit: 5 });
    expect(entries[0].organisation_id).toBe(org.organisation_id);
  });
});

describe('two-factor without a master key', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway('sqlite', { masterKey: undefined });
  });
  afterAll(async () => gw?.close());

  it('says what is missing instead of keeping a secret unsealed', async () => {
    const { client } = await consoleUser(gw, 'operator', 'admin');
    const res = await client.get('/console/account/two-factor');
    expect(res.status).toBe(409);
    expect(res.body).toContain('GATEWAY_MASTER_KEY');
  });
});
