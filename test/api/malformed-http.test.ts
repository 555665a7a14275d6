// Requests that are not quite HTTP, or that Node itself would answer: each gets the API's answer
// shape (HTTP 200 JSON with a code) and a log line that says why, with a request id, and without
// what the client sent (it may hold a signature).
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/http/app.js';
import { loggerOptions } from '../../src/server.js';
import { rowCounts } from '../support/api.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { captureLog } from '../support/log-capture.js';

type Line = Record<string, unknown>;

describe('malformed HTTP', () => {
  let gw: TestGateway;
  let app: FastifyInstance;
  let port: number;
  const { stream, lines, raw } = captureLog<Line>();

  beforeAll(async () => {
    gw = await startTestGateway('sqlite');
    app = await buildApp(gw.ctx, { logger: { ...loggerOptions('info'), stream } });
    port = Number(new URL(await app.listen({ port: 0, host: '127.0.0.1' })).port);
  });
  afterAll(async () => {
    await app?.close();
    await gw?.close();
  });

  /** Sends raw bytes; the first answer's status, headers and JSON body. */
  function exchange(request: string): Promise<{ status: number; head: string; json: any }> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      let text = '';
      socket.setEncoding('latin1');
      socket.on('data', (chunk: string) => {
        text += chunk;
        const end = text.indexOf('\r\n\r\n');
        const length = Number(/content-length: (\d+)/i.exec(text)?.[1]);
        if (end !== -1 && text.length >= end + 4 + length) socket.destroy();
      });
      socket.on('error', () => {});
      socket.on('close', () => {
        const end = text.indexOf('\r\n\r\n');
        try {
          resolve({
            status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]),
            head: text.slice(0, end),
            json: JSON.parse(text.slice(end + 4)),
          });
        } catch {
          reject(new Error(`not a JSON answer: ${JSON.stringify(text.slice(0, 300))}`));
        }
      });
      socket.write(request, 'latin1');
    });
  }

  it('logs a request the HTTP parser refuses: reason, code and request id, not the bytes sent', async () => {
    const before = lines.length;
    const secret = 'f'.repeat(64);
    const answer = await exchange(
      `POST /refund?signature=${secret} HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}`,
    );
    expect(answer).toMatchObject({
      status: 200,
      json: { code: 3, message: 'data error', detail: 'the request is not well-formed HTTP' },
    });
    const long = await exchange(
      `GET /v2/transaction/x?signature=${secret}&x=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
    );
    expect(long.json).toMatchObject({ code: 207 });
    const refused = lines.slice(before).filter((l) => l.msg === 'request refused by the HTTP parser');
    expect(refused).toEqual([
      expect.objectContaining({
        level: 30,
        reqId: expect.stringMatching(/^req_/),
        statusCode: 200,
        code: 3,
        detail: 'the request is not well-formed HTTP',
        parserError: expect.stringMatching(/^HPE_/),
      }),
      expect.objectContaining({
        reqId: expect.stringMatching(/^req_/),
        code: 207,
        detail: expect.stringMatching(/too long/),
        parserError: 'HPE_HEADER_OVERFLOW',
      }),
    ]);
    expect(refused[0].reqId).not.toBe(refused[1].reqId);
    expect(raw.join('\n')).not.toContain(secret);
  });

  it('closes a connection that sent nothing within the request timeout without an answer or a log line', async () => {
    const quick = await buildApp(gw.ctx, {
      requestTimeoutMs: 1000,
      logger: { ...loggerOptions('info'), stream: { write: (l: string) => void lines.push(JSON.parse(l) as Line) } },
    });
    try {
      const url = new URL(await quick.listen({ port: 0, host: '127.0.0.1' }));
      const before = lines.length;
      const received = await new Promise<string>((resolve) => {
        const socket = connect(Number(url.port), '127.0.0.1');
        let text = '';
        socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
        socket.on('error', () => {});
        socket.on('close', () => resolve(text));
      });
      expect(received).toBe('');
      expect(lines.slice(before).filter((l) => l.msg === 'request refused by the HTTP parser')).toEqual([]);
    } finally {
      await quick.close();
    }
  }, 15_000);

  it('answers an HTTP/1.1 request without a Host header with code 3 (Node answered a bare 400)', async () => {
    const answer = await exchange('GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n');
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({
      code: 3,
      message: 'data error',
      detail: 'the request has no Host header (HTTP/1.1 requires one)',
    });
    const line = lines.find((l) => l.url === '/healthz' && l.code === 3);
    expect(line).toMatchObject({
      msg: 'request completed',
      statusCode: 200,
      detail: 'the request has no Host header (HTTP/1.1 requires one)',
      reqId: expect.stringMatching(/^req_/),
    });
    // HTTP/1.0 needs none.
    expect((await exchange('GET /healthz HTTP/1.0\r\n\r\n')).json).toEqual({ status: 'ok' });
  });

  it('answers a path with a broken %-escape with code 3 and a detail that does not quote the URL back', async () => {
    for (const path of [
      '/v2/transaction/%ZZ',
      '/v2/transaction/%E0%A4%A',
      '/v2/merchanthosted/gatewaydata/%ED%A0%80',
    ]) {
      const res = await fetch(`http://127.0.0.1:${port}${path}?user_id=U1&signature=${'e'.repeat(64)}`);
      expect(res.status).toBe(200);
      const json = (await res.json()) as { code: number; detail: string };
      expect(json).toMatchObject({ code: 3, message: 'data error', detail: expect.stringMatching(/broken %-escape/) });
      expect(json.detail).not.toContain('eeeeeeee');
    }
  });

  it('answers a compressed body with code 3 that says so (it was "not valid UTF-8"), and writes nothing', async () => {
    const before = await rowCounts(gw);
    for (const [coding, body] of [
      ['gzip', gzipSync(JSON.stringify(gw.createBody()))],
      ['br', JSON.stringify(gw.createBody())],
    ] as const) {
      const res = await fetch(`http://127.0.0.1:${port}/v2/transaction`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-encoding': coding },
        body,
      });
      expect(await res.json()).toMatchObject({
        code: 3,
        message: 'data error',
        detail: `the body is compressed (Content-Encoding: ${coding}); send it uncompressed`,
      });
    }
    expect(await rowCounts(gw)).toEqual(before);
    const plain = await fetch(`http://127.0.0.1:${port}/v2/transaction`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'identity' },
      body: JSON.stringify(gw.createBody()),
    });
    expect(await plain.json()).toMatchObject({ code: 0 });
  });

  it('answers a method or path with no route 404 "no endpoint" whatever its body (an unreadable one said "not valid JSON")', async () => {
    for (const [method, path] of [
      ['DELETE', '/cancel'],
      ['OPTIONS', '/v2/transaction'],
      ['PUT', '/refund'],
      ['POST', '/v3/transaction'],
    ]) {
      for (const body of ['', '{"a":', 'a=1']) {
        const res = await fetch(`http://127.0.0.1:${port}${path}`, {
          method,
          headers: { 'content-type': 'application/json' },
          body,
        });
        expect(res.status, `${method} ${path} ${body}`).toBe(404);
        expect(await res.json()).toMatchObject({ code: 1, message: 'FAIL', detail: `no endpoint ${method} ${path}` });
      }
    }
  });

  it('answers a Content-Type that is no media type with code 3 that says so (it said "Unsupported Media Type")', async () => {
    for (const type of ['', ';;;', 'a/b/c', 'application/json, text/plain']) {
      const res = await exchange(
        `POST /cancel HTTP/1.1\r\nHost: x\r\nContent-Type: ${type}\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`,
      );
      expect(res.json, type).toMatchObject({
        code: 3,
        message: 'data error',
        detail: 'the Content-Type header is not a media type: send application/json, or no Content-Type at all',
      });
    }
  });

  it('logs why a body over 64 KB or a path value over 100 characters was refused, not only its code', async () => {
    const big = await fetch(`http://127.0.0.1:${port}/refund`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ x: 'a'.repeat(70_000) }),
    });
    expect(await big.json()).toMatchObject({ code: 3, detail: 'the request body is too large (64 KB at most)' });
    const long = await fetch(`http://127.0.0.1:${port}/v2/transaction/${'r'.repeat(101)}?user_id=U1&signature=x`);
    expect(await long.json()).toMatchObject({
      code: 207,
      detail: 'a value in the path is too long (100 characters at most)',
    });
    expect(lines.find((l) => l.url === '/refund' && l.code === 3)).toMatchObject({
      detail: 'the request body is too large (64 KB at most)',
    });
    expect(lines.filter((l) => String(l.url).startsWith('/v2/transaction/rrrr'))).toEqual([
      expect.objectContaining({
        msg: 'request completed',
        reqId: expect.stringMatching(/^req_/),
        statusCode: 200,
        code: 207,
        detail: 'a value in the path is too long (100 characters at most)',
      }),
    ]);
  });

  it('logs the requests the router refuses (a broken %-escape, an over-long path value), once each, signature cut', async () => {
    const before = lines.length;
    await (
      await fetch(`http://127.0.0.1:${port}/v2/merchanthosted/gatewaydata/%ZZ?signature=${'d'.repeat(64)}`)
    ).text();
    await (await fetch(`http://127.0.0.1:${port}/v2/checkout/${'n'.repeat(150)}`)).text();
    const own = lines.slice(before);
    expect(own).toEqual([
      expect.objectContaining({
        msg: 'request completed',
        method: 'GET',
        url: '/v2/merchanthosted/gatewaydata/%ZZ?signature=dddddddd...',
        statusCode: 200,
        code: 3,
        detail: expect.stringMatching(/broken %-escape/),
      }),
      expect.objectContaining({
        msg: 'request completed',
        method: 'GET',
        url: `/v2/checkout/${'n'.repeat(150)}`,
        statusCode: 404,
      }),
    ]);
  });

  it('serves a request whose Expect header is not 100-continue (Node answered a bare 417)', async () => {
    const answer = await exchange(
      'POST /cancel HTTP/1.1\r\nHost: x\r\nExpect: something-else\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}',
    );
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ code: 204, detail: 'user_id is required' });
  });
});
