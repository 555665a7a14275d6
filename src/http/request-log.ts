import { hostname } from 'node:os';
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';

// One log line per request, written when its response is finished: method, URL (signature
// redacted), status, response time and, for the merchant API, the answer's `code` (with the detail
// of a refusal). The request id is in every line the request writes (the logger's `reqId` binding).
// API keys are never logged: they are never in a URL, and bodies are not logged.

/**
 * Keeps signatures, hosted-page visit tokens (`visit=`, see checkout-routes.ts) and WeChat's
 * one-time authorization codes with their state (`code=`, `state=`) out of logged URLs:
 * only their first 8 characters are written, then `...`.
 * (ASCII on purpose: one non-ASCII character makes pino's buffer of pending lines a two-byte
 * string, and every line written after it then costs about twice as much.)
 */
export function redactUrl(url: string): string {
  // Most URLs have neither (pages, POST bodies): the search costs less than the replace.
  if (!url.includes('signature=') && !url.includes('visit=') && !url.includes('code=')) return url;
  // Long polls of one order woken together log the same URL one after another.
  if (url === lastUrl) return lastRedacted;
  lastRedacted = url.replace(/([?&](?:signature|visit|code|state)=)([^&]{0,8})[^&]*/g, '$1$2...');
  lastUrl = url;
  return lastRedacted;
}
let lastUrl = '';
let lastRedacted = '';

/**
 * Request ids: this process's start time and a random part (so ids from several instances and
 * restarts do not collide), then a counter.
 */
const REQUEST_ID_PREFIX = `req_${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
let requestCount = 0;
export function nextRequestId(): string {
  return `${REQUEST_ID_PREFIX}${(++requestCount).toString(36)}`;
}

/** Route config of the merchant API's routes: a 200 answer of theirs without a recorded refusal is code 0. */
declare module 'fastify' {
  interface FastifyContextConfig {
    /** A route of the merchant API: its 200 answers are logged (and counted) with code 0. */
    api?: boolean;
  }
}

export const API_ROUTE = { api: true } as const;

interface Answer {
  code: number;
  detail?: string;
}
const answers = new WeakMap<FastifyReply, Answer>();

/** Records the API code (and detail) a refused or failed request was answered with, for its log line. */
export function noteAnswer(reply: FastifyReply, code: number, detail?: string): void {
  answers.set(reply, detail === undefined ? { code } : { code, detail });
}

/** The API code a request was answered with: noted for refusals, 0 for an API route's 200; undefined for pages. */
function answerCode(
  answer: Answer | undefined,
  statusCode: number,
  config: { api?: boolean } | undefined,
): number | undefined {
  if (answer) return answer.code;
  return statusCode === 200 && config?.api ? 0 : undefined;
}

export interface RequestLine {
  method: string;
  url: string;
  statusCode: number;
  responseTime: number;
  code?: number;
  detail?: string;
}

/** What pino writes after the time in every line of a request's logger (its base bindings). */
const BASE = `,"pid":${process.pid},"hostname":${JSON.stringify(hostname())}`;

/**
 * The request line exactly as pino writes `log.child({ reqId }).info(line, 'request completed')`
 * with the gateway's logger options (request-log.test.ts holds the two side by side), built directly
 * rather than through a child logger on every request (docs/design/log-writer.md).
 */
export function formatRequestLine(reqId: string, line: RequestLine, time: number): string {
  let s = `{"level":30,"time":${time}${BASE},"reqId":${JSON.stringify(reqId)},"method":${JSON.stringify(line.method)},"url":${JSON.stringify(line.url)},"statusCode":${line.statusCode},"responseTime":${line.responseTime}`;
  if (line.code !== undefined) s += `,"code":${line.code}`;
  if (line.detail !== undefined) s += `,"detail":${JSON.stringify(line.detail)}`;
  return `${s},"msg":"request completed"}\n`;
}

/** `route`: the route's pattern, undefined when no route matched. */
export type RequestObserver = (
  request: FastifyRequest,
  reply: FastifyReply,
  code: number | undefined,
  route: string | undefined,
) => void;

/**
 * Fastify's request logging, as one line per request instead of an `incoming` and a `completed` line.
 * Given the logger's output, request lines are written to it directly (formatRequestLine); other
 * lines, and all lines without it, go through the logger.
 */
export class RequestLogController extends LogController {
  constructor(
    private readonly output: { write(line: string): unknown } | undefined,
    /** Whether request lines are written at all (false: the controller is there for `observe` only). */
    private readonly logs = true,
    /** Told of every answered request, with its API code (the metrics): here rather than in an onResponse hook, which costs a hook run per request. */
    private readonly observe?: RequestObserver,
  ) {
    super();
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const log = reply.log as FastifyReply['log'] & { isLevelEnabled?: (level: string) => boolean };
    const logging = this.logs && !(log.isLevelEnabled && !log.isLevelEnabled(error ? 'error' : 'info'));
    if (!logging && !this.observe) return;
    const answer = answers.get(reply);
    // Fastify builds request.routeOptions anew on every read: read once, for the code and the metrics.
    const route = request.routeOptions;
    const code = answerCode(answer, reply.statusCode, route.config);
    this.observe?.(request, reply, code, route.url);
    if (!logging) return;
    const line: RequestLine = {
      method: request.method,
      url: redactUrl(request.url),
      statusCode: reply.statusCode,
      responseTime: Math.round(reply.elapsedTime * 100) / 100,
    };
    if (code !== undefined) line.code = code;
    if (answer?.detail !== undefined) line.detail = answer.detail;
    if (error) log.error({ ...line, err: error }, 'request errored');
    else if (this.output) this.output.write(formatRequestLine(request.id, line, Date.now()));
    else log.info(line, 'request completed');
  }

  /** The gateway's 404 handler answers and is logged like any request: no extra line. */
  override routeNotFound(): void {}
}
