// What a session left open, an old link, or a burst of guesses must not be enough for: resetting
// one's own password or two-factor without the password, a set-password link used after a newer
// one (or after the user was disabled), parallel sign-ins past the throttle, a second factor
// replaced without turning the first off.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleClient, PASSWORD, consoleUser } from '../support/console-client.js';
import { ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';
import { ENROLMENT_TTL_MS, enrolment, pendingSecret } from '../../src/usecases/console-totp.js';

const linkOn = (body: string) => /id="one-time-link">[\s\S]*?<code>([^<]+)<\/code>/.exec(body)?.[1];

describe.each(ENGINES)('console account takeover guards on %s', (engine) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(engine);
  });
  afterAll(async () => {
    await gw?.close();
  });

  it("nobody resets their own password or two-factor from the users' list (the account page asks for the password)", async () => {
    const organisation_id = (await gw.store.accounts.findUser(gw.merchant.user_id))!.organisation_id;
    const owner = await consoleUser(gw, 'merchant', 'owner', organisation_id);
    await gw.store.console.setTotp(owner.console_user_id, '{"sealed":"stand-in"}', Date.now());
    await owner.client.get(`/console/organisations/${organisation_id}`);
    for (const action of ['password-link', 'reset-two-factor']) {
      const r = await owner.client.post(`/console/console-users/${owner.console_user_id}/${action}`, {});
      expect([action, r.status]).toEqual([action, 400]);
      expect(r.body).toContain('changed on your account page');
      expect(linkOn(r.body)).toBeUndefined();
    }
    expect((await gw.store.console.findUser(owner.console_user_id))!.totp_sealed).not.toBeNull();
    const actions = (await gw.store.console.listAudit({ organisation_id, limit: 50 }))
      .filter((e) => e.object === owner.email)
      .map((e) => e.action);
    expect(actions).not.toContain('user.totp_reset');
    expect(actions).not.toContain('user.password_link');
  });

  it('only the newest set-password link works; using one voids the rest; disabling a user voids theirs for good', async () => {
    const { client: admin } = await consoleUser(gw, 'operator', 'admin');
    const target = await consoleUser(gw, 'operator', 'support');
    await admin.get('/console/operators');
    const first = new URL(
      linkOn((await admin.post(`/console/console-users/${target.console_user_id}/password-link`, {})).body)!,
    ).pathname;
    const second = new URL(
      linkOn((await admin.post(`/console/console-users/${target.console_user_id}/password-link`, {})).body)!,
    ).pathname;
    const visitor = new ConsoleClient(gw.url);
    expect((await visitor.get(first)).body).toContain('This link is not valid any more');
    expect((await visitor.get(second)).status).toBe(200);
    expect(
      (await visitor.post(second, { password: 'a brand new pass phrase', confirm: 'a brand new pass phrase' })).status,
    ).toBe(303);
    expect((await visitor.get(second)).body).toContain('This link is not valid any more');

    // A link made, the user disabled, then enabled again: the link stays void.
    const third = new URL(
      linkOn((await admin.post(`/console/console-users/${target.console_user_id}/password-link`, {})).body)!,
    ).pathname;
    expect(
      (
        await admin.post(`/console/console-users/${target.console_user_id}/status`, {
          status: 'disabled',
          confirmed: 'yes',
        })
      ).status,
    ).toBe(200);
    expect(
      (await admin.post(`/console/console-users/${target.console_user_id}/status`, { status: 'active' })).status,
    ).toBe(200);
    const late = new ConsoleClient(gw.url);
    expect((await late.get(third)).body).toContain('This link is not valid any more');
    expect(
      (await late.post(third, { password: 'someone else entirely', confirm: 'someone else entirely' })).status,
    ).not.toBe(303);
    expect((await new ConsoleClient(gw.url).signIn(target.email, 'a brand new pass phrase')).location).toBe('/console');

    // The users' list's button, sent twice (a reload of the result): the second makes no link,
    // so the link just shown stays good.
    const list = await admin.get('/console/operators');
    const shown_at = new RegExp(
      `console-users/${target.console_user_id}/password-link"><input type="hidden" name="_csrf" value="[^"]+"><input type="hidden" name="shown_at" value="(\\d+)"`,
    ).exec(list.body)![1];
    const made = await admin.post(`/console/console-users/${target.console_user_id}/password-link`, { shown_at });
    const link = new URL(linkOn(made.body)!).pathname;
    const twice = await admin.post(`/console/console-users/${target.console_user_id}/password-link`, { shown_at });
    expect(twice.status).toBe(400);
    expect(twice.body).toContain('No new link made');
    expect(linkOn(twice.body)).toBeUndefined();
    expect((await new ConsoleClient(gw.url).get(link)).status).toBe(200);
  });

  it('two-factor that is on is not replaced by confirming another set-up form; a set-up form expires', async () => {
    const user = await consoleUser(gw, 'operator', 'support');
    const ctx = gw.ctx;
    const me = (await gw.store.console.findUser(user.console_user_id))!;
    const form = enrolment(ctx, me, 'JBSWY3DPEHPK3PXP');
    expect(pendingSecret(ctx, me, form.pending)).toBe('JBSWY3DPEHPK3PXP');
    // Thirty minutes on, the same form opens to nothing.
    const later = { ...ctx, now: () => Date.now() + ENROLMENT_TTL_MS + 1000 };
    expect(pendingSecret(later, me, form.pending)).toBeUndefined();

    await gw.store.console.setTotp(user.console_user_id, '{"sealed":"stand-in"}', Date.now());
    await user.client.get('/console/account');
    const r = await user.client.post('/console/account/two-factor', { pending: form.pending, code: '000000' });
    expect(r.status).toBe(400);
    expect(r.body).toContain('Two-factor sign-in is already on');
    expect((await gw.store.console.findUser(user.console_user_id))!.totp_sealed).toBe('{"sealed":"stand-in"}');
  });

  it("without a master key, the account page says two-factor cannot be turned on, and a wallet's page that provider accounts cannot be set, instead of offering them", async () => {
    const bare = await startTestGateway(engine, { masterKey: undefined });
    try {
      const { client } = await consoleUser(bare, 'operator', 'support');
      const account = await client.get('/console/account');
      expect(account.body).not.toContain('id="enrol"');
      expect(account.body).toContain('needs the gateway');
      const { client: admin } = await consoleUser(bare, 'operator', 'admin');
      const wallet = await admin.get(`/console/wallets/${bare.merchant.wallet_id}`);
      expect(wallet.body).toContain('id="channel-form-off"');
      expect(wallet.body).not.toContain('id="channel-form"');
    } finally {
      await bare.close();
    }
    const { client } = await consoleUser(gw, 'operator', 'support');
    expect((await client.get('/console/account')).body).toContain('id="enrol"');
  });

  // Last: it counts a dozen failures against this machine's address.
  it('a burst of parallel wrong passwords gets five tries, not one per request: the rest find the account locked', async () => {
    const { email } = await consoleUser(gw, 'operator', 'support');
    const answers = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const c = new ConsoleClient(gw.url);
        return (await c.signIn(email, `wrong guess number ${i}!`)).status;
      }),
    );
    expect(answers.filter((s) => s === 401)).toHaveLength(5);
    expect(answers.filter((s) => s === 429)).toHaveLength(7);
    expect((await new ConsoleClient(gw.url).signIn(email, PASSWORD)).status).toBe(429);
  });
});
