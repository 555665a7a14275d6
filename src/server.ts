import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildConnectors } from './connectors/registry.js';
import { sandboxRoutes } from './connectors/sandbox/app-routes.js';
import type { MasterKey } from './domain/sealed.js';
import { buildApp, redactUrl } from './http/app.js';
import { startMetricsListener } from './http/metrics-routes.js';
import { PrometheusMetrics, type AttemptOutcome } from './metrics/prometheus.js';
import { gatewayVersion } from './http/openapi.js';
import type { OtelTracing } from './tracing/otel.js';
import { SmtpMailer, type SmtpSettings } from './mail/smtp-mailer.js';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import { SESSION_POLICY } from './http/console/session-store.js';
import { providerNotificationRoutes } from './http/provider-notification-routes.js';
import { BatchedOutput } from './log-output.js';
import { resolveNotifySettings, type NotifySettings } from './notify/settings.js';
import { NotificationWorker } from './notify/worker.js';
import { checkStoredAccounts, openAccount } from './usecases/channel-accounts.js';
import { startSettlement } from './usecases/books.js';
import { startStatementJob } from './usecases/statement-job.js';
import type { BankFileSettings } from './usecases/payouts.js';
import { startChannelJobs } from './usecases/channel-jobs.js';
import { expireConsoleState } from './usecases/console-auth.js';
import { startRefundRecovery } from './usecases/resume-refunds.js';
import { resolveRetentionSettings, startRetention } from './usecases/retention.js';
import { PgStatusSignals } from './signals/pg-status-signals.js';
import { LocalStatusSignals } from './signals/status-signals.js';
import { splitPostgresHosts } from './store/postgres/hosts.js';
import { openStore } from './store/open.js';
import type { SqlStore } from './store/sql-store.js';
import { CredentialCache } from './usecases/credentials.js';
import {
  DEFAULT_CONFIG,
  SILENT_LOG,
  type Connectors,
  type GatewayConfig,
  type GatewayContext,
  type GatewayMode,
} from './usecases/context.js';

/** The longest an order may live (Alipay's limit on a trade's time_expire). */
export const MAX_ORDER_EXPIRY_MS = 15 * 24 * 3600_000;
export interface ServeOptions {
  port: number;
  host?: string;
  /** SQLite file path or postgres:// URL. */
  database: string;
  /** Defaults to http://localhost:PORT. */
  publicUrl?: string;
  mode?: GatewayMode;
  logLevel?: string;
  nonceTtlMs?: number;
  longPollTimeoutMs?: number;
  cancelLockMs?: number;
  /** How long users, wallets and rates are reused before they are read again (default 1000). */
  credentialCacheMs?: number;
  /** How long a refund waits for the outcome of other refunds of its order that decide it (default 10000). */
  refundWaitMs?: number;
  /** PostgreSQL: connections in the pool (default 10); the status listener holds one more. */
  poolSize?: number;
  /** SQLite: `full` (default) answers a write only once it is on disk; `normal` may lose the last ones on a power cut. */
  sqliteSynchronous?: 'full' | 'normal';
  /** SQLite: how the write-ahead log is flushed to disk (fdatasync); tests hold a flush with it. */
  sqliteFlush?: (fd: number) => Promise<void>;
  /** Result notification delivery (see notify/settings.ts); unset fields take the defaults. */
  notify?: Partial<NotifySettings>;
  /** Opens the channel accounts' secrets (GATEWAY_MASTER_KEY); required once any account is stored. */
  masterKey?: MasterKey;
  /** How long a pending order lives before it is closed at its provider and ends failed (default 24 h). */
  orderExpiryMs?: number;
  /** A create for a wallet and method without a fee plan in effect is refused with 305 (default false). */
  feePlansRequired?: boolean;
  /** The daily import of the providers' statements (default on; STATEMENT_IMPORT=false turns it off). */
  statementImport?: boolean;
  /** The operator's details for the payout bank files the console makes. */
  bankFiles?: BankFileSettings;
  /** When a provider is first asked about a payment whose notification has not come (default 60000). */
  channelReconcileAfterMs?: number;
  /** How long a call to a provider may take before its outcome counts as unknown (default 10000). */
  providerTimeoutMs?: number;
  /** How often each instance runs a retention pass (default 1 h; 0: never). */
  retentionIntervalMs?: number;
  /** Attempts of notifications delivered more than this many days ago are removed (default 30). */
  retentionAttemptsDays?: number;
  /** TRUST_PROXY: `true`, or the proxies' addresses/CIDRs (comma-separated), whose X-Forwarded-* headers are believed. */
  trustProxy?: boolean | string;
  /** METRICS_TOKEN: /metrics on the main port, for `Authorization: Bearer <token>` only. */
  metricsToken?: string;
  /** METRICS_PORT: /metrics on a listener of its own (0: any free port), on metricsHost (METRICS_HOST, default 127.0.0.1). */
  metricsPort?: number;
  metricsHost?: string;
  /** Tracing (OpenTelemetry): on when given; spans go to `exporter`, or over OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT. */
  tracing?: { exporter?: SpanExporter };
  /** SMTP_URL and SMTP_FROM: the console's invitations and password links by email. */
  smtp?: SmtpSettings;
  /** Replaces the connectors (tests). */
  connectors?: (defaults: Connectors) => Connectors;
}

export interface RunningGateway {
  app: FastifyInstance;
  ctx: GatewayContext;
  store: SqlStore;
  /** Delivers result notifications; undefined when notify.enabled is false. */
  notifier: NotificationWorker | undefined;
  /** The address the server listens on, e.g. http://127.0.0.1:8080. */
  url: string;
  /** The metrics listener's address (METRICS_PORT), when there is one. */
  metricsUrl?: string;
  close(): Promise<void>;
}

export function loggerOptions(level: string) {
  return {
    level,
    serializers: {
      req(req: { method: string; url: string; id: string; ip?: string }) {
        return { method: req.method, url: redactUrl(req.url), reqId: req.id, remoteAddress: req.ip };
      },
    },
  };
}

/** Opens the database, builds the app and starts listening. */
export async function startGateway(opts: ServeOptions): Promise<RunningGateway> {
  const notifySettings = resolveNotifySettings(opts.notify);
  const retentionSettings = resolveRetentionSettings({
    intervalMs: opts.retentionIntervalMs,
    attemptsDays: opts.retentionAttemptsDays,
  });
  const mailer = opts.smtp ? new SmtpMailer(opts.smtp) : undefined;
  // OpenTelemetry's SDK and exporter (about 8 MB of memory) are loaded only when tracing is on.
  const tracing: OtelTracing | undefined = opts.tracing
    ? new (await import('./tracing/otel.js')).OtelTracing({ ...opts.tracing, version: gatewayVersion() })
    : undefined;
  // PostgreSQL with several hosts: the pool's moves between them, logged once the logger exists.
  const hostLog: { warn?: (obj: object, msg: string) => void } = {};
  const store = await openStore(opts.database, {
    poolSize: opts.poolSize,
    onHostChange: (e) =>
      'none' in e
        ? hostLog.warn?.({ hosts: e.none }, 'no writable PostgreSQL primary reachable; requests answer code 1 (retry)')
        : hostLog.warn?.({ from: e.from, to: e.to }, 'PostgreSQL primary changed; connections moved to the new one'),
    serving: true,
    synchronous: opts.sqliteSynchronous,
    flushFile: opts.sqliteFlush,
    ...(tracing && { onQuery: (ms: number) => tracing.statement(ms) }),
  });
  // With PostgreSQL, several instances may share the database: status changes reach them by LISTEN/NOTIFY.
  const signals =
    store.engine === 'postgres'
      ? new PgStatusSignals(splitPostgresHosts(opts.database).urls, {
          onAdminChange: () => store.accounts.noteExternalChange(),
        })
      : new LocalStatusSignals();
  let ctx: GatewayContext | undefined;
  let app: FastifyInstance | undefined;
  let notifier: NotificationWorker | undefined;
  let log: BatchedOutput | undefined;
  let built: ReturnType<typeof buildConnectors> | undefined;
  let metricsListener: Awaited<ReturnType<typeof startMetricsListener>> | undefined;
  try {
    const config: GatewayConfig = {
      ...DEFAULT_CONFIG,
      publicUrl: '',
      mode: opts.mode ?? 'sandbox',
      ...(opts.nonceTtlMs !== undefined && { nonceTtlMs: opts.nonceTtlMs }),
      ...(opts.longPollTimeoutMs !== undefined && { longPollTimeoutMs: opts.longPollTimeoutMs }),
      ...(opts.cancelLockMs !== undefined && { cancelLockMs: opts.cancelLockMs }),
      ...(opts.credentialCacheMs !== undefined && { credentialCacheMs: opts.credentialCacheMs }),
      ...(opts.refundWaitMs !== undefined && { refundWaitMs: opts.refundWaitMs }),
      ...(opts.orderExpiryMs !== undefined && { orderExpiryMs: opts.orderExpiryMs }),
      ...(opts.feePlansRequired !== undefined && { feePlansRequired: opts.feePlansRequired }),
      ...(opts.bankFiles !== undefined && { bankFiles: opts.bankFiles }),
      ...(opts.channelReconcileAfterMs !== undefined && { channelReconcileAfterMs: opts.channelReconcileAfterMs }),
    };
    if (config.orderExpiryMs < config.nonceTtlMs)
      throw new Error(
        `ORDER_EXPIRY_MS (${config.orderExpiryMs}) must be at least NONCE_TTL_MS (${config.nonceTtlMs}): an order must outlive its payment link`,
      );
    // A provider payment expires with its order, and Alipay takes a time_expire at most 15 days ahead.
    if (config.orderExpiryMs > MAX_ORDER_EXPIRY_MS)
      throw new Error(
        `ORDER_EXPIRY_MS (${config.orderExpiryMs}) must be at most ${MAX_ORDER_EXPIRY_MS} (15 days): Alipay refuses a payment that lives longer`,
      );
    // Every channel account must open under the master key: found now, not at a customer's payment.
    const accounts = await checkStoredAccounts(store.accounts, opts.masterKey);
    const now = () => Date.now();
    built = buildConnectors({
      publicUrl: () => config.publicUrl,
      sandboxState: async (order_id) => (await store.transactions.find(order_id))?.channel_state,
      timeoutMs: opts.providerTimeoutMs ?? 10_000,
    });
    const given = opts.connectors ? opts.connectors(built.connectors) : built.connectors;
    const metrics =
      opts.metricsToken !== undefined || opts.metricsPort !== undefined ? new PrometheusMetrics(store) : undefined;
    const measured = metrics ? metrics.instrument(given) : given;
    const connectors = tracing ? tracing.instrument(measured) : measured;
    const master = opts.masterKey;
    const credentials = new CredentialCache(
      store.accounts,
      config.credentialCacheMs,
      now,
      (stored) => openAccount(master, stored),
      (wallet_id) => store.ledger.listLimits(wallet_id),
    );
    ctx = {
      store,
      credentials,
      connectors,
      signals,
      config,
      log: SILENT_LOG,
      now,
      ...(master && { masterKey: master }),
      ...(metrics && { metrics }),
      ...(tracing && { tracing }),
      ...(mailer && { mailer }),
    };
    if (opts.logLevel !== 'silent') log = new BatchedOutput(process.stdout.fd);
    app = await buildApp(ctx, {
      logger: log ? { ...loggerOptions(opts.logLevel ?? 'info'), stream: log } : false,
      // The sandbox's payment app exists only in sandbox mode.
      channelRoutes:
        config.mode === 'sandbox' ? [sandboxRoutes, providerNotificationRoutes] : [providerNotificationRoutes],
      ...(opts.trustProxy !== undefined && { trustProxy: opts.trustProxy }),
      notifications: () => (!notifySettings.enabled ? 'off' : notifier?.running ? 'running' : 'stopped'),
      ...(metrics && { metrics, metricsToken: opts.metricsToken }),
      ...(tracing && { tracing }),
    });
    if (metrics && opts.metricsPort !== undefined)
      metricsListener = await startMetricsListener(metrics, opts.metricsPort, opts.metricsHost ?? '127.0.0.1');
    ctx.log = app.log;
    hostLog.warn = (obj, msg) => app?.log.warn(obj, msg);
    if (signals instanceof PgStatusSignals) await signals.start(app.log);
    const address = await app.listen({ port: opts.port, host: opts.host ?? '0.0.0.0' });
    const port = (app.server.address() as { port: number }).port;
    config.publicUrl = (opts.publicUrl ?? `http://localhost:${port}`).replace(/\/+$/, '');
    (app.log as Logger).info(
      {
        publicUrl: config.publicUrl,
        mode: config.mode,
        database: store.engine,
        channelAccounts: accounts,
        masterKey: master?.id ?? null,
      },
      'gateway ready',
    );
    if (config.mode === 'live' && accounts === 0) {
      (app.log as Logger).warn(
        'live mode without any channel account: every create is refused (302) until one is set with gateway channel set',
      );
    }
    if (master === undefined) {
      (app.log as Logger).warn(
        'no master key (GATEWAY_MASTER_KEY or GATEWAY_MASTER_KEY_FILE): a channel account set while this gateway runs cannot be opened by it, and its orders fail with code 1 until it is restarted with the key',
      );
    }
    if (config.mode === 'live' && opts.publicUrl === undefined) {
      (app.log as Logger).warn(
        { publicUrl: config.publicUrl },
        'live mode without PUBLIC_URL: providers are given notification and return addresses on localhost, which they cannot reach',
      );
    }
    const url = address.replace('0.0.0.0', '127.0.0.1').replace('[::]', '127.0.0.1');
    if (store.engine === 'sqlite') {
      // This process alone serves the file (the serving lock): a claim now was left by a stopped one.
      const released = await store.outbox.releaseClaims();
      if (released > 0)
        (app.log as Logger).info({ released }, 'notifications claimed by the previous run are due again');
    }
    if (notifySettings.enabled) {
      notifier = new NotificationWorker({
        store,
        mode: config.mode,
        settings: notifySettings,
        log: app.log.child({ component: 'notify' }),
        ...(metrics && { observe: (outcome: AttemptOutcome, after?: number) => metrics.attempt(outcome, after) }),
        ...(tracing && { trace: tracing }),
      });
      ctx.notifier = notifier;
      notifier.start();
    }
    // SQLite: this process owns the database, so a pending refund at start is one a crash left.
    const stopRefundRecovery = startRefundRecovery(
      ctx,
      app.log.child({ component: 'refunds' }),
      store.engine === 'sqlite' ? 0 : undefined,
    );
    const stopChannelJobs = startChannelJobs(ctx, app.log.child({ component: 'channels' }));
    const consoleCleanup = startConsoleCleanup(ctx, app.log.child({ component: 'console' }));
    const stopRetention = startRetention(ctx, app.log.child({ component: 'retention' }), retentionSettings);
    const stopSettlement = startSettlement(ctx, app.log.child({ component: 'settlement' }));
    const stopStatements =
      opts.statementImport === false
        ? async () => {}
        : startStatementJob(ctx, app.log.child({ component: 'reconciliation' }));
    const running = app;
    const worker = notifier;
    const logs = log;
    const connectorsBuilt = built;
    const metricsServer = metricsListener;
    return {
      app: running,
      ctx,
      store,
      url,
      notifier: worker,
      ...(metricsServer && { metricsUrl: metricsServer.url }),
      async close() {
        await metricsServer?.close();
        clearInterval(consoleCleanup);
        await stopRetention();
        await stopSettlement();
        await stopStatements();
        await stopChannelJobs();
        await stopRefundRecovery();
        await worker?.stop();
        await signals.close();
        await running.close();
        await connectorsBuilt?.close();
        await store.close();
        await tracing?.shutdown();
        mailer?.close();
        logs?.stop();
      },
    };
  } catch (e) {
    await metricsListener?.close();
    await notifier?.stop();
    await signals.close();
    await app?.close().catch(() => {});
    await built?.close().catch(() => {});
    await store.close();
    await tracing?.shutdown();
    mailer?.close();
    log?.stop();
    throw e;
  }
}

/** Every 10 minutes: expired console sessions and spent throttle counts go (usecases/console-auth.ts). */
function startConsoleCleanup(ctx: GatewayContext, log: GatewayContext['log']): NodeJS.Timeout {
  const timer = setInterval(() => {
    expireConsoleState(ctx, SESSION_POLICY).then(
      (removed) => {
        if (removed.sessions + removed.throttle > 0)
          log.info(removed, 'expired console sessions and throttle counts removed');
      },
      (e: unknown) => log.error({ err: e }, 'console cleanup failed; trying again in 10 minutes'),
    );
  }, 10 * 60_000);
  timer.unref();
  return timer;
}
