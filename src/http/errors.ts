import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ERROR_MESSAGES, GatewayError, type ErrorCode } from '../domain/errors.js';
import { DatabaseConflict, DatabaseUnavailable } from '../ports/store.js';
import { consoleAddressNotFound, isConsoleAddress, isPageAddress, linkNotFound } from './page-replies.js';
import { nextRequestId, noteAnswer } from './request-log.js';

// The one place where failures become responses. Every API answer is HTTP 200 JSON with an
// integer `code` and the published `message`; `detail` explains the specific problem.

export interface ErrorBody {
  code: ErrorCode;
  message: string;
  detail: string;
}

export function errorBody(code: ErrorCode, detail: string): ErrorBody {
  return { code, message: ERROR_MESSAGES[code], detail };
}

/** Hints for pattern failures, so the detail tells the client what a valid value looks like. */
const PATTERN_HINTS: Record<string, string> = {
  amount: 'must be a decimal amount such as 120.00',
  refund_amount: 'must be a decimal amount such as 120.00',
  ip: "must be the customer's IPv4 address, e.g. 122.122.122.1",
  merchant_reference: 'may contain only letters, digits and - _ . : (1 to 64 characters)',
  signature: 'must be 64 hexadecimal characters',
  return_url: 'must be an absolute http:// or https:// URL',
  callback_url: 'must be an absolute http:// or https:// URL',
  backPage_url: 'must be an absolute http:// or https:// URL',
  version: 'must be "2.0"',
};

interface AjvError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
  data?: unknown;
}

/** Maps a JSON-schema failure: a missing or empty field is 204, a malformed one 207. */
export function validationErrorBody(errors: AjvError[], context: string | undefined): ErrorBody {
  const e = errors[0];
  if (!e) return errorBody(3, `invalid ${context ?? 'request'}`);
  const field = e.instancePath.replace(/^\//, '') || (e.params.missingProperty as string | undefined) || '';
  switch (e.keyword) {
    case 'required':
      return errorBody(204, `${e.params.missingProperty as string} is required`);
    case 'minLength':
      return errorBody(204, `${field} must not be empty`);
    case 'type':
      if (!field) return errorBody(3, `the ${context ?? 'request'} must be a JSON object`);
      return errorBody(207, `${field} must be a ${String(e.params.type)}`);
    case 'maxLength':
      return errorBody(207, `${field} must be at most ${String(e.params.limit)} characters`);
    case 'pattern':
      return errorBody(207, `${field} ${PATTERN_HINTS[field] ?? 'is malformed'}`);
    case 'enum':
    case 'const': {
      const allowed = (e.params.allowedValues as unknown[] | undefined) ?? [e.params.allowedValue];
      return errorBody(207, `${field} must be ${allowed.map((v) => JSON.stringify(v)).join(' or ')}`);
    }
    default:
      return errorBody(207, `${field || context || 'request'} ${e.message ?? 'is invalid'}`);
  }
}

export function handleError(
  error: FastifyError | GatewayError | Error,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  const answer = (body: ErrorBody, logDetail = true) => {
    // Logged in the request's one line (request-log.ts), with the detail of a refusal.
    noteAnswer(reply, body.code, logDetail ? body.detail : undefined);
    void reply.code(200).send(body);
  };
  if (error instanceof GatewayError) return answer(errorBody(error.code, error.detail));
  if (error instanceof DatabaseUnavailable) {
    request.log.warn({ err: error.message }, 'database unavailable');
    return answer(
      errorBody(
        1,
        'the database is unavailable for a moment (a failover or a restart): send the same request again; a retry with the same merchant_reference or refund reference is safe',
      ),
    );
  }
  if (error instanceof DatabaseConflict) {
    request.log.warn({ err: error.message }, 'database conflict; the request was stopped');
    return answer(
      errorBody(
        1,
        'the request met a concurrent one at the database and was stopped: send the same request again; a retry with the same merchant_reference or refund reference is safe',
      ),
    );
  }
  const fe = error as FastifyError & { validation?: AjvError[]; validationContext?: string };
  if (fe.validation) return answer(validationErrorBody(fe.validation, fe.validationContext));
  if (fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
    return answer(errorBody(3, 'the request body is too large (64 KB at most)'));
  if ((fe.code === 'FST_ERR_MAX_PARAM_LENGTH' || fe.code === 'FST_ERR_BAD_URL') && isPageAddress(request))
    return linkNotFound(request, reply);
  if ((fe.code === 'FST_ERR_MAX_PARAM_LENGTH' || fe.code === 'FST_ERR_BAD_URL') && isConsoleAddress(request.url))
    return consoleAddressNotFound(request, reply);
  if (fe.code === 'FST_ERR_MAX_PARAM_LENGTH')
    return answer(errorBody(207, 'a value in the path is too long (100 characters at most)'));
  // Fastify's message quotes the whole URL, signature included: said without it.
  if (fe.code === 'FST_ERR_BAD_URL')
    return answer(
      errorBody(
        3,
        'the URL path has a broken %-escape: % must be followed by two hex digits, and the bytes must be UTF-8',
      ),
    );
  // A body of any media type is read (body-parsers.ts), but a Content-Type that is not one at all stops Fastify first.
  if (fe.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    return answer(
      errorBody(3, 'the Content-Type header is not a media type: send application/json, or no Content-Type at all'),
    );
  }
  if (fe.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || fe.statusCode === 400) {
    return answer(errorBody(3, fe.message), false);
  }
  // Its own line, with the stack; the request's line follows with code 1. Both carry the reqId.
  request.log.error({ err: error }, 'unexpected error');
  answer(errorBody(1, `internal error; quote request id ${request.id} to the gateway operator`), false);
}

/**
 * Requests that Node's HTTP parser refuses never reach a route or handleError: a URL and headers
 * over 16 KB together, a body not received in time, bytes that are not HTTP. Fastify's default
 * answers those with HTTP 400/408/431 and `{"error","statusCode"}`, which has no `code`; they get
 * the API's answer shape and HTTP 200 like every other refusal, then the connection is closed.
 */
export function clientErrorHandler(this: FastifyInstance, error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  // A connection opened in advance (a client pool, a load balancer) that never sent a byte has no
  // request to refuse: closed without a word. An answer would be read as the reply to the request it sends next.
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT' && socket.bytesRead === 0) {
    socket.destroy();
    return;
  }
  const body =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? errorBody(207, 'the URL and headers are too long (16 KB at most together)')
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? errorBody(3, 'the request was not received in full in time')
        : errorBody(3, 'the request is not well-formed HTTP');
  // No request reached a route, so no request line is written: this is its line. What the parser
  // read is not logged (it may hold a signature); its error code says what was wrong.
  this.log.info(
    {
      reqId: nextRequestId(),
      remoteAddress: socket.remoteAddress,
      statusCode: 200,
      code: body.code,
      detail: body.detail,
      parserError: error.code,
    },
    'request refused by the HTTP parser',
  );
  const text = JSON.stringify(body);
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
    );
  }
  socket.destroy(error);
}
