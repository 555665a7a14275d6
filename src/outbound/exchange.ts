import type { Dispatcher } from 'undici';

// One HTTP exchange read whole, the gateway's only way out: calls to providers (connectors/http.ts)
// and notifications to merchants (notify/send-notification.ts). Straight on undici's dispatcher:
// undici's request() would add a stream, an abort signal and their listeners to every exchange,
// all alive through the other side's wait (a provider takes hundreds of milliseconds) and so
// carried into V8's old generation, whose collections pause the gateway. An answer we wait for is
// small and wanted whole, so none of that serves us.

export interface Exchange {
  method: 'GET' | 'POST' | 'DELETE';
  headers: Readonly<Record<string, string>>;
  body?: string | null;
}

export interface ExchangeLimits {
  /** The whole exchange: the wait for a connection, connecting, the request, the last byte. */
  timeoutMs: number;
  /** An answer longer than this is not read further. */
  maxBytes: number;
  /** Ends the exchange early (the gateway stopping). */
  signal?: AbortSignal;
}

export type ExchangeOutcome =
  | {
      kind: 'answer';
      status: number;
      /** By lower-case name; a repeated header's values joined with ", ". */
      headers: Readonly<Record<string, string>>;
      /** The answer, or its first bytes past maxBytes when `whole` is false. */
      body: Buffer;
      whole: boolean;
    }
  | {
      kind: 'failed';
      /** timeout: the deadline; aborted: the caller's signal (error is its reason); error: the network or the peer. */
      why: 'timeout' | 'aborted' | 'error';
      error: unknown;
      /** The answer's status if it had begun. */
      status: number | null;
    };

/** Never rejects: every failure is an outcome. */
export function exchange(
  dispatcher: Dispatcher,
  url: URL,
  req: Exchange,
  limits: ExchangeLimits,
): Promise<ExchangeOutcome> {
  return new Promise((resolve) => {
    const handler = new ExchangeHandler(resolve, limits);
    if (handler.settled) return; // the signal had already aborted
    dispatcher.dispatch(
      {
        origin: url.origin,
        path: url.pathname + url.search,
        method: req.method,
        headers: req.headers,
        body: req.body ?? null,
        headersTimeout: limits.timeoutMs,
        bodyTimeout: limits.timeoutMs,
      },
      handler,
    );
  });
}

class ExchangeHandler implements Dispatcher.DispatchHandler {
  settled = false;
  private controller: Dispatcher.DispatchController | undefined;
  private status: number | null = null;
  private headers: Record<string, string> = {};
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private timer: NodeJS.Timeout | undefined;
  private onAbort: (() => void) | undefined;

  constructor(
    private readonly resolve: (outcome: ExchangeOutcome) => void,
    private readonly limits: ExchangeLimits,
  ) {
    const { signal } = limits;
    if (signal?.aborted) {
      this.settle({ kind: 'failed', why: 'aborted', error: signal.reason, status: null });
      return;
    }
    this.timer = setTimeout(
      () => this.fail('timeout', new Error(`no answer within ${limits.timeoutMs} ms`)),
      limits.timeoutMs,
    );
    if (signal) {
      this.onAbort = () => this.fail('aborted', signal.reason);
      signal.addEventListener('abort', this.onAbort, { once: true });
    }
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    // Given up while it waited for a connection: it goes no further.
    if (this.settled) controller.abort(new Error('the exchange was given up'));
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    if (statusCode < 200) return; // 100 Continue and the like: the answer is still to come
    this.status = statusCode;
    const flat: Record<string, string> = {};
    for (const [k, v] of Object.entries(headers))
      if (v !== undefined) flat[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
    this.headers = flat;
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    this.chunks.push(chunk);
    this.size += chunk.length;
    if (this.size > this.limits.maxBytes) {
      this.answer(false);
      // Not from inside undici's parser callback: if the message ends in the same read, undici
      // would go on to complete a request already aborted.
      controller.pause();
      queueMicrotask(() => controller.abort(new Error(`the answer is longer than ${this.limits.maxBytes} bytes`)));
    }
  }

  onResponseEnd(): void {
    this.answer(true);
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, error: Error): void {
    // undici's own header and body timeouts (set to the deadline as a backstop) run on coarser
    // timers and may fire a little before ours: the same deadline, said the same way.
    const code = (error as { code?: unknown }).code;
    const why = code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' ? 'timeout' : 'error';
    this.settle({ kind: 'failed', why, error, status: this.status });
  }

  private answer(whole: boolean): void {
    if (this.settled) return; // the end of an answer given up on (its chunks are let go)
    this.settle({
      kind: 'answer',
      status: this.status ?? 0,
      headers: this.headers,
      body: Buffer.concat(this.chunks, this.size),
      whole,
    });
  }

  private fail(why: 'timeout' | 'aborted', error: unknown): void {
    if (this.settled) return;
    this.settle({ kind: 'failed', why, error, status: this.status });
    this.controller?.abort(error instanceof Error ? error : new Error(String(error)));
  }

  private settle(outcome: ExchangeOutcome): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    if (this.onAbort) this.limits.signal?.removeEventListener('abort', this.onAbort);
    this.chunks.length = 0;
    this.resolve(outcome);
  }
}
