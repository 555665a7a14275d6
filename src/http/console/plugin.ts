import { booksRoutes } from './books-routes.js';
import { reconciliationRoutes } from './reconciliation-routes.js';
import { isUtf8 } from 'node:buffer';
import { randomBytes } from 'node:crypto';
import { parse as parseQueryString } from 'node:querystring';
import fastifyCookie from '@fastify/cookie';
import fastifyCsrf from '@fastify/csrf-protection';
import fastifySession from '@fastify/session';
import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import { messagePage } from '../../pages/console/auth-pages.js';
import { chooseLang } from '../../pages/console/i18n.js';
import { PAGE_HEADERS } from '../../pages/headers.js';
import { BAD_CHARACTERS } from '../body-parsers.js';
import type { GatewayContext } from '../../usecases/context.js';
import { authRoutes } from './auth-routes.js';
import { accountRoutes } from './account-routes.js';
import { adminRoutes } from './admin-routes.js';
import { operateRoutes } from './operate-routes.js';
import { pageRoutes } from './page-routes.js';
import { listRoutes } from './list-routes.js';
import { reportRoutes } from './report-routes.js';
import { walletRoutes } from './wallet-routes.js';
import { CSRF_COOKIE, LANG_COOKIE, page, SESSION_COOKIE } from './route-helpers.js';
import { DatabaseSessionStore, SESSION_POLICY } from './session-store.js';
import { isDatabaseAway } from '../../ports/store.js';

// The management console, under /console, in the gateway's own process: sessions in the database
// (@fastify/session), CSRF tokens on every form (@fastify/csrf-protection, its secret in a signed
// cookie so that the sign-in form has one too), HTML pages in the signed-in user's language. Its
// hooks are registered in this scope only: the merchant API's routes do not run them.

export { CSRF_COOKIE, LANG_COOKIE, SESSION_COOKIE, TWO_FACTOR_COOKIE } from './route-helpers.js';

export async function consolePlugin(app: FastifyInstance, ctx: GatewayContext): Promise<void> {
  // One signing secret for every instance, made once and kept in the database.
  const secret = await ctx.store.console.setting('cookie_secret', () => randomBytes(48).toString('base64url'));
  await app.register(
    async (scope) => {
      const cookie = { path: '/', httpOnly: true, sameSite: 'lax' as const, secure: 'auto' as const };
      await scope.register(fastifyCookie, { secret });
      await scope.register(fastifySession, {
        secret,
        cookieName: SESSION_COOKIE,
        store: new DatabaseSessionStore(ctx.store.console, ctx.now),
        saveUninitialized: false,
        rolling: false,
        cookie: { ...cookie, maxAge: SESSION_POLICY.absoluteMs },
      });
      await scope.register(fastifyCsrf, {
        sessionPlugin: '@fastify/cookie',
        cookieKey: CSRF_COOKIE,
        cookieOpts: { ...cookie, signed: true },
      });
      // HTML forms only: the merchant API's parsers read any other type as JSON, and their refusals
      // are the API's error codes, not pages (answered 415 and 400 instead).
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'buffer' }, parseForm);
      scope.decorateRequest('consoleUser', undefined);
      scope.decorateRequest('consoleLang', 'en');
      scope.decorateRequest('consoleSandbox', false);
      scope.addHook('onRequest', async (request, reply) => {
        request.consoleLang = chooseLang(request.cookies[LANG_COOKIE], request.headers['accept-language']);
        request.consoleSandbox = ctx.config.mode === 'sandbox';
        void reply.headers(PAGE_HEADERS);
        reply.header('vary', 'accept-language, cookie');
        // The app-wide NUL check leaves the console's addresses to this one, so that a browser gets a page.
        if (request.url.includes('%00'))
          throw Object.assign(new Error('the address holds a NUL character'), {
            statusCode: 400,
            code: URL_CHARACTERS,
          });
      });
      scope.setErrorHandler((error: FastifyError, request, reply) => {
        const csrf = error.code === 'FST_CSRF_INVALID_TOKEN' || error.code === 'FST_CSRF_MISSING_SECRET';
        // A failover, a restart or a conflict: a moment's, and the person may simply try again.
        const database = isDatabaseAway(error);
        const status = csrf
          ? 403
          : database
            ? 503
            : error.statusCode && error.statusCode < 500
              ? error.statusCode
              : 500;
        // A request the console could not take (its type, its size) is the client's; anything else is ours.
        if (database) request.log.warn({ err: error.message }, 'console request met the database away');
        else if (status >= 500) request.log.error({ err: error }, 'console request failed');
        else if (!csrf) request.log.warn({ status, reason: error.message }, 'console request refused');
        const pc = page(request, reply);
        const message = csrf
          ? 'error.csrf'
          : database
            ? 'error.database_away'
            : (CODE_MESSAGES[error.code] ?? STATUS_MESSAGES[status] ?? 'error.title');
        // Fastify drops the Content-Type set before the error (other headers stay): the page's are set
        // again, and a redirect's Location must not go out with the error page.
        void reply.headers(PAGE_HEADERS);
        reply.removeHeader('location');
        if (database) reply.header('retry-after', '5');
        return reply.code(status).send(messagePage(pc, pc.t('error.title'), pc.t(message)));
      });
      scope.setNotFoundHandler((request, reply) => {
        const pc = page(request, reply);
        void reply.headers(PAGE_HEADERS);
        return reply.code(404).send(messagePage(pc, pc.t('error.title_not_found'), pc.t('error.not_found')));
      });
      await authRoutes(scope, ctx);
      await pageRoutes(scope, ctx);
      await listRoutes(scope, ctx);
      await walletRoutes(scope, ctx);
      await accountRoutes(scope, ctx);
      await reportRoutes(scope, ctx);
      await adminRoutes(scope, ctx);
      await operateRoutes(scope, ctx);
      await booksRoutes(scope, ctx);
      await reconciliationRoutes(scope, ctx);
    },
    { prefix: '/console' },
  );
  app.get('/', (_request, reply) => reply.redirect('/console', 303));
}

const FORM_CHARACTERS = 'GW_FORM_CHARACTERS';
const URL_CHARACTERS = 'GW_URL_CHARACTERS';

/** What an error page says for a refusal of the console's own, by its code. */
const CODE_MESSAGES: Readonly<Record<string, string>> = {
  [FORM_CHARACTERS]: 'error.form_characters',
  [URL_CHARACTERS]: 'error.url_characters',
};

/** What an error page says for a status, beyond "something went wrong". */
const STATUS_MESSAGES: Readonly<Record<number, string>> = {
  404: 'error.not_found',
  400: 'error.bad_form',
  413: 'error.bad_form',
  415: 'error.bad_form',
};

/**
 * A form's fields (a repeated one becomes an array, which the routes refuse). Its bytes must be
 * UTF-8, as a browser sends them, and no name or value may hold a control character (the API's
 * rule, BAD_CHARACTERS; a textarea's tab and line breaks pass): refused here, before any route,
 * rather than stored by one engine and refused by the other.
 */
function parseForm(_request: FastifyRequest, body: Buffer, done: (err: Error | null, value?: unknown) => void): void {
  if (!isUtf8(body)) return done(Object.assign(new Error('the form is not UTF-8'), { statusCode: 400 }));
  const fields = parseQueryString(body.toString('utf8'), '&', '=', { maxKeys: 0 });
  for (const [name, value] of Object.entries(fields)) {
    if (BAD_CHARACTERS.test(name) || [value ?? ''].flat().some((v) => BAD_CHARACTERS.test(v))) {
      return done(
        Object.assign(new Error(`the form's field ${JSON.stringify(name.slice(0, 40))} holds a control character`), {
          statusCode: 400,
          code: FORM_CHARACTERS,
        }),
      );
    }
  }
  done(null, fields);
}
