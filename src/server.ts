import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { sandboxRoutes } from './channels/sandbox/app-routes.js';
import { SandboxChannel } from './channels/sandbox/channel.js';
import { buildApp, redactUrl } from './http/app.js';
import { BatchedOutput } from './log-output.js';
import { resolveNotifySettings, type NotifySettings } from './notify/settings.js';
import { NotificationWorker } from './notify/worker.js';
import { startRefundRecovery } from './usecases/resume-refunds.js';
import { PgStatusSignals } from './signals/pg-status-signals.js';
import { LocalStatusSignals } from './signals/status-signals.js';
import { openStore } from './store/open.js';
import type { SqlStore } from './store/sql-store.js';
import { CredentialCache } from './usecases/credentials.js';
import { DEFAULT_CONFIG, type GatewayConfig, type GatewayContext, type GatewayMode } from './usecases/context.js';

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
  /** Result notification delivery (see notify/settings.ts); unset fields take the defaults. */
  notify?: Partial<NotifySettings>;
}

export interface RunningGateway {
  app: FastifyInstance;
  ctx: GatewayContext;
  store: SqlStore;
  /** Delivers result notifications; undefined when notify.enabled is false. */
  notifier: NotificationWorker | undefined;
  /** The address the server listens on, e.g. http://127.0.0.1:8080. */
  url: string;
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
  const store = await openStore(opts.database, { poolSize: opts.poolSize, serving: true, synchronous: opts.sqliteSynchronous });
  // With PostgreSQL, several instances may share the database: status changes reach them by LISTEN/NOTIFY.
  const signals =
    store.engine === 'postgres' ? new PgStatusSignals(opts.database, { onAdminChange: () => store.accounts.noteExternalChange() }) : new LocalStatusSignals();
  let ctx: GatewayContext | undefined;
  let app: FastifyInstance | undefined;
  let notifier: NotificationWorker | undefined;
  let log: BatchedOutput | undefined;
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
    };
    const channel = new SandboxChannel(() => config.publicUrl);
    const now = () => Date.now();
    ctx = { store, credentials: new CredentialCache(store.accounts, config.credentialCacheMs, now), channel, signals, config, now };
    if (opts.logLevel !== 'silent') log = new BatchedOutput(process.stdout.fd);
    app = await buildApp(ctx, {
      logger: log ? { ...loggerOptions(opts.logLevel ?? 'info'), stream: log } : false,
      // The sandbox's payment app exists only in sandbox mode.
      channelRoutes: config.mode === 'sandbox' ? [sandboxRoutes] : [],
    });
    if (signals instanceof PgStatusSignals) await signals.start(app.log);
    const address = await app.listen({ port: opts.port, host: opts.host ?? '0.0.0.0' });
    const port = (app.server.address() as { port: number }).port;
    config.publicUrl = (opts.publicUrl ?? `http://localhost:${port}`).replace(/\/+$/, '');
    (app.log as Logger).info({ publicUrl: config.publicUrl, mode: config.mode, database: store.engine }, 'gateway ready');
    if (config.mode === 'live' && channel.name === 'sandbox') {
      // Only the sandbox connector exists so far: live mode gives the production rules (callback
      // safety, no sandbox routes) but payments cannot complete until a real channel is added.
      (app.log as Logger).warn('live mode without a live payment channel: payments can be created but not paid');
    }
    const url = address.replace('0.0.0.0', '127.0.0.1').replace('[::]', '127.0.0.1');
    if (store.engine === 'sqlite') {
      // This process alone serves the file (the serving lock): a claim now was left by a stopped one.
      const released = await store.outbox.releaseClaims();
      if (released > 0) (app.log as Logger).info({ released }, 'notifications claimed by the previous run are due again');
    }
    if (notifySettings.enabled) {
      notifier = new NotificationWorker({ store, mode: config.mode, settings: notifySettings, log: app.log.child({ component: 'notify' }) });
      ctx.notifier = notifier;
      notifier.start();
    }
    // SQLite: this process owns the database, so a pending refund at start is one a crash left.
    const stopRefundRecovery = startRefundRecovery(ctx, app.log.child({ component: 'refunds' }), store.engine === 'sqlite' ? 0 : undefined);
    const running = app;
    const worker = notifier;
    const logs = log;
    return {
      app: running,
      ctx,
      store,
      url,
      notifier: worker,
      async close() {
        await stopRefundRecovery();
        await worker?.stop();
        await signals.close();
        await running.close();
        await store.close();
        logs?.stop();
      },
    };
  } catch (e) {
    await notifier?.stop();
    await signals.close();
    await app?.close().catch(() => {});
    await store.close();
    log?.stop();
    throw e;
  }
}
