import { isUtf8 } from 'node:buffer';
import { parse as parseQueryString } from 'node:querystring';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { BodyError, parseJsonBody } from './json-body.js';
import { GatewayError } from '../domain/errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Top-level body fields that arrived as JSON numbers (their text is kept in the body). */
    numberFields: Set<string> | null;
  }
}

/**
 * JSON bodies keep numbers as their source text; a body without a JSON content type is still
 * read as JSON: text/plain, another type or none at all (Python's requests with
 * `data=json.dumps(...)` sends none). Forms are accepted too, and a form body that is a JSON object
 * is read as JSON (PHP's curl and Java's HttpURLConnection send the form type unless told otherwise;
 * no form body of this API starts with `{`).
 */
export async function registerBodyParsers(app: FastifyInstance): Promise<void> {
  app.decorateRequest('numberFields', null);
  const parseJson = (req: FastifyRequest, body: string, done: Done) => {
    try {
      const parsed = parseJsonBody(body);
      req.numberFields = parsed.numberFields;
      done(null, parsed.fields);
    } catch (e) {
      done(e instanceof BodyError ? new GatewayError(3, e.message) : (e as Error));
    }
  };
  const parseForm = (req: FastifyRequest, body: string, done: Done) => {
    if (/^\s*\{/.test(body)) return parseJson(req, body, done);
    // A repeated field becomes an array (refused as not a string); the object has no prototype.
    done(null, parseQueryString(body, '&', '=', { maxKeys: 0 }));
  };
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, utf8(parseJson));
  app.addContentTypeParser('text/plain', { parseAs: 'buffer' }, utf8(parseJson));
  app.addContentTypeParser('*', { parseAs: 'buffer' }, utf8(parseJson));
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'buffer' }, utf8(parseForm));
}

type Done = (err: Error | null, value?: unknown) => void;

/**
 * The body as text. Bytes that are not UTF-8 (a client sending GBK or Latin-1) are refused: read
 * as U+FFFD they would only fail the signature check, with a 206 that does not say why.
 */
function utf8(parse: (req: FastifyRequest, body: string, done: Done) => void) {
  return (req: FastifyRequest, body: Buffer, done: Done): void => {
    // No route: the answer is "no endpoint" (404, code 1), whatever the body; not a complaint about a body nobody reads.
    if (req.is404) return done(null, undefined);
    // Not decompressed: read as it is, a gzip body was "not valid UTF-8", which sent the client looking in the wrong place.
    const coding = req.headers['content-encoding'];
    if (coding !== undefined && coding.trim().toLowerCase() !== 'identity') {
      return done(
        new GatewayError(3, `the body is compressed (Content-Encoding: ${coding.slice(0, 32)}); send it uncompressed`),
      );
    }
    if (!isUtf8(body))
      return done(new GatewayError(3, 'the body is not valid UTF-8: send it, and every value in it, as UTF-8'));
    parse(req, body.toString('utf8'), done);
  };
}

/**
 * Control characters (tab and line breaks aside), and half of a UTF-16 surrogate pair: JSON lets
 * `"\uD800"` through, but it is no character; stored as UTF-8 it would become U+FFFD, not what the
 * merchant sent and signed. PostgreSQL text cannot hold NUL at all. The console's forms are held
 * to it too.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
export const BAD_CHARACTERS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]|\p{Cs}/u;
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Refuses values that are not strings, except the named fields where a JSON number is tolerated
 * (real clients send `"amount": 120.00`); their text is what the signature covers.
 */
export function requireStringFields(
  body: Record<string, unknown>,
  numberFields: Set<string> | null,
  numbersAllowed: readonly string[],
): void {
  for (const [name, value] of Object.entries(body)) {
    // A name is signed like a value (sortedParams), so it is held to the same characters.
    if (BAD_CHARACTERS.test(name))
      throw new GatewayError(
        207,
        `a field name (${JSON.stringify(name.slice(0, 40))}) contains control characters or half of a surrogate pair`,
      );
    if (typeof value !== 'string') throw new GatewayError(207, `${name} must be a string`);
    if (numberFields?.has(name) && !numbersAllowed.includes(name))
      throw new GatewayError(207, `${name} must be a string, not a number`);
    if (BAD_CHARACTERS.test(value)) {
      if (!LONE_SURROGATE.test(value)) throw new GatewayError(207, `${name} contains control characters`);
      throw new GatewayError(
        207,
        `${name} is not valid Unicode: it holds half of a surrogate pair (a \\uD800-\\uDFFF escape without its other half)`,
      );
    }
  }
}

/**
 * A route's preValidation hook: the body must be a JSON object (or form) of strings, except
 * `numbersAllowed` (see requireStringFields). A callback hook, not an async one: no promise per request.
 */
export function stringBody(numbersAllowed: readonly string[]) {
  return (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    if (!request.body || typeof request.body !== 'object' || Array.isArray(request.body)) {
      return done(new GatewayError(3, 'the body must be a JSON object'));
    }
    try {
      requireStringFields(request.body as Record<string, unknown>, request.numberFields, numbersAllowed);
    } catch (e) {
      return done(e as Error);
    }
    done();
  };
}
