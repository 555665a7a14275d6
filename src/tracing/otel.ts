import {
  context,
  ROOT_CONTEXT,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
  type SpanContext,
  type Tracer,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { FastifyInstance } from 'fastify';
import type { Tracing } from '../ports/tracing.js';
import type { Connectors } from '../usecases/context.js';
import { wrapConnectors } from '../usecases/wrap-connectors.js';

// OpenTelemetry spans, opt-in: a request (named by its route pattern), the channel calls and the
// settle inside it, and each notification delivery attempt, which joins the trace of the status
// change that queued it. Statements are not spans of their own (thousands a second): each span
// carries how many ran in it and for how long. Exported over OTLP/HTTP to
// OTEL_EXPORTER_OTLP_ENDPOINT (the exporter reads the OTEL_* variables); tests pass an exporter.

/** How many queued notifications remember their trace for their attempts (the oldest are forgotten). */
const PARENTS_KEPT = 10_000;

interface Tally {
  statements: number;
  ms: number;
}

export interface TracingOptions {
  /** Where spans go; default OTLP over HTTP, batched. A given exporter gets each span as it ends. */
  exporter?: SpanExporter;
  version: string;
}

let contextManagerSet = false;

export class OtelTracing implements Tracing {
  private readonly provider: NodeTracerProvider;
  private readonly tracer: Tracer;
  private readonly tallies = new WeakMap<Span, Tally>();
  private readonly parents = new Map<string, SpanContext>();

  constructor(options: TracingOptions) {
    // One context manager for the process (AsyncLocalStorage): the active span follows the request's async work.
    if (!contextManagerSet) {
      context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
      contextManagerSet = true;
    }
    const processor = options.exporter
      ? new SimpleSpanProcessor(options.exporter)
      : new BatchSpanProcessor(new OTLPTraceExporter());
    this.provider = new NodeTracerProvider({
      resource: resourceFromAttributes({
        [ATTR_SERVICE_NAME]: process.env.OTEL_SERVICE_NAME || 'payment-gateway',
        [ATTR_SERVICE_VERSION]: options.version,
      }),
      spanProcessors: [processor],
    });
    this.tracer = this.provider.getTracer('payment-gateway', options.version);
  }

  async span<T>(
    name: string,
    attributes: Readonly<Record<string, string | number>>,
    work: () => Promise<T>,
    parent: Context = context.active(),
  ): Promise<T> {
    return this.tracer.startActiveSpan(name, { attributes }, parent, async (span) => {
      try {
        return await work();
      } catch (e) {
        span.recordException(e as Error);
        span.setStatus({ code: SpanStatusCode.ERROR, message: e instanceof Error ? e.message : String(e) });
        throw e;
      } finally {
        this.end(span);
      }
    });
  }

  queued(event_id: string): void {
    const span = trace.getActiveSpan();
    if (!span) return;
    if (this.parents.size >= PARENTS_KEPT) this.parents.delete(this.parents.keys().next().value!);
    this.parents.set(event_id, span.spanContext());
  }

  /** A notification attempt's span, in the trace of the change that queued it when this instance remembers it. */
  attempt<T>(
    event_id: string,
    attributes: Readonly<Record<string, string | number>>,
    work: () => Promise<T>,
  ): Promise<T> {
    const parent = this.parents.get(event_id);
    return this.span(
      'notification attempt',
      { event_id, ...attributes },
      work,
      parent ? trace.setSpanContext(ROOT_CONTEXT, parent) : ROOT_CONTEXT,
    );
  }

  /** The notification was delivered: its trace need not be remembered. */
  delivered(event_id: string): void {
    this.parents.delete(event_id);
  }

  /** A statement ran: counted on the span active now. */
  statement(ms: number): void {
    const span = trace.getActiveSpan();
    if (!span) return;
    const tally = this.tallies.get(span);
    if (tally) {
      tally.statements++;
      tally.ms += ms;
    } else {
      this.tallies.set(span, { statements: 1, ms });
    }
  }

  /** A span for every request, named by its route pattern, active while its handler runs. */
  observeRequests(app: FastifyInstance): void {
    const spans = new WeakMap<object, Span>();
    app.addHook('onRequest', (request, _reply, done) => {
      const route = request.routeOptions.url ?? 'unmatched';
      const span = this.tracer.startSpan(
        `${request.method} ${route}`,
        { attributes: { 'http.request.method': request.method, 'http.route': route } },
        ROOT_CONTEXT,
      );
      spans.set(request, span);
      context.with(trace.setSpan(ROOT_CONTEXT, span), done);
    });
    // Body parsing may have left the context: it is set again right before the handler runs.
    app.addHook('preHandler', (request, _reply, done) => {
      const span = spans.get(request);
      if (span) context.with(trace.setSpan(ROOT_CONTEXT, span), done);
      else done();
    });
    app.addHook('onResponse', (request, reply, done) => {
      const span = spans.get(request);
      if (span) {
        span.setAttribute('http.response.status_code', reply.statusCode);
        if (reply.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        this.end(span);
      }
      done();
    });
  }

  /** The connectors, each call a span with its provider, operation and outcome. */
  instrument(connectors: Connectors): Connectors {
    return wrapConnectors(connectors, (provider, operation, call) =>
      this.span(`channel ${provider} ${operation}`, { provider, operation }, async () => {
        const result = await call();
        trace.getActiveSpan()?.setAttribute('outcome', result.kind);
        return result;
      }),
    );
  }

  /** Sends what is buffered and stops. */
  shutdown(): Promise<void> {
    return this.provider.shutdown();
  }

  private end(span: Span): void {
    const tally = this.tallies.get(span);
    if (tally)
      span.setAttributes({ 'db.statements': tally.statements, 'db.duration_ms': Math.round(tally.ms * 1000) / 1000 });
    span.end();
  }
}
