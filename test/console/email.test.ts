// The console's email through a real SMTP server (smtp-server, started here) read back with
// mailparser: an invitation goes to the invitee in the language chosen and its link works; a password
// link goes to its user; an address that has an account (here or in another organisation) gets the
// same answer on the page as a new one, and only that address is told; an SMTP server that refuses
// leaves the link on the page, with why for an operator.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import { createMerchant, type MerchantCredentials } from '../../src/cli/admin.js';
import { ConsoleClient, PASSWORD, consoleUser } from '../support/console-client.js';
import { ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';
import { until } from '../support/wait.js';

interface Smtp {
  port: number;
  mails: ParsedMail[];
  /** While true, every message is refused with 451. */
  refusing: boolean;
  close(): Promise<void>;
}

async function startSmtp(): Promise<Smtp> {
  const state = { mails: [] as ParsedMail[], refusing: false };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, _session, done) {
      if (state.refusing) {
        stream.resume();
        stream.on('end', () => done(Object.assign(new Error('mailbox busy, try later'), { responseCode: 451 })));
        return;
      }
      simpleParser(stream)
        .then((mail) => {
          state.mails.push(mail);
          done();
        })
        .catch(done);
    },
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return Object.assign(state, {
    port: (server.server.address() as AddressInfo).port,
    close: () => new Promise<void>((r) => server.close(() => r())),
  });
}

const linkIn = (mail: ParsedMail) => /(https?:\/\/\S+\/console\/welcome\/\S+)/.exec(mail.text ?? '')?.[1];
const to = (mail: ParsedMail) => (Array.isArray(mail.to) ? mail.to[0] : mail.to)?.value[0]?.address;

describe.each(ENGINES)('console email on %s', (engine) => {
  let smtp: Smtp;
  let gw: TestGateway;
  let other: MerchantCredentials;
  let owner: ConsoleClient;
  beforeAll(async () => {
    smtp = await startSmtp();
    gw = await startTestGateway(engine, {
      smtp: { url: `smtp://127.0.0.1:${smtp.port}`, from: 'Gateway console <console@psp.example>' },
    });
    other = await createMerchant(gw.store, { name: 'Other Shop', currency: 'NZD' });
    owner = (await consoleUser(gw, 'merchant', 'owner', gw.merchant.organisation_id, `owner-${engine}@shop.example`))
      .client;
  });
  afterAll(async () => {
    await gw?.close();
    await smtp?.close();
  });

  const invite = async (email: string, lang = 'zh', by = owner) => {
    const path = `/console/organisations/${gw.merchant.organisation_id}`;
    await by.get(path);
    return by.post(`${path}/invite`, { email, role: 'staff', lang });
  };

  it('sends the invitation to the invitee in the language chosen, not the link to the page; the link sets the password', async () => {
    const email = `new-${engine}@shop.example`;
    const page = await invite(email);
    expect(page.status).toBe(200);
    expect(page.body).toContain('id="link-mailed"');
    expect(page.body).not.toContain('/console/welcome/');
    await until('the invitation arrived', () => smtp.mails.some((m) => to(m) === email));
    const mail = smtp.mails.find((m) => to(m) === email)!;
    expect(mail.from?.text).toContain('console@psp.example');
    expect(mail.subject).toBe('支付网关控制台邀请');
    expect(mail.text).toContain(`owner-${engine}@shop.example`);
    expect(mail.text).toContain('Test Merchant');
    const link = linkIn(mail)!;
    const invited = new ConsoleClient(gw.url);
    const path = new URL(link).pathname;
    expect((await invited.get(path)).status).toBe(200);
    expect((await invited.post(path, { password: PASSWORD, confirm: PASSWORD })).location).toBe(
      '/console/sign-in?notice=password_set',
    );
    expect((await invited.signIn(email, PASSWORD)).location).toBe('/console');
  });

  it('answers an address that has an account as it answers a new one, and tells only that address', async () => {
    const theirs = `theirs-${engine}@other.example`;
    await consoleUser(gw, 'merchant', 'staff', other.organisation_id, theirs);
    const fresh = await invite(`fresh-${engine}@shop.example`, 'en');
    const taken = await invite(theirs, 'en');
    const notice = (body: string) =>
      /id="link-mailed"><p>([^<]*)</
        .exec(body)?.[1]
        ?.replace(/\S+@\S+/g, 'ADDRESS')
        .replace(/until .*/, '');
    expect(taken.status).toBe(fresh.status);
    expect(notice(taken.body)).toBe(notice(fresh.body));
    expect(taken.body).not.toContain('already');
    await until('the note arrived', () => smtp.mails.some((m) => to(m) === theirs));
    const note = smtp.mails.find((m) => to(m) === theirs)!;
    expect(note.subject).toBe('Your invitation to the payment gateway console');
    expect(note.text).toContain('has a console account already');
    expect(linkIn(note)).toBeUndefined();
    // Still theirs: not moved to the inviter's organisation.
    expect((await gw.store.console.findUserByEmail(theirs))!.organisation_id).toBe(other.organisation_id);
  });

  it('mails a password link to its user; an SMTP server that refuses leaves the link on the page, and why for an operator only', async () => {
    const { console_user_id, email } = await consoleUser(gw, 'merchant', 'staff', gw.merchant.organisation_id);
    const path = `/console/organisations/${gw.merchant.organisation_id}`;
    const page = await owner.get(path);
    const shown = /name="shown_at" value="(\d+)"/.exec(page.body)![1];
    const reset = await owner.post(`/console/console-users/${console_user_id}/password-link`, { shown_at: shown });
    expect(reset.body).toContain('id="link-mailed"');
    await until('the link arrived', () => smtp.mails.some((m) => to(m) === email));
    expect(linkIn(smtp.mails.find((m) => to(m) === email)!)).toBeDefined();

    const operator = (await consoleUser(gw, 'operator', 'admin')).client;
    smtp.refusing = true;
    try {
      const refused = await invite(`later-${engine}@shop.example`, 'en');
      expect(refused.body).toContain('id="one-time-link"');
      expect(refused.body).toContain('The email could not be sent: give them this link yourself.');
      // The mail server's own words (its host, its login) are the operator's, not a merchant's.
      expect(refused.body).not.toContain('mailbox busy');
      expect(refused.body).toMatch(/\/console\/welcome\/[\w-]+/);
      const told = await invite(`later-op-${engine}@shop.example`, 'en', operator);
      expect(told.body).toContain('id="one-time-link"');
      expect(told.body).toContain('mailbox busy');
    } finally {
      smtp.refusing = false;
    }
  });
});
