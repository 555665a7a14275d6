// One attempt's deadline and its caller's signal (src/notify/send-notification.ts), against a real
// HTTP server that holds some requests unanswered.
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendNotification } from '../../src/notify/send-notification.js';
import { startLocalServer } from '../support/local-server.js';

const req = { body: 'order_id=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } };

describe('a notification attempt', () => {
  let server: Awaited<ReturnType<typeof startLocalServer>>;
  let url: string;
  const agent = new Agent();
  beforeAll(async () => {
    server = await startLocalServer((rq, res) => {
      if (rq.url === '/hang') return; // never answered
      if (rq.url === '/long') {
        // "sent", then more than an acknowledgement can be, and a body that never ends
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('sent');
        res.write(' '.repeat(20 * 1024));
        return;
      }
      res.end('sent');
    });
    url = server.url;
  });
  afterAll(async () => {
    await server.close();
    await agent.close();
  });

  it('is delivered when the merchant answers sent', async () => {
    expect(await sendNotification(agent, `${url}/ok`, req, { timeoutMs: 5_000 })).toMatchObject({
      delivered: true,
      http_status: 200,
      error: null,
    });
  });

  it('ends at its deadline, saying so', async () => {
    const outcome = await sendNotification(agent, `${url}/hang`, req, { timeoutMs: 150 });
    expect(outcome).toMatchObject({ delivered: false, http_status: null, error: 'timed out after 150 ms' });
    expect(outcome.latency_ms).toBeGreaterThanOrEqual(140);
  });

  it("ends when its caller's signal aborts, already or meanwhile, saying so", async () => {
    const stopping = new AbortController();
    const attempt = sendNotification(agent, `${url}/hang`, req, { timeoutMs: 60_000, signal: stopping.signal });
    setTimeout(() => stopping.abort(new Error('the worker stops')), 50);
    expect(await attempt).toMatchObject({ delivered: false, error: expect.stringMatching(/stops|abort/i) });
    expect(
      (await sendNotification(agent, `${url}/hang`, req, { timeoutMs: 60_000, signal: stopping.signal })).error,
    ).toMatch(/stops|abort/i);
    // The signal is not held by attempts that have ended: one more attempt on it is delivered.
    expect(
      await sendNotification(agent, `${url}/ok`, req, { timeoutMs: 5_000, signal: new AbortController().signal }),
    ).toMatchObject({ delivered: true });
  });

  it('reads no further than an acknowledgement can be long, and takes a long answer for no acknowledgement', async () => {
    const outcome = await sendNotification(agent, `${url}/long`, req, { timeoutMs: 5_000 });
    expect(outcome).toMatchObject({ delivered: false, http_status: 200, error: 'HTTP 200 but the body is not "sent"' });
    expect(outcome.response_excerpt).toBe(`sent${' '.repeat(196)}`);
    expect(outcome.latency_ms).toBeLessThan(5_000);
  });
});
