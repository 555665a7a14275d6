import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerHookHandler } from 'fastify';
import type { ConsoleUser } from '../../domain/console.js';
import { LANG_COOKIE } from '../../pages/checkout-i18n.js';
import type { Lang } from '../../pages/console/i18n.js';
import { pageContext, type PageContext } from '../../pages/console/layout.js';
import type { GatewayContext } from '../../usecases/context.js';
import { twoFactorRequiredOf } from '../../usecases/console-totp.js';

// What the console's route files share: its cookies, the request's user and language, the page
// context of a request, and the guards of a route. plugin.ts registers the routes; they import
// from here, so that no route file imports the plugin that imports it.

declare module 'fastify' {
  interface FastifyRequest {
    consoleUser?: ConsoleUser;
    consoleLang: Lang;
    /** The gateway runs in sandbox mode: every page says so. */
    consoleSandbox: boolean;
  }
}

export const SESSION_COOKIE = 'gw_console';
export const CSRF_COOKIE = 'gw_console_csrf';
export { LANG_COOKIE };
export const TWO_FACTOR_COOKIE = 'gw_console_2fa';

/** The page context of a request: its language, its user, a CSRF token for its forms. */
export function page(request: FastifyRequest, reply: FastifyReply): PageContext {
  return pageContext(
    request.consoleLang,
    reply.generateCsrf(),
    request.url.split('?')[0] ?? '/console',
    request.consoleUser,
    request.consoleSandbox,
  );
}

/** What a user who must set up two-factor may still open: the set-up itself, the language, signing out. */
const WITHOUT_TWO_FACTOR = new Set([
  '/console/account/two-factor',
  '/console/sign-out',
  '/console/sign-out-everywhere',
  '/console/language',
]);

/**
 * Loads the signed-in user (active) into the request, or sends the browser to sign in. A user of
 * whom two-factor is required and who has none is sent to set it up: nothing else opens till then.
 */
export function requireUser(ctx: GatewayContext) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const id = request.session.console_user_id;
    const user = id ? await ctx.store.console.findUser(id) : undefined;
    if (!user || user.status !== 'active') {
      if (id) await request.session.destroy();
      return reply.redirect('/console/sign-in', 303);
    }
    request.consoleUser = user;
    const path = request.url.split('?')[0] ?? '';
    if (!user.totp_sealed && !WITHOUT_TWO_FACTOR.has(path) && (await twoFactorRequiredOf(ctx, user)))
      return reply.redirect('/console/account/two-factor?required=1', 303);
  };
}

/** The CSRF check of a form's POST (@fastify/csrf-protection's hook of this scope). */
export function csrfCheck(app: FastifyInstance): preHandlerHookHandler {
  return (request, reply, done) => app.csrfProtection(request, reply, done);
}

/** A route's guards: a signed-in user; the same with a form's CSRF token checked first. */
export function guards(app: FastifyInstance, ctx: GatewayContext) {
  return {
    signedIn: { preHandler: requireUser(ctx) },
    csrfAndUser: { preHandler: [csrfCheck(app), requireUser(ctx)] },
  };
}
