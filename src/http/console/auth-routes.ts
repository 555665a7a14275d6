import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ConsoleUser } from '../../domain/console.js';
import { codePage, messagePage, signInPage, welcomePage } from '../../pages/console/auth-pages.js';
import { isLang } from '../../pages/console/i18n.js';
import {
  audit,
  ConsoleError,
  linkHolder,
  setPasswordWithToken,
  signIn,
  signInCode,
} from '../../usecases/console-auth.js';
import { checkTotp } from '../../usecases/console-totp.js';
import type { GatewayContext } from '../../usecases/context.js';
import { csrfCheck, LANG_COOKIE, page, requireUser, TWO_FACTOR_COOKIE } from './route-helpers.js';

/** How long the code may be entered after the password. */
const TWO_FACTOR_MS = 5 * 60_000;

// Signing in and out, setting a password through a one-time link, and the language switch.

type Form = Record<string, unknown>;
const text = (v: unknown): string => (typeof v === 'string' ? v : '');

const NOTICES = {
  signed_out: 'sign_in.signed_out',
  everywhere: 'sign_in.signed_out_everywhere',
  password_set: 'welcome.done',
} as const;

/** A path inside the console to go back to (never another site). */
function consolePath(v: unknown): string {
  const p = text(v);
  return /^\/console(\/[\w\-./%]*)?$/.test(p) && !p.includes('//') && !p.includes('..') ? p : '/console';
}

export async function authRoutes(app: FastifyInstance, ctx: GatewayContext): Promise<void> {
  const csrf = csrfCheck(app);
  app.get('/sign-in', async (request, reply) => {
    if (request.session.console_user_id) return reply.redirect('/console', 303);
    const pc = page(request, reply);
    const notice = NOTICES[text((request.query as Form).notice) as keyof typeof NOTICES];
    return reply.send(signInPage(pc, { ...(notice && { notice: pc.t(notice) }) }));
  });

  app.post('/sign-in', { preHandler: csrf }, async (request, reply) => {
    const body = (request.body ?? {}) as Form;
    const email = text(body.email);
    const result = await signIn(ctx, email, text(body.password), request.ip);
    if (result.kind === 'refused') {
      const pc = page(request, reply);
      return reply
        .code(result.key === 'error.throttled' ? 429 : 401)
        .send(signInPage(pc, { email, error: pc.t(result.key, result.params) }));
    }
    if (result.user.totp_sealed) {
      // The password was right; the session starts once the code is too. Until then the browser
      // holds only a signed, short-lived note of whose code it is asked for.
      reply.setCookie(TWO_FACTOR_COOKIE, `${result.user.console_user_id}.${ctx.now() + TWO_FACTOR_MS}`, {
        path: '/console',
        httpOnly: true,
        sameSite: 'lax',
        secure: 'auto',
        signed: true,
        maxAge: TWO_FACTOR_MS / 1000,
      });
      return reply.redirect('/console/sign-in/code', 303);
    }
    return startSession(request, reply, result.user, false);
  });

  /** The user whose second factor this browser is asked for, while that is still open. */
  const twoFactorHolder = (request: FastifyRequest): string | undefined => {
    const raw = request.cookies[TWO_FACTOR_COOKIE];
    const unsigned = raw ? request.unsignCookie(raw) : undefined;
    if (!unsigned?.valid || !unsigned.value) return undefined;
    const at = unsigned.value.lastIndexOf('.');
    const until = Number(unsigned.value.slice(at + 1));
    return at > 0 && Number.isSafeInteger(until) && until > ctx.now() ? unsigned.value.slice(0, at) : undefined;
  };

  app.get('/sign-in/code', async (request, reply) => {
    if (!twoFactorHolder(request)) return reply.redirect('/console/sign-in', 303);
    return reply.send(codePage(page(request, reply)));
  });

  app.post('/sign-in/code', { preHandler: csrf }, async (request, reply) => {
    const id = twoFactorHolder(request);
    if (!id) return reply.redirect('/console/sign-in', 303);
    const typed = text(((request.body ?? {}) as Form).code);
    const result = await signInCode(ctx, id, typed, request.ip, (user, code) => checkTotp(ctx, user, code));
    if (result.kind === 'refused') {
      const pc = page(request, reply);
      return reply
        .code(result.key === 'error.throttled' ? 429 : 401)
        .send(codePage(pc, pc.t(result.key, result.params), !/^\s*\d{6}\s*$/.test(typed)));
    }
    reply.clearCookie(TWO_FACTOR_COOKIE, { path: '/console' });
    return startSession(request, reply, result.user, true);
  });

  /** A signed-in session for the user: a new session id (one a visitor was given before, by fixation, is worth nothing). */
  const startSession = async (request: FastifyRequest, reply: FastifyReply, user: ConsoleUser, twoFactor: boolean) => {
    await request.session.regenerate();
    request.session.console_user_id = user.console_user_id;
    request.session.signed_in_at = ctx.now();
    request.session.ip = request.ip;
    await audit(
      ctx,
      { kind: 'user', user, ip: request.ip },
      {
        action: 'console.sign_in',
        object: user.email,
        organisation_id: user.organisation_id,
        ...(twoFactor && { after: '{"two_factor":true}' }),
      },
    );
    return reply.redirect('/console', 303);
  };

  app.post('/sign-out', { preHandler: csrf }, async (request, reply) => {
    const id = request.session.console_user_id;
    const user = id ? await ctx.store.console.findUser(id) : undefined;
    await request.session.destroy();
    if (user)
      await audit(
        ctx,
        { kind: 'user', user, ip: request.ip },
        { action: 'console.sign_out', object: user.email, organisation_id: user.organisation_id },
      );
    return reply.redirect('/console/sign-in?notice=signed_out', 303);
  });

  app.post('/sign-out-everywhere', { preHandler: [csrf, requireUser(ctx)] }, async (request, reply) => {
    const user = request.consoleUser!;
    const ended = await ctx.store.console.deleteUserSessions(user.console_user_id);
    await request.session.destroy();
    await audit(
      ctx,
      { kind: 'user', user, ip: request.ip },
      {
        action: 'console.sign_out_everywhere',
        object: user.email,
        organisation_id: user.organisation_id,
        after: JSON.stringify({ sessions_ended: ended }),
      },
    );
    return reply.redirect('/console/sign-in?notice=everywhere', 303);
  });

  app.get('/welcome/:token', async (request, reply) => {
    const { token } = request.params as { token: string };
    const pc = page(request, reply);
    const user = await linkHolder(ctx, token);
    if (!user) return reply.code(404).send(messagePage(pc, pc.t('welcome.title'), pc.t('error.link_invalid')));
    // The link's token must not leak to another site through a Referer (PAGE_HEADERS: no-referrer).
    return reply.send(welcomePage(pc, { token, email: user.email }));
  });

  app.post('/welcome/:token', { preHandler: csrf }, async (request, reply) => {
    const { token } = request.params as { token: string };
    const body = (request.body ?? {}) as Form;
    const password = text(body.password);
    try {
      if (password !== text(body.confirm)) throw new ConsoleError('error.password_mismatch');
      await setPasswordWithToken(ctx, token, password, request.ip);
    } catch (e) {
      if (!(e instanceof ConsoleError)) throw e;
      const pc = page(request, reply);
      const user = await linkHolder(ctx, token);
      if (!user) return reply.code(404).send(messagePage(pc, pc.t('welcome.title'), pc.t('error.link_invalid')));
      return reply.code(400).send(welcomePage(pc, { token, email: user.email, error: pc.t(e.key, e.params) }));
    }
    return reply.redirect('/console/sign-in?notice=password_set', 303);
  });

  app.post('/language', { preHandler: csrf }, async (request, reply) => {
    const body = (request.body ?? {}) as Form;
    if (isLang(body.lang))
      reply.setCookie(LANG_COOKIE, body.lang, {
        path: '/',
        sameSite: 'lax',
        httpOnly: true,
        maxAge: 365 * 86_400,
        secure: 'auto',
      });
    return reply.redirect(consolePath(body.back), 303);
  });
}
