import type { FastifyReply, FastifyRequest } from 'fastify';
import { visitErrorPage } from '../pages/checkout-page.js';
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

export function linkNotFound(reply: FastifyReply): void {
  void pageHeaders(reply).code(404).send(visitErrorPage('unknown'));
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
