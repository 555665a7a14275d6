import type { FastifyInstance } from 'fastify';
import { messagePage, signInPage, welcomePage } from '../../pages/console/auth-pages.js';
import { isLang } from '../../pages/console/i18n.js';
import { audit, ConsoleError, linkHolder, setPasswordWithToken, signIn } from '../../usecases/console-auth.js';
import type { GatewayContext } from '../../usecases/context.js';
import { LANG_COOKIE, page, requireUser } from './plugin.js';

// Signing in and out, setting a password through a one-time link, and the language switch.

type Form = Record<string, unknown>;
const text = (v: unknown): string => (typeof v === 'string' ? v : '');

const NOTICES = { signed_out: 'sign_in.signed_out', everywhere: 'sign_in.signed_out_everywhere', password_set: 'welcome.done' } as const;

/** A path inside the console to go back to (never another site). */
function consolePath(v: unknown): string {
  const p = text(v);
  return /^\/console(\/[\w\-./%]*)?$/.test(p) && !p.includes('//') && !p.includes('..') ? p : '/console';
}

export async function authRoutes(app: FastifyInstance, ctx: GatewayContext): Promise<void> {
  app.get('/sign-in', async (request, reply) => {
    if (request.session.console_user_id) return reply.redirect('/console', 303);
    const pc = page(request, reply);
    const notice = NOTICES[text((request.query as Form).notice) as keyof typeof NOTICES];
    return reply.send(signInPage(pc, { ...(notice && { notice: pc.t(notice) }) }));
  });

  app.post('/sign-in', { preHandler: app.csrfProtection }, async (request, reply) => {
    const body = (request.body ?? {}) as Form;
    const email = text(body.email);
    const result = await signIn(ctx, email, text(body.password), request.ip);
    if (result.kind === 'refused') {
      const pc = page(request, reply);
      return reply.code(result.key === 'error.throttled' ? 429 : 401).send(signInPage(pc, { email, error: pc.t(result.key, result.params) }));
    }
    // A new session id at sign-in: one a visitor was given before (fixation) is worth nothing.
    await request.session.regenerate();
    request.session.console_user_id = result.user.console_user_id;
    request.session.signed_in_at = ctx.now();
    request.session.ip = request.ip;
    await audit(ctx, { kind: 'user', user: result.user, ip: request.ip }, { action: 'console.sign_in', object: result.user.email, organisation_id: result.user.organisation_id });
    return reply.redirect('/console', 303);
  });

  app.post('/sign-out', { preHandler: app.csrfProtection }, async (request, reply) => {
    const id = request.session.console_user_id;
    const user = id ? await ctx.store.console.findUser(id) : undefined;
    await request.session.destroy();
    if (user) await audit(ctx, { kind: 'user', user, ip: request.ip }, { action: 'console.sign_out', object: user.email, organisation_id: user.organisation_id });
    return reply.redirect('/console/sign-in?notice=signed_out', 303);
  });

  app.post('/sign-out-everywhere', { preHandler: [app.csrfProtection, requireUser(ctx)] }, async (request, reply) => {
    const user = request.consoleUser!;
    const ended = await ctx.store.console.deleteUserSessions(user.console_user_id);
    await request.session.destroy();
    await audit(ctx, { kind: 'user', user, ip: request.ip }, { action: 'console.sign_out_everywhere', object: user.email, organisation_id: user.organisation_id, after: JSON.stringify({ sessions_ended: ended }) });
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

  app.post('/welcome/:token', { preHandler: app.csrfProtection }, async (request, reply) => {
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

  app.post('/language', { preHandler: app.csrfProtection }, async (request, reply) => {
    const body = (request.body ?? {}) as Form;
    if (isLang(body.lang)) reply.setCookie(LANG_COOKIE, body.lang, { path: '/', sameSite: 'lax', httpOnly: true, maxAge: 365 * 86_400, secure: 'auto' });
    return reply.redirect(consolePath(body.back), 303);
  });
}
