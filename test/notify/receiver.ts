// A real merchant notification receiver on 127.0.0.1, port 0: records every request and answers
// as told — `sent`, another body or status, a redirect, hang (never answer), or drop the connection.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type Answer =
  'sent' | 'hang' | 'destroy' | { status?: number; body?: string; headers?: Record<string, string>; delayMs?: number };

export interface Received {
  n: number;
  path: string;
  headers: IncomingMessage['headers'];
  /** The raw body text, exactly as received. */
  body: string;
  fields: URLSearchParams;
  /** What the receiver did: 'sent' once a 200 `sent` response was fully written. */
  answered: string | null;
}

export class Receiver {
  readonly received: Received[] = [];
  /** Answers used in turn; when empty, `fallback` answers. */
  readonly answers: Answer[] = [];
  fallback: Answer | ((r: Received) => Answer) = 'sent';
  private readonly hanging = new Set<ServerResponse>();
  private readonly sockets = new Set<Socket>();
  private readonly listeners = new Set<() => void>();
  private open = 0;
  /** The most requests this receiver had open at the same moment. */
  maxOpen = 0;

  private constructor(
    private readonly server: Server,
    readonly url: string,
    private readonly nagle: boolean,
  ) {}

  /**
   * `nagle`: answers as Python's http.server does (the headers and the body in two sends, Nagle's
   * algorithm on): the body waits for the client's delayed ACK of the headers, about 40 ms an answer.
   */
  static async start(opts: { nagle?: boolean } = {}): Promise<Receiver> {
    const server = createServer({ noDelay: !opts.nagle });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const r = new Receiver(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`, opts.nagle ?? false);
    server.on('connection', (s) => {
      r.sockets.add(s);
      s.on('close', () => r.sockets.delete(s));
    });
    server.on('request', (req, res) => r.handle(req, res));
    return r;
  }

  get port(): number {
    return Number(new URL(this.url).port);
  }

  /** Requests open and not yet answered. */
  get openNow(): number {
    return this.open;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    this.open++;
    this.maxOpen = Math.max(this.maxOpen, this.open);
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      this.open--;
    };
    res.on('close', finish);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const rec: Received = {
        n: this.received.length + 1,
        path: req.url ?? '',
        headers: req.headers,
        body,
        fields: new URLSearchParams(body),
        answered: null,
      };
      this.received.push(rec);
      const next = this.answers.shift();
      const answer = next ?? (typeof this.fallback === 'function' ? this.fallback(rec) : this.fallback);
      if (answer === 'hang') {
        rec.answered = 'hang';
        this.hanging.add(res);
      } else if (answer === 'destroy') {
        rec.answered = 'destroy';
        req.socket.destroy();
      } else {
        const { status = 200, body: text = 'sent', headers = {}, delayMs = 0 } = answer === 'sent' ? {} : answer;
        const respond = () => {
          if (res.destroyed) return;
          const ended = () => {
            rec.answered = status === 200 && text.trim() === 'sent' ? 'sent' : `${status} ${text.slice(0, 40)}`;
            this.changed();
          };
          if (this.nagle) {
            res.writeHead(status, {
              'content-type': 'text/plain',
              'content-length': String(Buffer.byteLength(text)),
              ...headers,
            });
            res.flushHeaders();
            setImmediate(() => res.end(text, ended));
          } else {
            res.writeHead(status, { 'content-type': 'text/plain', ...headers });
            res.end(text, ended);
          }
        };
        if (delayMs > 0) setTimeout(respond, delayMs);
        else respond();
      }
      this.changed();
    });
  }

  private changed(): void {
    for (const l of this.listeners) l();
  }

  /** Resolves once `pred` holds (checked on every request and answer); rejects after timeoutMs. */
  waitFor(pred: (received: Received[]) => boolean, what: string, timeoutMs = 10_000): Promise<Received[]> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!pred(this.received)) return;
        cleanup();
        resolve(this.received);
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(
          new Error(
            `receiver: timed out after ${timeoutMs} ms waiting for ${what}; got ${this.received.length} requests: ${this.received.map((r) => `${r.fields.get('merchant_reference')}:${r.answered}`).join(', ')}`,
          ),
        );
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        this.listeners.delete(check);
      };
      this.listeners.add(check);
      check();
    });
  }

  /** Requests for one notification (by webhook-id). */
  byEvent(event_id: string): Received[] {
    return this.received.filter((r) => r.headers['webhook-id'] === event_id);
  }

  /** The first notification of an order, once it has come. */
  async first(ref: string, timeoutMs = 10_000): Promise<Received> {
    await this.waitFor(
      (all) => all.some((r) => r.fields.get('merchant_reference') === ref),
      `a notification of ${ref}`,
      timeoutMs,
    );
    return this.byReference(ref)[0];
  }

  byReference(ref: string): Received[] {
    return this.received.filter((r) => r.fields.get('merchant_reference') === ref);
  }

  /** Ends every hanging request by dropping its connection. */
  releaseHanging(): void {
    for (const res of this.hanging) res.socket?.destroy();
    this.hanging.clear();
  }

  async close(): Promise<void> {
    this.releaseHanging();
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
