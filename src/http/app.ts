import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { PrometheusMetrics } from '../metrics/prometheus.js';
import type { OtelTracing } from '../tracing/otel.js';
import type { GatewayContext } from '../usecases/context.js';
import { readiness, type NotificationsState } from '../usecases/readiness.js';
import { assetRoutes } from './asset-routes.js';
import { registerBodyParsers } from './body-parsers.js';
import { checkoutRoutes } from './checkout-routes.js';
import { consolePlugin } from './console/plugin.js';
import { clientErrorHandler, errorBody, handleError } from './errors.js';
import { refundCancelRoutes } from './refund-cancel-routes.js';
import { metricsRoute, requestObserver } from './metrics-routes.js';
import { registerOpenApi } from './openapi.js';
import { isConsoleAddress, isPageAddress, linkNotFound } from './page-replies.js';
import { nextRequestId, noteAnswer, redactUrl, RequestLogController } from './request-log.js';
import { transactionRoutes } from './transaction-routes.js';
import { walletRoutes } from './wallet-routes.js';

/** Routes a payment channel serves itself (the sandbox's payment app; a provider's notifications). */
export type ChannelRoutes = (app: FastifyInstance, ctx: GatewayContext) => Promise<void>;

export interface AppOptions {
  logger?: FastifyServerOptions['logger'];
  channelRoutes?: readonly ChannelRoutes[];
  /** How long a client may take to send one whole request, headers and body (REQUEST_TIMEOUT_MS). */
  requestTimeoutMs?: number;
  /** The proxies whose X-Forwarded-For and X-Forwarded-Proto are believed (TRUST_PROXY): Fastify's trustProxy. */
  trustProxy?: boolean | string;
  /** The operator's metrics: every request counted and timed; /metrics on this port when metricsToken is set. */
  metrics?: PrometheusMetrics;
  metricsToken?: string | undefined;
  /** Tracing: a span for every request. */
  tracing?: OtelTracing;
  /** The notification worker's state for /readyz (the server's; 'off' when not given). */
  notifications?: () => NotificationsState;
}

/**
 * Fastify turns Node's request timeout off, so a client that announced a longer body than it sent
 * held its connection open, unanswered, for ever. A request of the API is at most 64 KB; a long
 * poll is not affected (the timeout ends when the request has arrived, not when it is answered).
 */
export const REQUEST_TIMEOUT_MS = 30_000;

export { redactUrl };

export async function buildApp(ctx: GatewayContext, options: AppOptions = {}): Promise<FastifyInstance> {
  const requestTimeout = options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  // With the logger's output at hand, request lines are written to it directly (see request-log.ts).
  const output =
    typeof options.logger === 'object'
      ? (options.logger as { stream?: { write(line: string): unknown } }).stream
      : undefined;
  // The same controller tells the metrics of every answered request (no onResponse hook).
  const observe = options.metrics && requestObserver(options.metrics);
  const logController =
    options.logger || observe ? new RequestLogController(output, Boolean(options.logger), observe) : undefined;
  const app = Fastify({
    // Without a logger Fastify would not follow responses to their end, and the metrics learn of
    // them from the log controller: a silent one then (tests; a gateway in production logs).
    logger: options.logger || (observe ? { level: 'silent' } : false),
    // One line per request, when it is answered (see request-log.ts).
    ...(logController && { logController }),
    bodyLimit: 64 * 1024,
    ...(options.trustProxy !== undefined && { trustProxy: options.trustProxy }),
    keepAliveTimeout: 65_000,
    requestTimeout,
    // Node takes the timeout from the server's options (setting it afterwards, as Fastify does, is not
    // enough), and looks for timed-out requests every 30 s by default: more often, so one is answered near its time.
    // Node answers an HTTP/1.1 request without a Host header itself, with a bare 400: refused below instead.
    http: {
      requestTimeout,
      connectionsCheckingInterval: Math.min(5_000, Math.ceil(requestTimeout / 4)),
      requireHostHeader: false,
    },
    // Requests are retried by merchants on failure; a request id ties a complaint to a log line.
    genReqId: nextRequestId,
    ajv: { customOptions: { coerceTypes: false, allErrors: false } },
    routerOptions: { ignoreTrailingSlash: true },
    // Router errors (a path parameter over 100 characters, bad %-encoding) get the API's answer shape too.
    // Fastify writes no request line for these (the request has no route): written when the answer is.
    frameworkErrors: (error, request, reply) => {
      if (logController) reply.raw.once('finish', () => logController.requestCompleted(null, request, reply));
      handleError(error, request, reply);
    },
    // Requests the HTTP parser refuses (headers over 16 KB, not HTTP, timed out) get the API's answer shape too.
    clientErrorHandler,
  });
  releaseConnectionsOnClose(app);
  // An Expect header other than 100-continue: Node would answer a bare 417. The expectation may be
  // ignored (RFC 9110, 10.1.1), so the request is served like any other.
  app.server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) =>
    app.server.emit('request', request, response),
  );
  await registerBodyParsers(app);
  app.setErrorHandler(handleError);
  // Answers are written by JSON.stringify whatever their route's response schema says: those
  // schemas describe the API (openapi.ts), they must not change a byte of it.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  await registerOpenApi(app, () => ctx.config.publicUrl);
  // Path and query values reach SQL as text, and PostgreSQL text cannot hold NUL (bodies are checked in their
  // parser). Answered here, like the router's other bad-URL errors, whatever the route's own error handler;
  // the console's addresses get a page instead (its own hook refuses them, see console/plugin.ts).
  // An HTTP/1.1 request must name its host (RFC 9112, 3.2); refused in the API's shape like other malformed HTTP.
  app.addHook('onRequest', (request, reply, done) => {
    const refusal =
      request.url.includes('%00') && !isConsoleAddress(request.url)
        ? 'the URL contains a NUL character'
        : request.headers.host === undefined && request.raw.httpVersion === '1.1'
          ? 'the request has no Host header (HTTP/1.1 requires one)'
          : undefined;
    if (refusal === undefined) return done();
    noteAnswer(reply, 3, refusal);
    void reply.code(200).send(errorBody(3, refusal));
  });
  app.setNotFoundHandler((request, reply) => {
    if (isPageAddress(request)) return linkNotFound(request, reply);
    noteAnswer(reply, 1);
    void reply
      .code(404)
      .send(errorBody(1, `no endpoint ${request.method} ${redactUrl(request.url.split('?')[0] ?? '')}`));
  });
  options.tracing?.observeRequests(app);
  if (options.metrics && options.metricsToken !== undefined) metricsRoute(app, options.metrics, options.metricsToken);
  // Liveness: the process answers. Readiness: it can do its work (usecases/readiness.ts).
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    const r = await readiness({
      store: ctx.store,
      notifications: options.notifications ?? (() => 'off'),
      timeoutMs: 2_000,
    });
    if (r.ready) return { status: 'ready', checks: r.checks };
    return reply.code(503).send({ status: 'not ready', reason: r.reason, checks: r.checks });
  });
  await transactionRoutes(app, ctx);
  await refundCancelRoutes(app, ctx);
  await walletRoutes(app, ctx);
  await checkoutRoutes(app, ctx);
  await assetRoutes(app);
  await consolePlugin(app, ctx);
  for (const routes of options.channelRoutes ?? []) await routes(app, ctx);
  return app;
}

/**
 * Lets close() finish promptly. Node counts a connection on which no request has arrived yet as
 * busy, so close() would wait for its headersTimeout (60 s) on every socket a client pool or load
 * balancer opened in advance: those are closed first. And Fastify closes idle keep-alive
 * connections once, when close starts: a request still in flight then (such as a long poll that the
 * shutdown woke) would leave its connection open until the client's idle timeout, so each response
 * that finishes while closing closes the connections that are idle by then.
 */
function releaseConnectionsOnClose(app: FastifyInstance): void {
  const unused = new Set<Socket>();
  let closing = false;
  // One function for every response: no closure per request.
  const onResponseClose = () => {
    if (closing) app.server.closeIdleConnections();
  };
  app.server.on('connection', (socket: Socket) => {
    unused.add(socket);
    socket.once('close', () => unused.delete(socket));
  });
  app.server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    unused.delete(request.socket);
    response.on('close', onResponseClose);
  });
  app.addHook('preClose', async () => {
    closing = true;
    for (const socket of unused) socket.destroy();
  });
}
