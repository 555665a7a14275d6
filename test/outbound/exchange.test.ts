// One HTTP exchange read whole (src/outbound/exchange.ts), the edges its two callers' tests
// (test/channels/provider-http.test.ts, test/notify/send-notification.test.ts) do not reach.
import type { Dispatcher } from 'undici';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exchange } from '../../src/outbound/exchange.js';
import { startLocalServer } from '../support/local-server.js';

describe('an outbound exchange', () => {
  let server: Awaited<ReturnType<typeof startLocalServer>>;
  const seen: string[] = [];
  const agent = new Agent();
  beforeAll(async () => {
    server = await startLocalServer((rq, res) => {
      seen.push(rq.url ?? '');
      if (rq.url === '/long-and-close') {
        // The whole answer, over the bound, in one write, on a connection that closes after it.
        return res.writeHead(200, { connection: 'close', 'content-type': 'text/plain' }).end('x'.repeat(4096));
      }
      res.end('ok');
    });
  });
  afterAll(async () => {
    await server.close();
    await agent.close();
  });

  it('stops at the bound when the answer and its end come in one read, and the next exchange still works', async () => {
    const outcome = await exchange(
      agent,
      new URL(`${server.url}/long-and-close`),
      { method: 'GET', headers: {} },
      { timeoutMs: 2_000, maxBytes: 100 },
    );
    expect(outcome).toMatchObject({ kind: 'answer', status: 200, whole: false });
    expect(outcome.kind === 'answer' && outcome.body.length).toBeGreaterThan(100);
    expect(
      await exchange(
        agent,
        new URL(`${server.url}/ok`),
        { method: 'GET', headers: {} },
        { timeoutMs: 2_000, maxBytes: 100 },
      ),
    ).toMatchObject({ kind: 'answer', status: 200, whole: true });
  });

  it('sends nothing when the signal has already aborted', async () => {
    const stopping = new AbortController();
    stopping.abort(new Error('the worker stops'));
    const outcome = await exchange(
      agent,
      new URL(`${server.url}/never`),
      { method: 'POST', headers: {}, body: 'x' },
      { timeoutMs: 2_000, maxBytes: 100, signal: stopping.signal },
    );
    expect(outcome).toMatchObject({ kind: 'failed', why: 'aborted', status: null });
    expect(outcome.kind === 'failed' && (outcome.error as Error).message).toBe('the worker stops');
    await new Promise((r) => setTimeout(r, 50));
    expect(seen).not.toContain('/never');
  });

  it("takes undici's own header and body timeouts, which may fire a little before the deadline, for the deadline", async () => {
    for (const code of ['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_SOCKET']) {
      const failing = {
        dispatch(_opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler) {
          setImmediate(() => handler.onResponseError?.(undefined as never, Object.assign(new Error(code), { code })));
          return true;
        },
      } as unknown as Dispatcher;
      const outcome = await exchange(
        failing,
        new URL('http://127.0.0.1:9/x'),
        { method: 'GET', headers: {} },
        { timeoutMs: 2_000, maxBytes: 100 },
      );
      expect(outcome).toMatchObject({ kind: 'failed', why: code === 'UND_ERR_SOCKET' ? 'error' : 'timeout' });
    }
  });
});
