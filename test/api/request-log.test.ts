// Request logging: one line per request, written when it is answered, with the method, the URL
// (signature cut to 8 characters), status, response time, request id and the API code; refusals
// carry their detail; unexpected errors get a line of their own with the same request id. No line
// ever holds an API key.
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signRequest } from '../../sdk/signing.js';
import { buildApp } from '../../src/http/app.js';
import { formatRequestLine, type RequestLine } from '../../src/http/request-log.js';
import { loggerOptions } from '../../src/server.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { captureLog } from '../support/log-capture.js';

type Line = Record<string, unknown> & { msg: string; reqId?: string };

describe('request log', () => {
  let gw: TestGateway;
  let app: FastifyInstance;
  const { stream, lines, raw } = captureLog<Line>();
  beforeAll(async () => {
    gw = await startTestGateway('sqlite');
    // The gateway's logger options, writing here instead of stdout.
    app = await buildApp(gw.ctx, { logger: { ...loggerOptions('info'), stream } });
    await app.ready();
  });
  afterAll(async () => {
    await app?.close();
    await gw?.close();
  });

  it('a signed query: one line with method, redacted URL, status, response time and code 0', async () => {
    const { merchant_reference } = await gw.create();
    const signature = signRequest({ merchant_reference, user_id: gw.merchant.user_id }, gw.merchant.api_key);
    const res = await app.inject({
      method: 'GET',
      url: `/v2/transaction/${merchant_reference}?user_id=${gw.merchant.user_id}&signature=${signature}`,
    });
    expect(res.json()).toMatchObject({ code: 0 });
    const own = lines.filter((l) => String(l.url).includes(merchant_reference));
    expect(own).toHaveLength(1);
    expect(own[0]).toMatchObject({
      msg: 'request completed',
      level: 30,
      method: 'GET',
      url: `/v2/transaction/${merchant_reference}?user_id=${gw.merchant.user_id}&signature=${signature.slice(0, 8)}...`,
      statusCode: 200,
      code: 0,
      reqId: expect.stringMatching(/^req_/),
    });
    expect(typeof own[0].responseTime).toBe('number');
  });

  it('a refused request: one line with its code and detail', async () => {
    const ref = 'no-such-order';
    const signature = 'a'.repeat(64);
    const res = await app.inject({
      method: 'GET',
      url: `/v2/transaction/${ref}?user_id=${gw.merchant.user_id}&signature=${signature}`,
    });
    expect(res.json()).toMatchObject({ code: 206 });
    const own = lines.filter((l) => String(l.url).startsWith(`/v2/transaction/${ref}?`));
    expect(own).toHaveLength(1);
    expect(own[0]).toMatchObject({
      msg: 'request completed',
      statusCode: 200,
      code: 206,
      detail: expect.stringContaining('signature'),
    });
    expect(own[0].url).toBe(`/v2/transaction/${ref}?user_id=${gw.merchant.user_id}&signature=aaaaaaaa...`);
  });

  it('a create: one line, code 0, and no line holds the API key', async () => {
    const before = lines.length;
    const body = gw.createBody();
    const res = await app.inject({ method: 'POST', url: '/v2/transaction', payload: body });
    expect(res.json()).toMatchObject({ code: 0 });
    const added = lines.slice(before);
    expect(added).toHaveLength(1);
    expect(added[0]).toMatchObject({ method: 'POST', url: '/v2/transaction', statusCode: 200, code: 0 });
    expect(raw.some((l) => l.includes(gw.merchant.api_key))).toBe(false);
  });

  it('pages and unknown paths: one line each; an unknown path has code 1 and status 404', async () => {
    const before = lines.length;
    expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/nowhere?signature=0123456789abcdef' })).statusCode).toBe(404);
    const added = lines.slice(before);
    expect(added).toHaveLength(2);
    expect(added[0]).toMatchObject({ url: '/healthz', statusCode: 200 });
    expect(added[0]).not.toHaveProperty('code');
    expect(added[1]).toMatchObject({ url: '/nowhere?signature=01234567...', statusCode: 404, code: 1 });
  });

  it("WeChat's one-time authorization code and its state are cut in the logged URL", async () => {
    const before = lines.length;
    await app.inject({
      method: 'GET',
      url: '/v2/checkout/0123456789abcdef0123456789abcdef?code=061Abc2w3W4fGH0aBcDe4fGh5i6Abc2Z&state=89abcdef0123456789abcdef01234567',
    });
    const url = lines.slice(before)[0].url as string;
    expect(url).toBe('/v2/checkout/0123456789abcdef0123456789abcdef?code=061Abc2w...&state=89abcdef...');
    expect(raw.some((l) => l.includes('061Abc2w3W4fGH0aBcDe4fGh5i6Abc2Z'))).toBe(false);
  });

  it('an unexpected error: its own error line with the stack, then the request line with code 1, both with the request id', async () => {
    const failing = await buildApp(
      {
        ...gw.ctx,
        credentials: Object.assign(Object.create(gw.ctx.credentials) as typeof gw.ctx.credentials, {
          user: async () => Promise.reject(new Error('database unreachable')),
        }),
      },
      {
        logger: { ...loggerOptions('info'), stream: { write: (l: string) => void lines.push(JSON.parse(l) as Line) } },
      },
    );
    try {
      const before = lines.length;
      const signature = signRequest({ merchant_reference: 'x', user_id: gw.merchant.user_id }, gw.merchant.api_key);
      const res = await failing.inject({
        method: 'GET',
        url: `/v2/transaction/x?user_id=${gw.merchant.user_id}&signature=${signature}`,
      });
      expect(res.json()).toMatchObject({ code: 1 });
      const added = lines.slice(before);
      expect(added.map((l) => l.msg)).toEqual(['unexpected error', 'request completed']);
      expect(added[0]).toMatchObject({
        level: 50,
        err: { message: 'database unreachable', stack: expect.any(String) },
      });
      expect(added[1]).toMatchObject({ code: 1, statusCode: 200 });
      expect(added[0].reqId).toBe(added[1].reqId);
      expect(res.json().detail).toContain(added[0].reqId);
    } finally {
      await failing.close();
    }
  });

  it('the request line written directly is, byte for byte, the line pino writes', () => {
    const raw: string[] = [];
    const log = pino(loggerOptions('info'), { write: (l: string) => void raw.push(l) });
    const cases: RequestLine[] = [
      {
        method: 'GET',
        url: '/v2/transaction/ref-1?user_id=10001&signature=abcdefgh...',
        statusCode: 200,
        responseTime: 1.25,
        code: 0,
      },
      {
        method: 'POST',
        url: '/v2/transaction',
        statusCode: 200,
        responseTime: 0.5,
        code: 206,
        detail: 'the "signature" \\ is not\nright: \u00e9\u2028\u0001',
      },
      { method: 'GET', url: '/pay/%E4%BD%A0?q="x"\\', statusCode: 404, responseTime: 12, code: 1 },
      { method: 'GET', url: '/healthz', statusCode: 200, responseTime: 0 },
    ];
    for (const line of cases) {
      log.child({ reqId: 'req_m3x1abcd7' }).info(line, 'request completed');
      const written = raw.pop()!;
      expect(formatRequestLine('req_m3x1abcd7', line, (JSON.parse(written) as { time: number }).time)).toBe(written);
    }
  });
});
