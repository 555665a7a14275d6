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

  /** Turns two-factor on for the signed-in client; returns the secret and when its confirming code was made. */
  async function enrol(client: ConsoleClient): Promise<{ secret: string; at: number }> {
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
    expect(ok.location).toBe('/console/account?notice=totp_on');
    return { secret, at };
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
