// Tracing with an in-memory exporter: one payment's spans form one trace (the pay request, its
// settle, the notification attempt it queued), the create's request holds its channel call, and
// spans carry their statements in aggregate.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Receiver } from '../notify/receiver.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { until } from '../support/wait.js';

const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;

describe('tracing', () => {
  const exporter = new InMemorySpanExporter();
  let gw: TestGateway;
  let rx: Receiver;
  beforeAll(async () => {
    rx = await Receiver.start();
    gw = await startTestGateway('sqlite', { tracing: { exporter }, notify: { pollIntervalMs: 100 } });
  });
  afterAll(async () => {
    await gw?.close();
    await rx?.close();
  });

  it("puts a payment's request, settle and notification attempt in one trace", async () => {
    const made = await gw.create({ callback_url: `${rx.url}/n` });
    const create = exporter.getFinishedSpans().find((s) => s.name === 'POST /v2/transaction')!;
    expect(create).toBeDefined();
    expect(parentOf(create)).toBeUndefined();
    expect(create.attributes['db.statements']).toBeGreaterThan(0);
    const open = exporter.getFinishedSpans().find((s) => s.name === 'channel sandbox open')!;
    expect(open.spanContext().traceId).toBe(create.spanContext().traceId);
    expect(parentOf(open)).toBe(create.spanContext().spanId);
    expect(open.attributes).toMatchObject({ provider: 'sandbox', operation: 'open' });

    exporter.reset();
    await gw.pay(made.order_id);
    await until('the notification attempt span', () =>
      exporter.getFinishedSpans().some((s) => s.name === 'notification attempt'),
    );
    const spans = exporter.getFinishedSpans();
    const pay = spans.find((s) => s.name === 'POST /sandbox/pay/:order_id')!;
    const settle = spans.find((s) => s.name === 'settle')!;
    const attempt = spans.find((s) => s.name === 'notification attempt')!;
    expect(pay).toBeDefined();
    const traceId = pay.spanContext().traceId;
    expect(settle.spanContext().traceId).toBe(traceId);
    expect(attempt.spanContext().traceId).toBe(traceId);
    expect(parentOf(settle)).toBe(pay.spanContext().spanId);
    expect(parentOf(attempt)).toBe(settle.spanContext().spanId);
    expect(settle.attributes).toMatchObject({ order_id: made.order_id, to: 'paid' });
    expect(attempt.attributes).toMatchObject({ order_id: made.order_id, attempt: 1 });
    expect(settle.attributes['db.statements']).toBeGreaterThan(0);
    // No span names an order or a URL: route patterns only.
    for (const s of spans) expect(s.name).not.toContain(made.order_id);
  });
});

describe('tracing over OTLP', () => {
  it('sends the spans to OTEL_EXPORTER_OTLP_ENDPOINT (OTLP/HTTP), flushed when the gateway stops', async () => {
    const bodies: { path: string; type: string; body: Buffer }[] = [];
    const collector = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        bodies.push({ path: req.url ?? '', type: req.headers['content-type'] ?? '', body: Buffer.concat(chunks) });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
    try {
      const gw = await startTestGateway('sqlite', { tracing: {} });
      const made = await gw.create();
      expect(made.reply.code).toBe(0);
      await gw.close();
      const traces = bodies.filter((b) => b.path === '/v1/traces');
      expect(traces.length).toBeGreaterThan(0);
      const all = Buffer.concat(traces.map((t) => t.body)).toString('utf8');
      expect(all).toContain('POST /v2/transaction');
      expect(all).toContain('payment-gateway');
    } finally {
      delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
      collector.close();
    }
  });
});

describe('tracing off', () => {
  // OpenTelemetry's SDK and exporter hold about 8 MB: a gateway without tracing does not load them.
  it("does not load OpenTelemetry's SDK (the built gateway, in a process of its own)", () => {
    const server = fileURLToPath(new URL('../../dist/src/server.js', import.meta.url));
    if (!existsSync(server)) throw new Error('the gateway is not built: run `npm run build` (npm test does)');
    const script = `
      import { createRequire } from 'node:module';
      const { startGateway } = await import(${JSON.stringify(server)});
      const gw = await startGateway({ port: 0, host: '127.0.0.1', database: ':memory:', logLevel: 'silent', mode: 'sandbox' });
      const loaded = Object.keys(createRequire(import.meta.url).cache).filter((k) => k.includes('@opentelemetry/sdk-trace'));
      await gw.close();
      console.log(JSON.stringify(loaded.length));`;
    const loaded = (tracing: boolean) =>
      JSON.parse(
        execFileSync(
          process.execPath,
          [
            '--input-type=module',
            '-e',
            tracing
              ? script.replace(
                  "mode: 'sandbox'",
                  "mode: 'sandbox', tracing: { exporter: { export: (_s, done) => done({ code: 0 }), shutdown: async () => {} } }",
                )
              : script,
          ],
          { encoding: 'utf8' },
        )
          .trim()
          .split('\n')
          .at(-1)!,
      );
    expect(loaded(false)).toBe(0);
    expect(loaded(true)).toBeGreaterThan(0); // the same check sees the SDK when tracing is on
  });
});
