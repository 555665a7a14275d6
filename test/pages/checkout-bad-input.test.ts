// Hostile requests to the hosted page's routes: what the client got wrong is a 400 page that says
// so (and the request's log line carries code 3 and why), never the 500 "something went wrong"
// page and an "unexpected error" stack in the log.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/http/app.js';
import { loggerOptions } from '../../src/server.js';
import { ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';
import { captureLog } from '../support/log-capture.js';

describe.each(ENGINES)('hosted page routes with a bad body on %s', (engine) => {
  let gw: TestGateway;
  // The gateway's app on the test gateway's store, logging here instead of stdout.
  let app: FastifyInstance;
  let url: string;
  const { stream, lines } = captureLog();

  beforeAll(async () => {
    gw = await startTestGateway(engine);
    app = await buildApp(gw.ctx, { logger: { ...loggerOptions('info'), stream } });
    url = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await app?.close();
    await gw?.close();
  });

  async function backLink(
    body: string | Buffer,
    contentType: string,
  ): Promise<{ res: Response; html: string; line: Record<string, unknown> | undefined; errors: unknown[] }> {
    const { reply } = await gw.create({ backPage_url: 'https://shop.example/cart' });
    const page = await fetch(`${url}/v2/checkout/${reply.nonce}`);
    const cookie = page.headers.get('set-cookie')!.split(';')[0];
    await page.text();
    const res = await fetch(`${url}/v2/checkout/${reply.nonce}/cancel`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': contentType, cookie },
      body: typeof body === 'string' ? body : new Uint8Array(body),
    });
    const html = await res.text();
    const line = lines.find((l) => l.url === `/v2/checkout/${reply.nonce}/cancel`);
    const errors = lines.filter((l) => l.reqId === line?.reqId && l.level === 50);
    return { res, html, line, errors };
  }

  it.each([
    ['a body that is not JSON', '{"a":', 'application/json', 'the body is not valid JSON'],
    ['a body that is not UTF-8', Buffer.from([0x7b, 0xff, 0x7d]), 'application/json', 'the body is not valid UTF-8'],
    ['a body over 64 KB', `{"a":"${'x'.repeat(70_000)}"}`, 'application/json', 'the request body is too large'],
  ])(
    'answers the back link with %s by a 400 page, logged with code 3 and no stack',
    async (_name, body, type, detail) => {
      const { res, html, line, errors } = await backLink(body, type);
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(html).toContain('This request could not be read');
      expect(html).not.toContain('Something went wrong');
      expect(line).toMatchObject({ statusCode: 400, code: 3 });
      expect(String(line!.detail)).toContain(detail);
      expect(errors).toEqual([]);
    },
  );

  it('still cancels with the form the page sends', async () => {
    const { res } = await backLink('', 'application/x-www-form-urlencoded');
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('https://shop.example/cart');
  });
});
