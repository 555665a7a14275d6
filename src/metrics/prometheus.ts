import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { EXCEPTION_KIND_NAMES } from '../domain/reconciliation.js';
import type { GatewayMetrics } from '../ports/metrics.js';
import type { Store } from '../ports/store.js';
import type { Connectors } from '../usecases/context.js';
import { wrapConnectors } from '../usecases/wrap-connectors.js';
import { KeyedHistogram } from './keyed-histogram.js';

// The operator's metrics in Prometheus's text format, on a registry of this gateway's own (several
// gateways in one process, as in tests, never share figures). Counters and histograms move as work
// is done; what the database knows (backlog, pending refunds, failing hosts) is read when scraped.
// Labels come from fixed sets: route patterns, HTTP statuses, API codes, provider and operation
// names, outcome kinds; never an order id, a URL or a merchant's value.

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 180];
const DELIVERY_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 21600, 86400];

export interface RequestObservation {
  method: string;
  /** The route's pattern (`/v2/transactions/:order_id`), `unmatched` when none. */
  route: string;
  status: number;
  /** The API's answer code, '' for pages and other routes. */
  code: string;
  seconds: number;
}

export type AttemptOutcome = 'delivered' | 'refused' | 'no_answer';

export class PrometheusMetrics implements GatewayMetrics {
  readonly registry = new Registry();
  private readonly requestSeconds: KeyedHistogram;
  private readonly attempts: Counter<'outcome'>;
  private readonly deliverySeconds: Histogram;
  private readonly longPolls: Gauge;
  private readonly channelCalls: Counter<'provider' | 'operation' | 'outcome'>;
  private readonly channelSeconds: Histogram<'provider' | 'operation'>;
  private readonly reconciliations: Counter<'provider' | 'outcome'>;
  private readonly expiries: Counter;

  constructor(store: Store) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.requestSeconds = new KeyedHistogram(
      'gateway_http_request_duration_seconds',
      'Requests answered (_count) and the time to answer them (long polls included), by route pattern, HTTP status and API answer code',
      ['method', 'route', 'status', 'code'],
      LATENCY_BUCKETS,
      registers,
    );
    this.attempts = new Counter({
      name: 'gateway_notification_attempts_total',
      help: 'Notification delivery attempts by outcome: delivered (answered sent), refused (answered otherwise), no_answer (timeout, connection error)',
      labelNames: ['outcome'],
      registers,
    });
    this.deliverySeconds = new Histogram({
      name: 'gateway_notification_delivery_seconds',
      help: 'From the status change that queued a notification to its delivery',
      buckets: DELIVERY_BUCKETS,
      registers,
    });
    this.longPolls = new Gauge({
      name: 'gateway_long_polls_held',
      help: 'Long polls waiting now (queries with is_block=1, hosted pages waiting for a payment)',
      registers,
    });
    this.channelCalls = new Counter({
      name: 'gateway_channel_calls_total',
      help: 'Calls to payment providers by provider, operation and outcome (the answer kind; unknown: no definite answer)',
      labelNames: ['provider', 'operation', 'outcome'],
      registers,
    });
    this.channelSeconds = new Histogram({
      name: 'gateway_channel_call_duration_seconds',
      help: 'Time of a call to a payment provider',
      labelNames: ['provider', 'operation'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.reconciliations = new Counter({
      name: 'gateway_reconciliation_checks_total',
      help: 'Payments asked about by reconciliation, by what the provider answered',
      labelNames: ['provider', 'outcome'],
      registers,
    });
    this.expiries = new Counter({
      name: 'gateway_orders_expired_total',
      help: 'Pending orders ended by expiry (ORDER_EXPIRY_MS)',
      registers,
    });

    // Read from the database when scraped: one read per scrape, whichever of these gauges is
    // collected first. A scrape while the database is away keeps the last figures and says so.
    let reading: Promise<void> | null = null;
    const collect = () => (reading ??= read().finally(() => setImmediate(() => (reading = null))));
    const gauge = (name: string, help: string) => new Gauge({ name, help, registers, collect });
    const storeUp = gauge(
      'gateway_metrics_store_up',
      '1 when the last scrape could read the database figures below, 0 when not',
    );
    const backlog = gauge('gateway_notifications_backlog', 'Notifications not delivered yet');
    const oldest = gauge(
      'gateway_notifications_oldest_undelivered_age_seconds',
      'Age of the oldest notification not delivered yet (0 when none)',
    );
    const failing = gauge('gateway_notifications_failing', 'Notifications whose last attempt failed');
    const failingHosts = gauge('gateway_notification_hosts_failing', 'Callback hosts with notifications failing now');
    const refundsPending = gauge(
      'gateway_refunds_pending',
      'Refunds pending with their channel (asked, outcome not known yet)',
    );
    const exceptionsOpen = new Gauge({
      name: 'gateway_reconciliation_exceptions_open',
      help: 'Money exceptions not resolved, by kind (docs/reconciliation.md)',
      labelNames: ['kind'],
      registers,
      collect,
    });
    const statementAge = new Gauge({
      name: 'gateway_reconciliation_statement_age_seconds',
      help: "Seconds since the end (UTC) of the day of each provider account's newest imported statement: over two days, a day is missing",
      labelNames: ['provider', 'merchant_id'],
      registers,
      collect,
    });
    const read = async () => {
      try {
        // One after the other: a scrape holds at most one pool connection, never several that
        // the request paths' gathered statements are waiting for.
        const b = await store.outbox.backlog();
        const f = await store.outbox.countFailing();
        const hosts = await store.outbox.countFailingHosts();
        const refunds = await store.refunds.countPending();
        backlog.set(b.pending);
        oldest.set(b.oldest_created_at === null ? 0 : Math.max(0, (Date.now() - b.oldest_created_at) / 1000));
        failing.set(f);
        failingHosts.set(hosts);
        refundsPending.set(refunds);
        const open = new Map((await store.reconciliation.openCounts()).map((c) => [c.kind, c.count]));
        for (const kind of EXCEPTION_KIND_NAMES) exceptionsOpen.set({ kind }, open.get(kind) ?? 0);
        statementAge.reset();
        for (const n of await store.reconciliation.newestStatements())
          statementAge.set(
            { provider: n.provider, merchant_id: n.merchant_id },
            Math.max(0, (Date.now() - (Date.parse(`${n.statement_date}T00:00:00Z`) + 86_400_000)) / 1000),
          );
        storeUp.set(1);
      } catch {
        storeUp.set(0);
      }
    };

    const pool = store.instruments?.pool;
    if (pool) {
      new Gauge({
        name: 'gateway_db_pool_connections',
        help: 'PostgreSQL pool connections: total open, idle, and requests waiting for one',
        labelNames: ['state'],
        registers,
        collect() {
          const p = pool();
          this.set({ state: 'total' }, p.total);
          this.set({ state: 'idle' }, p.idle);
          this.set({ state: 'waiting' }, p.waiting);
        },
      });
    }
    if (store.instruments?.observeCommits) {
      const batches = new Histogram({
        name: 'gateway_sqlite_commit_batch_size',
        help: 'SQLite: atomic units committed (and flushed) together in one batch',
        buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
        registers,
      });
      store.instruments.observeCommits((size) => batches.observe(size));
    }
  }

  request(o: RequestObservation): void {
    // One histogram (its _count is the request count by route, status and code), kept by label
    // values (KeyedHistogram): prom-client's own observe validates and hashes the labels each time.
    // The route is a pattern, the method one Node's parser accepts, the code an API code: bounded.
    this.requestSeconds.observe([o.method, o.route, o.status, o.code], o.seconds);
  }

  attempt(outcome: AttemptOutcome, deliveredAfterSeconds?: number): void {
    this.attempts.inc({ outcome });
    if (deliveredAfterSeconds !== undefined) this.deliverySeconds.observe(deliveredAfterSeconds);
  }

  longPollHeld(): () => void {
    this.longPolls.inc();
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.longPolls.dec();
    };
  }

  reconciled(provider: string, outcome: string): void {
    this.reconciliations.inc({ provider, outcome });
  }

  expired(): void {
    this.expiries.inc();
  }

  /** The connectors, each call timed and counted by its outcome (the answer's kind; `error` if it threw). */
  instrument(connectors: Connectors): Connectors {
    return wrapConnectors(connectors, async (provider, operation, call) => {
      const end = this.channelSeconds.startTimer({ provider, operation });
      let outcome = 'error';
      try {
        const result = await call();
        outcome = result.kind;
        return result;
      } finally {
        end();
        this.channelCalls.inc({ provider, operation, outcome });
      }
    });
  }
}
