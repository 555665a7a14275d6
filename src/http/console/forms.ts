import type { FastifyRequest } from 'fastify';
import type { Message } from '../../pages/console/admin-pages.js';
import { translator } from '../../pages/console/i18n.js';
import { ConsoleError } from '../../usecases/console-auth.js';

// What the console's configuration routes share: reading a form's fields, the notice a redirect
// carries, and a refusal shown on the form's own page rather than as the error page.

export type Body = Record<string, unknown>;

/** A form field as trimmed text ('' when absent). Not for passwords, which are taken as typed. */
export const text = (v: unknown) => (typeof v === 'string' ? v.trim() : '');

const NOTICES = { saved: 'admin.saved' } as const;

/** The notice a redirect after a change asks for (?notice=saved), in the reader's language. */
export function noticeOf(request: FastifyRequest): { notice?: string } {
  const key = NOTICES[text((request.query as Body).notice) as keyof typeof NOTICES];
  return key ? { notice: translator(request.consoleLang)(key) } : {};
}

/** A refusal shown on its page (with a 400); not found and forbidden are thrown on to the error page. */
export function asMessage(request: FastifyRequest, e: unknown): Message {
  if (e instanceof ConsoleError && e.key !== 'error.not_found' && e.key !== 'error.forbidden')
    return { error: translator(request.consoleLang)(e.key, e.params) };
  throw e;
}
