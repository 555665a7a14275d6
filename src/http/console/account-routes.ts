import type { FastifyInstance } from 'fastify';
import { messagePage } from '../../pages/console/auth-pages.js';
import { accountPage, enrolPage, recoveryCodesPage } from '../../pages/console/account-pages.js';
import { audit, ConsoleError } from '../../usecases/console-auth.js';
import {
  beginEnrolment,
  confirmEnrolment,
  disableTotp,
  enrolment,
  pendingSecret,
  renewRecoveryCodes,
  twoFactorRequiredOf,
} from '../../usecases/console-totp.js';
import type { GatewayContext } from '../../usecases/context.js';
import { guards, page } from './route-helpers.js';
import { sessionHash } from './session-store.js';

// The signed-in user's own account: two-factor (enrol with a QR code, confirm with a code; turn
// off with the password) and their sessions, each of which they can end.

const text = (v: unknown) => (typeof v === 'string' ? v : '');
const NOTICES = { totp_on: 'totp.now_on', totp_off: 'totp.now_off', ended: 'account.ended' } as const;

export async function accountRoutes(app: FastifyInstance, ctx: GatewayContext): Promise<void> {
  const { signedIn, csrfAndUser } = guards(app, ctx);

  const account = async (
    request: Parameters<typeof page>[0],
    reply: Parameters<typeof page>[1],
    message: { notice?: string; error?: string } = {},
  ) => {
    const user = request.consoleUser!;
    const sessions = await ctx.store.console.listUserSessions(user.console_user_id);
    // Without the master key two-factor cannot be turned on: the page says so instead of a link that ends in an error.
    return accountPage(page(request, reply), {
      twoFactor: user.totp_sealed !== null,
      canEnrol: ctx.masterKey !== undefined,
      recoveryCodes: await ctx.store.console.countRecoveryCodes(user.console_user_id),
      required: await twoFactorRequiredOf(ctx, user),
      sessions,
      current: sessionHash(request.session.sessionId),
      ...message,
    });
  };

  app.get('/account', signedIn, async (request, reply) => {
    const key = NOTICES[text((request.query as Record<string, unknown>).notice) as keyof typeof NOTICES];
    return reply.send(await account(request, reply, key ? { notice: page(request, reply).t(key) } : {}));
  });

  app.get('/account/two-factor', signedIn, async (request, reply) => {
    const pc = page(request, reply);
    if (request.consoleUser!.totp_sealed) return reply.redirect('/console/account', 303);
    const required = (request.query as Record<string, unknown>).required === '1';
    try {
      return reply.send(
        enrolPage(
          pc,
          beginEnrolment(ctx, request.consoleUser!),
          undefined,
          required ? pc.t('totp.required') : undefined,
        ),
      );
    } catch (e) {
      if (!(e instanceof ConsoleError)) throw e;
      return reply.code(409).send(messagePage(pc, pc.t('totp.title'), pc.t(e.key)));
    }
  });

  app.post('/account/two-factor', csrfAndUser, async (request, reply) => {
    const user = request.consoleUser!;
    const body = (request.body ?? {}) as Record<string, unknown>;
    const pending = text(body.pending);
    try {
      const codes = await confirmEnrolment(ctx, user, request.ip, pending, text(body.code));
      return reply.send(recoveryCodesPage(page(request, reply), codes, true));
    } catch (e) {
      if (!(e instanceof ConsoleError)) throw e;
      const pc = page(request, reply);
      // The same secret again (the app has it already), with the error.
      const secret = e.key === 'error.totp_wrong' ? pendingSecret(ctx, user, pending) : undefined;
      if (!secret) return reply.code(400).send(messagePage(pc, pc.t('totp.title'), pc.t(e.key)));
      return reply.code(400).send(enrolPage(pc, enrolment(ctx, user, secret), pc.t(e.key)));
    }
  });

  app.post('/account/two-factor/recovery-codes', csrfAndUser, async (request, reply) => {
    try {
      const password = text(((request.body ?? {}) as Record<string, unknown>).password);
      const codes = await renewRecoveryCodes(ctx, request.consoleUser!, request.ip, password);
      return reply.send(recoveryCodesPage(page(request, reply), codes, false));
    } catch (e) {
      if (!(e instanceof ConsoleError)) throw e;
      reply.code(e.key === 'error.throttled' ? 429 : 400);
      return reply.send(await account(request, reply, { error: page(request, reply).t(e.key, e.params) }));
    }
  });

  app.post('/account/two-factor/disable', csrfAndUser, async (request, reply) => {
    try {
      await disableTotp(
        ctx,
        request.consoleUser!,
        request.ip,
        text(((request.body ?? {}) as Record<string, unknown>).password),
      );
      return reply.redirect('/console/account?notice=totp_off', 303);
    } catch (e) {
      if (!(e instanceof ConsoleError)) throw e;
      reply.code(e.key === 'error.throttled' ? 429 : 400);
      return reply.send(await account(request, reply, { error: page(request, reply).t(e.key, e.params) }));
    }
  });

  app.post('/account/sessions/end', csrfAndUser, async (request, reply) => {
    const user = request.consoleUser!;
    const session = text(((request.body ?? {}) as Record<string, unknown>).session);
    // Only the user's own sessions: another's hash matches nothing here.
    if (/^[0-9a-f]{64}$/.test(session) && (await ctx.store.console.deleteUserSession(user.console_user_id, session))) {
      await audit(
        ctx,
        { kind: 'user', user, ip: request.ip },
        { action: 'console.end_session', object: user.email, organisation_id: user.organisation_id },
      );
    }
    return reply.redirect('/console/account?notice=ended', 303);
  });
}
