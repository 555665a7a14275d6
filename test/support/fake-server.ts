// What the fake providers share: a real HTTP server on 127.0.0.1, the faults a test can ask for,
// RSA key pairs (made once per test process), and sending a notification to the gateway.
import { AsyncLocalStorage } from 'node:async_hooks';
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * How the next matching call fails: `timeout` never answers, `http-500` answers 500, without doing
 * anything; the `-after` kinds do the work first (the refund is made, the order closed) and then
 * never answer, answer 500, or drop the connection: the outcome the gateway must not guess.
 */
export type Fault =
  'timeout' | 'http-500' | 'timeout-after' | 'http-500-after' | 'reset-after' | { business: string; message?: string };

export interface KeyPair {
  privateKey: string;
  publicKey: string;
}

const pairs: KeyPair[] = [];
/** The n-th RSA 2048 key pair of this process (made on first use: they take a moment). */
export function keyPair(n: number): KeyPair {
  while (pairs.length <= n) {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    pairs.push({ privateKey, publicKey });
  }
  return pairs[n];
}

const parsed = new Map<string, KeyObject>();
/** The parsed key of a PEM, kept: parsing costs more than the signature (it matters to the bench). */
export function keyOf(pem: string): KeyObject {
  let key = parsed.get(pem);
  if (!key) {
    key = pem.includes('PRIVATE') ? createPrivateKey(pem) : createPublicKey(pem);
    parsed.set(pem, key);
  }
  return key;
}

export interface RawRequest {
  method: string;
  url: URL;
  headers: IncomingMessage['headers'];
  body: string;
}

export abstract class FakeServer {
  protected server!: Server;
  url = '';
  private readonly sockets = new Set<Socket>();
  private readonly faults: Array<{ op: string; fault: Fault }> = [];
  /** Every call the gateway made, by operation name, in order. */
  readonly calls: string[] = [];
  /** Every answer leaves this long after its request came (the bench's provider far away), unless making it took longer. */
  answerDelayMs = 0;
  /** Told of every payment opened (an order or trade made), by its out_trade_no. */
  onOpened?: (out_trade_no: string) => void;
  /**
   * Told, for every call that opened a payment, how long it was here: from its request's arrival to
   * its answer's end, the provider's own time (the bench takes it from the merchant's wait).
   */
  onHeld?: (out_trade_no: string, heldMs: number) => void;
  /**
   * Told, for every call that asked about a payment (a query, the check of a notification), how long
   * it was here, as onHeld: the bench takes it from a notification's round trip.
   */
  onAsked?: (out_trade_no: string, heldMs: number) => void;

  /** The fakes report a payment they opened here, inside the call that opened it. */
  protected opened(out_trade_no: string): void {
    const call = currentCall.getStore();
    if (call) call.opened = out_trade_no;
    this.onOpened?.(out_trade_no);
  }

  /** The fakes report the payment a call asked about here, inside that call. */
  protected asked(out_trade_no: string): void {
    const call = currentCall.getStore();
    if (call) call.asked = out_trade_no;
  }

  protected async listen(): Promise<void> {
    this.server = createServer((req, res) => void this.receive(req, res));
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The next call of `op` (e.g. 'alipay.trade.refund', 'refund') fails as `fault`. */
  fail(op: string, fault: Fault): void {
    this.faults.push({ op, fault });
  }

  /** Forgets the faults not used yet. */
  clearFaults(): void {
    this.faults.length = 0;
  }

  protected takeFault(op: string): Fault | undefined {
    const i = this.faults.findIndex((f) => f.op === op);
    return i === -1 ? undefined : this.faults.splice(i, 1)[0].fault;
  }

  /** Answers as the fault says, after `work` for the -after kinds; true when the fault answered. */
  protected async applyFault(fault: Fault | undefined, res: ServerResponse, work: () => void): Promise<boolean> {
    if (fault === undefined || typeof fault === 'object') return false;
    if (fault.endsWith('-after')) work();
    if (fault.startsWith('timeout')) return true; // never answered: the socket is destroyed at close
    if (fault.startsWith('http-500')) {
      res
        .writeHead(500, { 'content-type': 'application/json' })
        .end('{"code":"SYSTEM_ERROR","message":"system error"}');
      return true;
    }
    res.socket?.destroy();
    return true;
  }

  private async receive(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const call: Call = { arrived: performance.now() };
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw: RawRequest = {
      method: req.method ?? 'GET',
      url: new URL(req.url ?? '/', this.url),
      headers: req.headers,
      body: Buffer.concat(chunks).toString('utf8'),
    };
    // The provider's own pages are opened in a browser, which asks for an icon: not an API call.
    if (raw.url.pathname === '/favicon.ico') return void res.writeHead(404).end();
    // Reported when the answer really ends: after the delay (the delay's end calls this one's).
    if (this.onHeld || this.onAsked) reportHeld(res, call, this.onHeld, this.onAsked);
    if (this.answerDelayMs > 0) delayAnswer(res, performance.now() + this.answerDelayMs);
    try {
      await currentCall.run(call, () => this.handle(raw, res));
    } catch (e) {
      if (!res.headersSent)
        res.writeHead(599, { 'content-type': 'text/plain' }).end(`fake failed: ${(e as Error).stack}`);
    }
  }

  protected abstract handle(req: RawRequest, res: ServerResponse): Promise<void>;

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

interface Call {
  arrived: number;
  opened?: string;
  asked?: string;
}
const currentCall = new AsyncLocalStorage<Call>();

type Report = (out_trade_no: string, heldMs: number) => void;

function reportHeld(res: ServerResponse, call: Call, held?: Report, asked?: Report): void {
  const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
  res.end = ((...args: unknown[]) => {
    if (call.opened !== undefined) held?.(call.opened, performance.now() - call.arrived);
    if (call.asked !== undefined) asked?.(call.asked, performance.now() - call.arrived);
    return end(...args);
  }) as ServerResponse['end'];
}

function delayAnswer(res: ServerResponse, due: number): void {
  const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
  res.end = ((...args: unknown[]) => {
    const wait = due - performance.now();
    if (wait <= 0) return end(...args);
    setTimeout(() => end(...args), wait);
    return res;
  }) as ServerResponse['end'];
}

/** POSTs a notification to the gateway as a provider does; the gateway's answer. */
export async function deliver(
  url: string,
  body: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: string }> {
  const res = await fetch(url, { method: 'POST', headers, body });
  return { status: res.status, body: await res.text() };
}
