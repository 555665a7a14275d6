// Status signals across gateway instances that share one PostgreSQL database.
//
// The store sends `NOTIFY gateway_status, '<order_id>'` in the transaction that changes an order's
// status (TransactionsRepo.settle), so the notification goes out exactly when the change commits, from
// whichever instance made it. Each instance keeps one dedicated connection that LISTENs on the
// channel and wakes its own waiters. A NOTIFY only says "look again": the waiters of that order
// re-read it, in one read they share.
//
// Notifications sent while the listening connection is down are lost, so after a reconnect every
// local waiter is woken to re-read; LISTEN is active again before that, so no change is missed.
import pg from 'pg';
import type { Transaction } from '../domain/transaction.js';
import {
  ADMIN_NOTIFY_CHANNEL,
  STATUS_NOTIFY_CHANNEL,
  type OrderReader,
  type StatusSignals,
  type WaitAbort,
} from '../ports/signals.js';
import { LocalStatusSignals } from './status-signals.js';

export interface SignalsLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface PgStatusSignalsOptions {
  /** First delay before reconnecting the listener; it doubles after each failure up to maxBackoffMs. */
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /**
   * How often the listening connection is checked with `select 1`. A check that gets no answer
   * within pingTimeoutMs counts as a lost connection (a half-open TCP connection never errors).
   */
  pingIntervalMs?: number;
  pingTimeoutMs?: number;
  /** application_name of the listening connection, as seen in pg_stat_activity. */
  applicationName?: string;
  /** Called when users, wallets or rates changed elsewhere (or may have, after a reconnect), so cached ones are forgotten. */
  onAdminChange?: () => void;
}

const DEFAULTS: Required<PgStatusSignalsOptions> = {
  minBackoffMs: 100,
  maxBackoffMs: 5_000,
  pingIntervalMs: 10_000,
  pingTimeoutMs: 5_000,
  applicationName: 'gateway-status-listener',
  onAdminChange: () => {},
};

const SILENT: SignalsLogger = { info() {}, warn() {} };

export class PgStatusSignals implements StatusSignals {
  private readonly local = new LocalStatusSignals();
  private readonly opts: Required<PgStatusSignalsOptions>;
  private log: SignalsLogger = SILENT;
  private client: pg.Client | null = null;
  private closed = false;
  private backoffMs: number;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private pingTimer: NodeJS.Timeout | null = null;
  /** How many times the listening connection has been established; for tests and metrics. */
  connections = 0;

  /** The host the listener connected to last: tried first next time. */
  private hostIndex = 0;

  /**
   * `urls`: one single-host URL per PostgreSQL host (DATABASE_URL split by host): the listener
   * connects to the writable one, where the NOTIFYs are sent (a standby cannot LISTEN).
   */
  constructor(
    private readonly urls: readonly string[],
    options: PgStatusSignalsOptions = {},
  ) {
    this.opts = { ...DEFAULTS, ...options };
    this.backoffMs = this.opts.minBackoffMs;
  }

  get waiting(): number {
    return this.local.waiting;
  }

  /** Whether the listening connection is up right now. */
  get listening(): boolean {
    return this.client !== null;
  }

  /** Opens the listening connection; rejects when the first attempt fails, so a broken setup fails at start. */
  async start(log?: SignalsLogger): Promise<void> {
    if (log) this.log = log;
    await this.connect();
  }

  /** Local waiters only: the cross-instance NOTIFY was sent by the store with the change itself. */
  publish(order_id: string, order?: Transaction): void {
    this.local.wakeLocal(order_id, order);
  }

  /** While the listener is down, signals are lost: its reconnect makes every waiter read again (wakeAll). */
  mark(): number {
    return this.local.mark();
  }

  wait(
    order_id: string,
    timeoutMs: number,
    reader: OrderReader,
    abort?: WaitAbort,
    since?: number,
  ): Promise<Transaction | undefined> {
    return this.local.wait(order_id, timeoutMs, reader, abort, since);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.stopPing();
    const client = this.client;
    this.client = null;
    await this.local.close();
    await client?.end().catch(() => {});
  }

  /** Connects to the first writable host, from the one that worked last. */
  private async connect(): Promise<void> {
    const why: string[] = [];
    for (let k = 0; k < this.urls.length; k++) {
      const i = (this.hostIndex + k) % this.urls.length;
      try {
        await this.connectTo(this.urls[i]);
        this.hostIndex = i;
        return;
      } catch (e) {
        why.push(e instanceof Error ? e.message : String(e));
      }
    }
    throw new Error(`no writable PostgreSQL host to listen on: ${why.join('; ')}`);
  }

  private async connectTo(url: string): Promise<void> {
    const client = new pg.Client({
      connectionString: url,
      // A host that is gone without refusing: the next one is tried.
      connectionTimeoutMillis: 5_000,
      application_name: this.opts.applicationName,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
    });
    client.on('notification', (msg) => {
      if (msg.channel === STATUS_NOTIFY_CHANNEL && msg.payload) this.local.wakeLocal(msg.payload);
      else if (msg.channel === ADMIN_NOTIFY_CHANNEL) this.opts.onAdminChange();
    });
    // Registered before connecting: an 'error' event without a listener would crash the process.
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client, new Error('connection ended')));
    try {
      await client.connect();
      const { rows } = await client.query<{ transaction_read_only: string }>('show transaction_read_only');
      if (rows[0]?.transaction_read_only === 'on') throw new Error('a read-only host (a standby)');
      await client.query(`LISTEN ${STATUS_NOTIFY_CHANNEL}`);
      await client.query(`LISTEN ${ADMIN_NOTIFY_CHANNEL}`);
    } catch (e) {
      await client.end().catch(() => {});
      throw e;
    }
    if (this.closed) {
      await client.end().catch(() => {});
      return;
    }
    this.client = client;
    this.connections++;
    this.backoffMs = this.opts.minBackoffMs;
    this.startPing(client);
  }

  private lost(client: pg.Client, err: Error): void {
    if (client !== this.client) return;
    this.client = null;
    this.stopPing();
    void client.end().catch(() => {});
    if (this.closed) return;
    this.log.warn({ err: err.message }, 'status listener connection lost; reconnecting');
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    // Jitter spreads the reconnects of many instances after a database restart.
    const delay = Math.round(this.backoffMs * (0.75 + Math.random() * 0.5));
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      if (this.closed) return;
      this.connect().then(
        () => {
          if (this.closed) return;
          this.log.info({ connections: this.connections }, 'status listener reconnected');
          // Whatever was announced while the connection was down is re-read.
          this.opts.onAdminChange();
          this.local.wakeAll();
        },
        (err: unknown) => {
          if (this.closed) return;
          this.backoffMs = Math.min(this.backoffMs * 2, this.opts.maxBackoffMs);
          this.log.warn(
            { err: err instanceof Error ? err.message : String(err), retryInMs: this.backoffMs },
            'status listener reconnect failed',
          );
          this.scheduleReconnect();
        },
      );
    }, delay);
    this.reconnectTimer.unref();
  }

  private startPing(client: pg.Client): void {
    let inFlight = false;
    this.pingTimer = setInterval(() => {
      if (inFlight) return;
      inFlight = true;
      const timeout = setTimeout(
        () => this.lost(client, new Error(`no answer to a ping within ${this.opts.pingTimeoutMs} ms`)),
        this.opts.pingTimeoutMs,
      );
      timeout.unref();
      client.query('select 1').then(
        () => {
          clearTimeout(timeout);
          inFlight = false;
        },
        (err: unknown) => {
          clearTimeout(timeout);
          this.lost(client, err instanceof Error ? err : new Error(String(err)));
        },
      );
    }, this.opts.pingIntervalMs);
    this.pingTimer.unref();
  }

  private stopPing(): void {
    if (this.pingTimer) clearInterval(this.pingTimer);
    this.pingTimer = null;
  }
}
