// Body shapes on every POST endpoint (not JSON, arrays, empty, content types, size), unknown
// paths, and a run of garbage requests after which the server still answers correctly.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signRequest } from '../../sdk/signing.js';
import { cancelBody, jsonWithNumbers, rawPost, refundBody, rowCounts } from '../support/api.js';
import { buildApp, REQUEST_TIMEOUT_MS } from '../../src/http/app.js';
import { ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';

const ENDPOINTS = ['/v2/transaction', '/refund', '/v2/refund', '/cancel', '/v2/cancel'];

const BAD_BODIES: Array<[string, string | undefined, string | null]> = [
  ['not JSON', 'this is not json', 'application/json'],
  ['truncated JSON', '{"user_id":"U1",', 'application/json'],
  ['a JSON array', '[{"user_id":"U1"}]', 'application/json'],
  ['a JSON string', '"user_id"', 'application/json'],
  ['a JSON number', '120.00', 'application/json'],
  ['JSON null', 'null', 'application/json'],
  ['an empty JSON body', '', 'application/json'],
  ['an empty text/plain body', '', 'text/plain'],
  ['no body and no content type', undefined, null],
  ['a text/plain array', '[1,2]', 'text/plain'],
  ['XML', '<refund/>', 'application/xml'],
  ['a NUL byte', '{"user_id":"U\u00001"}', 'application/json'],
  ['a NUL escaped in a field name', String.raw`{"user\u0000id":"U1"}`, 'application/json'],
  ['a NUL escaped in a nested field name', String.raw`{"user_id":"U1","extra":{"a\u0000":"b"}}`, 'application/json'],
  ['a __proto__ field', '{"__proto__":{"user_id":"U1"}}', 'application/json'],
  ['more than 64 KiB', JSON.stringify({ product_name: 'x'.repeat(70 * 1024) }), 'application/json'],
  ['values nested 30,000 deep', `{"user_id":${'['.repeat(30_000)}${']'.repeat(30_000)}}`, 'application/json'],
];

describe.each(ENGINES)('request bodies on %s', (engine) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(engine);
  });
  afterAll(async () => gw?.close());

  const cases = ENDPOINTS.flatMap((path) => BAD_BODIES.map(([what, body, type]) => [path, what, body, type] as const));
  it.each(cases)('%s with %s answers code 3 as HTTP 200 JSON', async (path, _what, body, type) => {
    const before = await rowCounts(gw);
    const res = await rawPost(gw, path, body, type);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ code: 3, message: 'data error', detail: expect.any(String) });
    expect(await rowCounts(gw)).toEqual(before);
  });

  it('text/plain and form-encoded bodies are read on refund and cancel too', async () => {
    const { order_id } = await gw.create();
    await gw.pay(order_id);
    const plain = await rawPost(
      gw,
      '/refund',
      JSON.stringify(refundBody(gw, order_id, '1.00', 'plain')),
      'text/plain;charset=UTF-8',
    );
    expect(plain.json).toMatchObject({ code: 0 });
    const form = await rawPost(
      gw,
      '/refund',
      new URLSearchParams(refundBody(gw, order_id, '1.00', 'form')).toString(),
      'application/x-www-form-urlencoded',
    );
    expect(form.json).toMatchObject({ code: 0 });
    const pending = await gw.create();
    const cancel = await rawPost(
      gw,
      '/cancel',
      new URLSearchParams(cancelBody(gw, pending.merchant_reference)).toString(),
      'application/x-www-form-urlencoded',
    );
    expect(cancel.json).toMatchObject({ code: 0 });
  });

  it('a JSON body sent with no content type, a form content type or another type is read as JSON', async () => {
    const { order_id } = await gw.create();
    await gw.pay(order_id);
    // Python's requests with data=json.dumps(...) sends no Content-Type; PHP's curl and Java's
    // HttpURLConnection send the form type unless told otherwise.
    for (const [what, type] of [
      ['none', null],
      ['form', 'application/x-www-form-urlencoded'],
      ['octet', 'application/octet-stream'],
    ] as const) {
      const create = await rawPost(gw, '/v2/transaction', JSON.stringify(gw.createBody()), type);
      expect(create.json, `create, content type ${what}`).toMatchObject({ code: 0, message: 'SUCCESS' });
      const refund = await rawPost(
        gw,
        '/refund',
        JSON.stringify(refundBody(gw, order_id, '1.00', `type-${what}`)),
        type,
      );
      expect(refund.json, `refund, content type ${what}`).toMatchObject({ code: 0 });
      const pending = await gw.create();
      const cancel = await rawPost(
        gw,
        '/cancel',
        `\n ${JSON.stringify(cancelBody(gw, pending.merchant_reference))}`,
        type,
      );
      expect(cancel.json, `cancel, content type ${what}`).toMatchObject({ code: 0, message: 'success' });
    }
    // A JSON number keeps its text there too.
    const numbers = jsonWithNumbers(gw.createBody({ amount: '120.00' }), { amount: '120.00' });
    expect((await rawPost(gw, '/v2/transaction', numbers, 'application/x-www-form-urlencoded')).json).toMatchObject({
      code: 0,
    });
  });

  it('a JSON body that starts with a UTF-8 byte order mark is read without it', async () => {
    // .NET's StreamWriter with Encoding.UTF8 writes the mark before the JSON.
    const res = await rawPost(gw, '/v2/transaction', `\ufeff${JSON.stringify(gw.createBody())}`);
    expect(res.json).toMatchObject({ code: 0, message: 'SUCCESS' });
  });

  it('a body that is not UTF-8 answers 3 saying so, not 206', async () => {
    const before = await rowCounts(gw);
    // Bytes of a GBK-encoded product name: a client that does not send UTF-8.
    const [head, tail] = JSON.stringify(gw.createBody({ product_name: 'XX' })).split('XX') as [string, string];
    const body = Buffer.concat([Buffer.from(head), Buffer.from([0xc6, 0xcf, 0xcc, 0xd1]), Buffer.from(tail)]);
    for (const type of ['application/json;charset=UTF-8', 'text/plain']) {
      const res = await fetch(`${gw.url}/v2/transaction`, { method: 'POST', headers: { 'content-type': type }, body });
      expect(res.status).toBe(200);
      expect(await res.json(), type).toMatchObject({
        code: 3,
        message: 'data error',
        detail: expect.stringMatching(/UTF-8/),
      });
    }
    expect(await rowCounts(gw)).toEqual(before);
  });

  it('a form body with a repeated field answers 207', async () => {
    const body = new URLSearchParams(gw.createBody());
    body.append('amount', '1.00');
    const res = await rawPost(gw, '/v2/transaction', body.toString(), 'application/x-www-form-urlencoded');
    expect(res.json).toMatchObject({ code: 207 });
  });

  it('a NUL in a path or query value answers 3, on PostgreSQL too', async () => {
    const sig = 'a'.repeat(64);
    for (const path of [
      '/v2/merchanthosted/gatewaydata/%00',
      `/v2/transaction/abc?user_id=U%00&signature=${sig}`,
      '/sandbox/pay/%00',
      '/v2/checkout/a%00',
    ]) {
      const res = await fetch(gw.url + path);
      expect(await res.json(), path).toMatchObject({ code: 3 });
    }
  });

  it('a NUL in the sandbox form fields is refused, not stored', async () => {
    const { order_id } = await gw.create({ payment_method: 'payid' });
    for (const body of ['result=rejected&message=a%00b&msgId=x', 'result=rejected&message=m&msgId=%00']) {
      const res = await fetch(`${gw.url}/sandbox/pay/${order_id}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body,
      });
      expect(await res.json()).toMatchObject({ code: 207 });
    }
    expect(await gw.store.transactions.find(order_id)).toMatchObject({ status: 'pending' });
  });

  it('an unknown path or method answers HTTP 404 with code 1', async () => {
    for (const [method, path] of [
      ['GET', '/nope'],
      ['GET', '/refund'],
      ['POST', '/v2/transaction/abc'],
      ['DELETE', '/cancel'],
      ['POST', '/v3/transaction'],
    ]) {
      const res = await fetch(gw.url + path, { method });
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ code: 1, message: 'FAIL' });
    }
  });

  it('a URL over 16 KB answers 207, and bytes that are not HTTP code 3, as HTTP 200 JSON', async () => {
    const { merchant_reference } = await gw.create();
    const longQuery = `/v2/transaction/${merchant_reference}?user_id=${gw.merchant.user_id}&signature=${'a'.repeat(64)}&x=${'a'.repeat(20_000)}`;
    const long = await rawExchange(gw.url, `GET ${longQuery} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(long.status).toBe(200);
    expect(long.json).toMatchObject({
      code: 207,
      message: 'Param is wrong',
      detail: expect.stringMatching(/too long/),
    });
    const notHttp = await rawExchange(gw.url, 'HELLO GATEWAY\r\n\r\n');
    expect(notHttp.status).toBe(200);
    expect(notHttp.json).toMatchObject({ code: 3, message: 'data error' });
    expect((await gw.query(merchant_reference)).code).toBe(0);
  });

  it('a body shorter than its Content-Length is answered code 3 when the request timeout passes; a long poll is not cut', async () => {
    expect(gw.app.server.requestTimeout).toBe(REQUEST_TIMEOUT_MS);
    expect(REQUEST_TIMEOUT_MS).toBeGreaterThan(0);
    // The same app with a 1 s request timeout, on a port of its own.
    const app = await buildApp(gw.ctx, { requestTimeoutMs: 1000 });
    try {
      const url = await app.listen({ port: 0, host: '127.0.0.1' });
      const { order_id, merchant_reference } = await gw.create();
      const params = { merchant_reference, user_id: gw.merchant.user_id, is_block: '1' };
      const qs = new URLSearchParams({
        user_id: gw.merchant.user_id,
        is_block: '1',
        signature: signRequest(params, gw.merchant.api_key),
      });
      const poll = fetch(`${url}/v2/transaction/${merchant_reference}?${qs}`).then((r) => r.json());
      const started = Date.now();
      const cut = await rawExchange(
        url,
        'POST /refund HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"user_id":',
      );
      expect(cut.status).toBe(200);
      expect(cut.json).toMatchObject({ code: 3, message: 'data error', detail: expect.stringMatching(/in time/) });
      expect(Date.now() - started).toBeLessThan(5000);
      await new Promise((r) => setTimeout(r, 1500 - (Date.now() - started)));
      await gw.pay(order_id);
      expect(await poll).toMatchObject({ code: 0, status: 'paid' });
    } finally {
      await app.close();
    }
  });

  it('survives 200 garbage requests and still answers correctly', async () => {
    const rand = seeded(20261122);
    const before = await rowCounts(gw);
    for (let i = 0; i < 200; i++) {
      const { method, path, body, type } = garbage(rand, gw);
      const res = await fetch(gw.url + path, {
        method,
        ...(type && { headers: { 'content-type': type } }),
        ...(body !== undefined && { body }),
      });
      const text = await res.text();
      const context = `request ${i}: ${method} ${path} ${type ?? ''} ${JSON.stringify(body)?.slice(0, 200)}`;
      expect([200, 404], context).toContain(res.status);
      const json = JSON.parse(text);
      expect(Number.isInteger(json.code), context).toBe(true);
      expect(json.code, context).not.toBe(0);
      // An internal error (code 1 with a request id) would mean the input reached code that did not expect it.
      if (res.status === 200) expect(json.detail ?? '', context).not.toMatch(/internal error/);
    }
    expect(await rowCounts(gw)).toEqual(before);
    expect(await (await fetch(`${gw.url}/healthz`)).json()).toEqual({ status: 'ok' });
    expect((await gw.create()).reply.code).toBe(0);
  });
});

/** Sends raw bytes on a new connection; the status and JSON body of the answer the gateway then closes with. */
function rawExchange(url: string, request: string): Promise<{ status: number; json: any }> {
  return new Promise((resolve, reject) => {
    const { hostname, port } = new URL(url);
    const socket = connect(Number(port), hostname);
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    // The gateway closes at once, possibly before all of a long request is read: that is not a failure here.
    socket.on('error', () => {});
    socket.on('close', () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
      const body = text.slice(text.indexOf('\r\n\r\n') + 4);
      try {
        resolve({ status, json: JSON.parse(body) });
      } catch {
        reject(new Error(`not a JSON answer: ${JSON.stringify(text.slice(0, 300))}`));
      }
    });
    socket.write(request);
  });
}

/** Deterministic pseudo-random numbers (mulberry32), so a failure can be replayed. */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function garbage(rand: () => number, gw: TestGateway): { method: string; path: string; body?: string; type?: string } {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
  const chars = '{}[]":,0123456789.-eE \\u00nulltruefalseabc\u00e9\u4e2d\n\t';
  const junk = (n: number) => Array.from({ length: n }, () => chars[Math.floor(rand() * chars.length)]).join('');
  const valid = gw.createBody();
  const mutate = (): string => {
    const obj: Record<string, unknown> = { ...valid };
    const key = pick(Object.keys(obj));
    obj[key] = pick([
      null,
      0,
      -1,
      1e308,
      true,
      [],
      {},
      [valid],
      { a: { b: [1] } },
      '',
      ' ',
      junk(10),
      'x'.repeat(3000),
    ]);
    return JSON.stringify(obj);
  };
  const kind = Math.floor(rand() * 5);
  if (kind === 0) {
    const refs = [junk(8), '%', '%zz', '..', 'a'.repeat(200), '%00', encodeURIComponent(junk(5))];
    const qs = pick([
      '',
      '?',
      `?user_id=${junk(5)}`,
      `?user_id=U1&signature=${junk(64)}&is_block=${junk(1)}`,
      '?user_id[]=1',
      `?${junk(20)}`,
    ]);
    return {
      method: 'GET',
      path: pick([`/v2/transaction/${pick(refs)}${qs}`, `/v2/merchanthosted/gatewaydata/${pick(refs)}`]),
    };
  }
  const path = pick(['/v2/transaction', '/refund', '/cancel']);
  const type = pick([
    'application/json',
    'application/json;charset=UTF-8',
    'text/plain',
    'application/x-www-form-urlencoded',
    undefined,
    'multipart/form-data',
  ]);
  const body =
    kind === 1
      ? junk(Math.floor(rand() * 200))
      : kind === 2
        ? mutate()
        : kind === 3
          ? `${mutate().slice(0, -Math.floor(rand() * 20) - 1)}`
          : `a=${junk(10)}&a=1&${junk(5)}=`;
  return { method: 'POST', path, body, ...(type !== undefined && { type }) };
}
