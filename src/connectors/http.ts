import { Agent, type Dispatcher } from 'undici';
import { exchange } from '../outbound/exchange.js';

// The one way connectors call a provider: a whole answer (status, headers, body as text), or no
// answer with the reason. A timeout, a reset connection or a body cut short is no answer, and the
// connectors treat it as an unknown outcome, never as a refusal.

export type ProviderAnswer =
  | { kind: 'answer'; status: number; headers: Readonly<Record<string, string>>; body: string }
  | { kind: 'unknown'; reason: string };

export interface ProviderRequest {
  method: 'GET' | 'POST' | 'DELETE';
  headers: Record<string, string>;
  body?: string;
}

/** An answer larger than this is not a provider's: refused unread. */
const MAX_ANSWER_BYTES = 1024 * 1024;

/**
 * Open connections to one provider's host, at most; calls beyond them wait for one. A hosted
 * page's provider is called twice per order (the payment opened, then its notification checked),
 * each call a provider's round trip long (a few hundred ms from New Zealand to Asia): at 64 the
 * calls of a busy minute queued inside the gateway (docs/decisions.md).
 */
const CONNECTIONS_PER_PROVIDER = 128;

export class ProviderHttp {
  readonly dispatcher: Dispatcher;

  constructor(
    /** The whole call, connection to last byte. */
    private readonly timeoutMs: number,
    dispatcher?: Dispatcher,
  ) {
    this.dispatcher =
      dispatcher ??
      new Agent({
        keepAliveTimeout: 30_000,
        connections: CONNECTIONS_PER_PROVIDER,
        connect: { timeout: Math.min(timeoutMs, 5_000) },
      });
  }

  async send(url: string, req: ProviderRequest): Promise<ProviderAnswer> {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      // Not the URL itself in the reason: its query may carry a secret (WeChat's OAuth call does).
      return { kind: 'unknown', reason: 'the endpoint is not a URL' };
    }
    const outcome = await exchange(this.dispatcher, target, req, {
      timeoutMs: this.timeoutMs,
      maxBytes: MAX_ANSWER_BYTES,
    });
    if (outcome.kind === 'answer') {
      if (!outcome.whole) return { kind: 'unknown', reason: `the answer is larger than ${MAX_ANSWER_BYTES} bytes` };
      return { kind: 'answer', status: outcome.status, headers: outcome.headers, body: outcome.body.toString('utf8') };
    }
    if (outcome.why === 'timeout') return { kind: 'unknown', reason: `no answer within ${this.timeoutMs} ms` };
    const err = outcome.error as Error & { code?: string };
    return { kind: 'unknown', reason: `${err.code ?? err.name}: ${err.message}` };
  }

  /**
   * A file a provider serves (a statement): its bytes, up to `maxBytes`, within `timeoutMs` (a
   * file takes longer than a call).
   */
  async download(
    url: string,
    headers: Record<string, string>,
    limits: { maxBytes: number; timeoutMs: number },
  ): Promise<
    | { kind: 'file'; status: number; headers: Readonly<Record<string, string>>; bytes: Buffer }
    | { kind: 'unknown'; reason: string }
  > {
    if (!URL.canParse(url)) return { kind: 'unknown', reason: 'the address is not a URL' };
    const outcome = await exchange(this.dispatcher, new URL(url), { method: 'GET', headers }, limits);
    if (outcome.kind === 'answer') {
      if (!outcome.whole) return { kind: 'unknown', reason: `the file is larger than ${limits.maxBytes} bytes` };
      return { kind: 'file', status: outcome.status, headers: outcome.headers, bytes: outcome.body };
    }
    if (outcome.why === 'timeout')
      return { kind: 'unknown', reason: `the file did not arrive within ${limits.timeoutMs} ms` };
    const err = outcome.error as Error & { code?: string };
    return { kind: 'unknown', reason: `${err.code ?? err.name}: ${err.message}` };
  }

  close(): Promise<void> {
    return this.dispatcher.close();
  }
}

/** The largest statement file read, and how long its download may take. */
export const STATEMENT_DOWNLOAD = { maxBytes: 128 * 1024 * 1024, timeoutMs: 120_000 };

/** Whether the URL names this machine (127.0.0.1, localhost, [::1]). */
export function isLocalAddress(url: string): boolean {
  return URL.canParse(url) && ['127.0.0.1', 'localhost', '[::1]'].includes(new URL(url).hostname);
}

/** A provider endpoint must be https, but for the machine itself (a local fake, a tunnel). */
export function checkEndpoint(url: string): string | undefined {
  if (!URL.canParse(url)) return `endpoint ${url} is not a URL`;
  const u = new URL(url);
  if (u.protocol === 'https:') return undefined;
  if (u.protocol === 'http:' && isLocalAddress(url)) return undefined;
  return `endpoint ${url} must be https (http only for 127.0.0.1 or localhost)`;
}
