// The one way connectors call a provider (src/connectors/http.ts): a whole answer, or an unknown
// outcome with its reason, against a real HTTP server that answers late or never.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent } from 'undici';
import { ProviderHttp } from '../../src/connectors/http.js';
import { exchange } from '../../src/outbound/exchange.js';
import { startLocalServer } from '../support/local-server.js';

describe('a call to a provider', () => {
  let server: Awaited<ReturnType<typeof startLocalServer>>;
  let url: string;
  const http = new ProviderHttp(150);
  const seen: string[] = [];
  beforeAll(async () => {
    server = await startLocalServer((rq, res) => {
      seen.push(rq.url ?? '');
      if (rq.url === '/hang') return;
      if (rq.url === '/large') {
        res.writeHead(200, { 'content-type': 'application/json' });
        const block = Buffer.alloc(64 * 1024, 'a');
        for (let i = 0; i < 20; i++) res.write(block); // 1.25 MB, over the bound
        return res.end();
      }
      if (rq.url === '/reset') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
        res.write('{"cut":');
        setTimeout(() => rq.socket.destroy(), 10);
        return;
      }
      if (rq.url === '/headers') {
        res.setHeader('X-Twice', ['a', 'b']);
        res.setHeader('Wechatpay-Serial', 'PUB_KEY_ID_1');
        return res.writeHead(404).end('no');
      }
      if (rq.url === '/stall') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"partial":');
        return; // the body never ends
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    url = server.url;
  });
  afterAll(async () => {
    await server.close();
    await http.close();
  });

  it('returns the whole answer', async () => {
    expect(await http.send(`${url}/ok`, { method: 'POST', headers: {}, body: '{}' })).toMatchObject({
      kind: 'answer',
      status: 200,
      body: '{"ok":true}',
    });
  });

  it('is unknown, never a refusal, when no answer comes within the timeout', async () => {
    expect(await http.send(`${url}/hang`, { method: 'POST', headers: {}, body: '{}' })).toEqual({
      kind: 'unknown',
      reason: 'no answer within 150 ms',
    });
  });

  it('is unknown when the answer starts but its body does not end within the timeout', async () => {
    const answer = await http.send(`${url}/stall`, { method: 'GET', headers: {} });
    expect(answer.kind).toBe('unknown');
  });

  it('is unknown when the answer is larger than a provider would send, and stops reading it', async () => {
    expect(await http.send(`${url}/large`, { method: 'GET', headers: {} })).toEqual({
      kind: 'unknown',
      reason: 'the answer is larger than 1048576 bytes',
    });
  });

  it('is unknown when the connection is cut before the body ends', async () => {
    const answer = await http.send(`${url}/reset`, { method: 'GET', headers: {} });
    expect(answer.kind).toBe('unknown');
    expect(answer.kind === 'unknown' && answer.reason).toMatch(/UND_ERR_SOCKET|ECONNRESET|closed/i);
  });

  it('is unknown when nothing listens', async () => {
    const closed = await startLocalServer(() => undefined);
    await closed.close();
    const answer = await http.send(`${closed.url}/ok`, { method: 'GET', headers: {} });
    expect(answer).toMatchObject({ kind: 'unknown', reason: expect.stringMatching(/ECONNREFUSED/) });
  });

  it('gives every header by its lower-case name, repeated ones joined, with an error status as an answer', async () => {
    const answer = await http.send(`${url}/headers`, { method: 'GET', headers: {} });
    expect(answer).toMatchObject({
      kind: 'answer',
      status: 404,
      body: 'no',
      headers: { 'x-twice': 'a, b', 'wechatpay-serial': 'PUB_KEY_ID_1' },
    });
  });

  it('counts the wait for a connection in the deadline, and never sends a call it gave up', async () => {
    const agent = new Agent({ connections: 1 });
    const one = new ProviderHttp(150, agent);
    try {
      // The one connection is held by a longer exchange, which ends (and frees it) well after the
      // queued call has given up: that call must then not go out.
      const holder = exchange(
        agent,
        new URL(`${url}/hang`),
        { method: 'GET', headers: {} },
        { timeoutMs: 600, maxBytes: 1024 },
      );
      await new Promise((r) => setTimeout(r, 20));
      const started = Date.now();
      const queued = await one.send(`${url}/queued`, { method: 'GET', headers: {} });
      expect(Date.now() - started).toBeLessThan(1000);
      expect(queued).toEqual({ kind: 'unknown', reason: 'no answer within 150 ms' });
      expect(await holder).toMatchObject({ kind: 'failed', why: 'timeout' });
      await new Promise((r) => setTimeout(r, 200));
      expect(seen).not.toContain('/queued');
    } finally {
      await one.close();
    }
  });
});
