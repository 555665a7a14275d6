import { Agent, request, type Dispatcher } from 'undici';

// The one way connectors call a provider: a whole answer (status, headers, body as text), or no
// answer with the reason. A timeout, a reset connection or a body cut short is no answer, and the
// connectors treat it as an unknown outcome, never as a refusal.

export type ProviderAnswer =
  | { kind: 'answer'; status: number; headers: Readonly<Record<string, string>>; body: string }
  | { kind: 'unknown'; reason: string };

export interface ProviderRequest {
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
}

/** An answer larger than this is not a provider's: refused unread. */
const MAX_ANSWER_BYTES = 1024 * 1024;

export class ProviderHttp {
  readonly dispatcher: Dispatcher;

  constructor(
    /** The whole call, connection to last byte. */
    private readonly timeoutMs: number,
    dispatcher?: Dispatcher,
  ) {
    this.dispatcher = dispatcher ?? new Agent({ keepAliveTimeout: 30_000, connections: 64, connect: { timeout: Math.min(timeoutMs, 5_000) } });
  }

  async send(url: string, req: ProviderRequest): Promise<ProviderAnswer> {
    // The whole call's deadline, cleared when the call ends: AbortSignal.timeout's timer would
    // outlive every call by the timeout, holding its signal, and fire to make an exception nobody reads.
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), this.timeoutMs);
    try {
      const res = await request(url, {
        method: req.method,
        headers: req.headers,
        ...(req.body !== undefined && { body: req.body }),
        dispatcher: this.dispatcher,
        signal: deadline.signal,
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
      });
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body) {
        size += (chunk as Buffer).length;
        if (size > MAX_ANSWER_BYTES) {
          res.body.destroy();
          return { kind: 'unknown', reason: `the answer is larger than ${MAX_ANSWER_BYTES} bytes` };
        }
        chunks.push(chunk as Buffer);
      }
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
      return { kind: 'answer', status: res.statusCode, headers, body: Buffer.concat(chunks).toString('utf8') };
    } catch (e) {
      const err = e as Error & { code?: string };
      const why = deadline.signal.aborted ? `no answer within ${this.timeoutMs} ms` : `${err.code ?? err.name}: ${err.message}`;
      return { kind: 'unknown', reason: why };
    } finally {
      clearTimeout(timer);
    }
  }

  close(): Promise<void> {
    return this.dispatcher.close();
  }
}

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
