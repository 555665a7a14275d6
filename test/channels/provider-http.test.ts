// The one way connectors call a provider (src/connectors/http.ts): a whole answer, or an unknown
// outcome with its reason, against a real HTTP server that answers late or never.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderHttp } from '../../src/connectors/http.js';
import { startLocalServer } from '../support/local-server.js';

describe('a call to a provider', () => {
  let server: Awaited<ReturnType<typeof startLocalServer>>;
  let url: string;
  const http = new ProviderHttp(150);
  beforeAll(async () => {
    server = await startLocalServer((rq, res) => {
      if (rq.url === '/hang') return;
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
    expect(await http.send(`${url}/ok`, { method: 'POST', headers: {}, body: '{}' })).toMatchObject({ kind: 'answer', status: 200, body: '{"ok":true}' });
  });

  it('is unknown, never a refusal, when no answer comes within the timeout', async () => {
    expect(await http.send(`${url}/hang`, { method: 'POST', headers: {}, body: '{}' })).toEqual({ kind: 'unknown', reason: 'no answer within 150 ms' });
  });

  it('is unknown when the answer starts but its body does not end within the timeout', async () => {
    const answer = await http.send(`${url}/stall`, { method: 'GET', headers: {} });
    expect(answer.kind).toBe('unknown');
  });
});
