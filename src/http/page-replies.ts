import type { FastifyReply, FastifyRequest } from 'fastify';
import { checkoutTranslator, LANG_COOKIE, pageLanguage, type Lang } from '../pages/checkout-i18n.js';
import { visitErrorPage } from '../pages/checkout-page.js';
import { messagePage } from '../pages/console/auth-pages.js';
import { chooseLang } from '../pages/console/i18n.js';
import { pageContext } from '../pages/console/layout.js';
import { PAGE_HEADERS } from '../pages/headers.js';

// Answers that are HTML pages rather than the API's JSON: shared by the hosted page's routes and
// the error handler (a mangled payment link gets a page, whatever route it missed).

/**
 * A GET of a payment page address that no route serves (a mangled link: an over-long or empty
 * nonce, a doubled slash, a bad escape). A customer's browser opened it: it gets the page that
 * says so, not the API's JSON.
 */
export function isPageAddress(request: FastifyRequest): boolean {
  return request.method === 'GET' && /^\/v2\/checkout(\/|\?|$)/.test(request.url);
}

/** An address the console serves (its pages answer errors as pages too). */
export function isConsoleAddress(url: string): boolean {
  return /^\/console(\/|\?|$)/.test(url);
}

/**
 * A console address the router could not take (a value longer than a route allows, a broken
 * %-escape): the console's "nothing here" page in the reader's language, not the API's JSON.
 */
export function consoleAddressNotFound(request: FastifyRequest, reply: FastifyReply): void {
  const pc = pageContext(
    chooseLang(readCookie(request.headers.cookie, LANG_COOKIE), request.headers['accept-language']),
    '',
    '/console',
  );
  void pageHeaders(reply)
    .code(404)
    .send(messagePage(pc, pc.t('error.title_not_found'), pc.t('error.not_found')));
}

export function linkNotFound(request: FastifyRequest, reply: FastifyReply): void {
  const lang = pageLang(request, reply);
  void pageHeaders(reply)
    .code(404)
    .send(visitErrorPage('unknown', checkoutTranslator(lang), lang));
}

/**
 * The language of a hosted or sandbox page: `?lang=` (the page's switch, which also sets the
 * cookie so that it sticks), else the cookie, else Accept-Language.
 */
export function pageLang(request: FastifyRequest, reply: FastifyReply): Lang {
  const { lang, setCookie } = pageLanguage(
    (request.query as Record<string, unknown> | undefined)?.lang,
    request.headers.cookie,
    request.headers['accept-language'],
  );
  if (setCookie) reply.header('set-cookie', setCookie);
  return lang;
}

export function pageHeaders(reply: FastifyReply): FastifyReply {
  return reply.headers(PAGE_HEADERS);
}

export function readCookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim() || undefined;
  }
  return undefined;
}
