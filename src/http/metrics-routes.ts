import { timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { PrometheusMetrics } from '../metrics/prometheus.js';
import type { RequestObserver } from './request-log.js';

// Where the metrics are served: on the main port to `Authorization: Bearer <METRICS_TOKEN>` only,
// and/or on a listener of their own (METRICS_PORT on METRICS_HOST, default 127.0.0.1) that a
// firewall keeps private. With neither there is no /metrics at all.

/** Counts and times every answered request by its route pattern (called by RequestLogController). */
export function requestObserver(metrics: PrometheusMetrics): RequestObserver {
  return (request, reply, code, route) =>
    metrics.request({
      method: request.method,
      route: route ?? 'unmatched',
      status: reply.statusCode,
      code: code === undefined ? '' : String(code),
      seconds: reply.elapsedTime / 1000,
    });
}

/** GET /metrics on the main port, for the bearer of `token` (compared in constant time). */
export function metricsRoute(app: FastifyInstance, metrics: PrometheusMetrics, token: string): void {
  const expected = Buffer.from(`Bearer ${token}`);
  app.get('/metrics', async (request, reply) => {
    const given = Buffer.from(request.headers.authorization ?? '');
    const ok = given.length === expected.length && timingSafeEqual(given, expected);
    if (!ok)
      return reply
        .code(401)
        .header('www-authenticate', 'Bearer')
        .type('text/plain; charset=utf-8')
        .send('metrics need Authorization: Bearer <METRICS_TOKEN>\n');
    return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
}

/** A listener serving only GET /metrics, without a token. */
export async function startMetricsListener(
  metrics: PrometheusMetrics,
  port: number,
  host: string,
): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('only GET /metrics here\n');
      return;
    }
    metrics.registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text),
      (e: unknown) =>
        res
          .writeHead(500, { 'content-type': 'text/plain; charset=utf-8' })
          .end(`metrics failed: ${e instanceof Error ? e.message : String(e)}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as { port: number };
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
