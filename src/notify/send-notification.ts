import type { Dispatcher } from 'undici';
import { redactCallbackUrl } from '../domain/callback-url.js';
import { exchange } from '../outbound/exchange.js';
import { CallbackRefusedError } from './callback-safety.js';
import type { NotificationRequest } from './notification-request.js';

export interface AttemptOutcome {
  /** True only for HTTP 200 with body `sent` (surrounding whitespace ignored). */
  delivered: boolean;
  http_status: number | null;
  /** The first bytes of the response body. */
  response_excerpt: string | null;
  latency_ms: number;
  error: string | null;
  /** A 429 or 503's Retry-After, in milliseconds from now (seconds or an HTTP date, as RFC 9110 allows). */
  retry_after_ms?: number;
}

const EXCERPT_BYTES = 200;
/** An acknowledgement is four letters; a body longer than this is not one and is not read further. */
const MAX_BODY_BYTES = 16 * 1024;
const MAX_ERROR_CHARS = 500;

/**
 * POSTs one notification attempt. Never throws: every failure (refused destination, DNS, connect,
 * TLS, timeout, reset, redirect, wrong answer) comes back as an undelivered outcome with its reason.
 * Redirects are not followed: a 3xx is a failed attempt.
 */
export async function sendNotification(
  dispatcher: Dispatcher,
  url: string,
  req: NotificationRequest,
  opts: { timeoutMs: number; signal?: AbortSignal },
): Promise<AttemptOutcome> {
  const started = performance.now();
  const latency = () => Math.round(performance.now() - started);
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return {
      delivered: false,
      http_status: null,
      response_excerpt: null,
      latency_ms: 0,
      error: `callback_url is not a URL: ${redactCallbackUrl(url)}`,
    };
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') {
    return {
      delivered: false,
      http_status: null,
      response_excerpt: null,
      latency_ms: 0,
      error: `callback_url must be http or https, not ${target.protocol}`,
    };
  }
  let headers = req.headers;
  if (target.username || target.password) {
    // user:password@ in the URL is HTTP Basic authentication, as curl and browsers read it;
    // undici would drop it silently.
    const credentials = `${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`;
    headers = { ...headers, authorization: `Basic ${Buffer.from(credentials, 'utf8').toString('base64')}` };
    target.username = '';
    target.password = '';
  }
  const outcome = await exchange(
    dispatcher,
    target,
    { method: 'POST', headers, body: req.body },
    { timeoutMs: opts.timeoutMs, maxBytes: MAX_BODY_BYTES, ...(opts.signal && { signal: opts.signal }) },
  );
  if (outcome.kind === 'failed') {
    return {
      delivered: false,
      http_status: outcome.status,
      response_excerpt: null,
      latency_ms: latency(),
      error: describeError(outcome.error, outcome.why === 'timeout', opts.timeoutMs),
    };
  }
  const { status, body } = outcome;
  const retryAfter =
    status === 429 || status === 503 ? parseRetryAfter(outcome.headers['retry-after'], Date.now()) : undefined;
  const excerpt = body.subarray(0, EXCERPT_BYTES).toString('utf8');
  const delivered = status === 200 && outcome.whole && body.toString('utf8').trim() === 'sent';
  let error: string | null = null;
  if (!delivered) {
    error =
      status !== 200
        ? `HTTP ${status}${status >= 300 && status < 400 ? ' (redirects are not followed)' : ''}; expected 200 with body "sent"`
        : 'HTTP 200 but the body is not "sent"';
  }
  return {
    delivered,
    http_status: status,
    response_excerpt: excerpt,
    latency_ms: latency(),
    error,
    ...(retryAfter !== undefined && { retry_after_ms: retryAfter }),
  };
}

/** Retry-After as delay-seconds or an HTTP date; undefined when absent or not one of those. */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) || !/[a-z]/i.test(text) ? undefined : Math.max(0, at - now);
}

function describeError(e: unknown, timedOut: boolean, timeoutMs: number): string {
  if (timedOut) return `timed out after ${timeoutMs} ms`;
  if (e instanceof CallbackRefusedError) return e.message;
  const err = e as { name?: string; code?: string; message?: string; cause?: unknown };
  if (err?.name === 'AbortError' || err?.code === 'ABORT_ERR') {
    const reason = (err.cause as Error | undefined)?.message;
    return `aborted${reason ? `: ${reason}` : ''}`;
  }
  const parts = [err?.code, err?.message].filter((p) => typeof p === 'string' && p !== '');
  const cause = err?.cause as { code?: string; message?: string } | undefined;
  if (cause?.message && cause.message !== err?.message)
    parts.push(`(${[cause.code, cause.message].filter(Boolean).join(' ')})`);
  const text = parts.length > 0 ? parts.join(': ').replace(/^([^:]+): \1/, '$1') : String(e);
  return text.trim().slice(0, MAX_ERROR_CHARS);
}
