import pg from 'pg';
import type { PostgresPool, PostgresPoolClient } from 'kysely';
import { DatabaseConflict, DatabaseUnavailable } from '../../ports/store.js';
import { statementName } from '../statement-names.js';
import type { PostgresHosts } from './hosts.js';

// The pool Kysely draws its connections from. With several hosts in DATABASE_URL it is one pg.Pool
// per host and connects to the one that takes writes: a new connection (and every connection
// after a failure, once) is asked `show transaction_read_only`, so a standby is never used, nor an
// old primary brought back read-only. When the host in use fails (refused, reset, shut down,
// read-only) its connections are dropped and the next checkout tries the hosts in turn, from the
// one that worked last. A statement that failed for that reason is a DatabaseUnavailable: the
// request answers "retry", never "internal error". With one host it is the same, less the search.
// A statement undone by a deadlock or a serialization failure is run again when it stood alone;
// inside a transaction the unit is undone, a DatabaseConflict, and the request answers "retry" too.

export interface FailoverPoolOptions {
  /** Connections per host's pool. */
  max: number;
  /** How long connecting to one host may take before the next is tried. */
  connectTimeoutMs: number;
  /** Told when the pool moves to another host (or back to one after none was reachable), and once when it finds none. */
  onSwitch?: (event: { from: string; to: string } | { none: string }) => void;
}

const CHECKED = Symbol('checked in generation');
const NAMED = Symbol('gateway named statements');
type Client = pg.PoolClient & { [CHECKED]?: number; [NAMED]?: true };

/** Errors that mean "the database is not there to write to now", not "this statement is wrong". */
export function isUnavailable(e: unknown): boolean {
  const err = e as { code?: unknown; message?: unknown } | null;
  const code = typeof err?.code === 'string' ? err.code : '';
  // Class 08 is the connection's, but 08P01 (protocol violation) is also a statement's fault.
  if ((/^08/.test(code) && code !== '08P01') || ['57P01', '57P02', '57P03', '25006', '53300'].includes(code))
    return true;
  if (['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN'].includes(code))
    return true;
  const message = typeof err?.message === 'string' ? err.message : '';
  return /Connection terminated|not queryable|timeout exceeded when trying to connect|Connection ended|connection is closed/i.test(
    message,
  );
}

/** A deadlock's victim or a serialization failure: the unit was undone, and may simply run again. */
export function isConflict(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return code === '40P01' || code === '40001';
}

const BEGIN = /^\s*(begin|start transaction)\b/i;
const END = /^\s*(commit|rollback)\s*$/i;
const CONFLICT_RETRIES = 3;

/** A few milliseconds, more each time and never the same for two statements, so the two that collided do not meet again. */
function pause(tries: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, (tries + 1) * (5 + Math.random() * 20)));
}

export class FailoverPool implements PostgresPool {
  private readonly pools: pg.Pool[];
  private current = 0;
  /** Raised on every failure that may be a failover: connections checked before it are checked again. */
  private generation = 0;
  /** No host took a connection at the last try (told once, until one does). */
  private down = false;

  constructor(
    private readonly hosts: PostgresHosts,
    private readonly opts: FailoverPoolOptions,
  ) {
    this.pools = hosts.urls.map((connectionString) => {
      const pool = new pg.Pool({
        connectionString,
        max: opts.max,
        connectionTimeoutMillis: opts.connectTimeoutMs,
        // A primary whose machine is gone sends no reset: probes find an idle connection dead.
        keepAlive: true,
        keepAliveInitialDelayMillis: 10_000,
      });
      // An idle connection cut by the server (a restart, a failover, pg_terminate_backend) is
      // reported here; without a listener it would be an uncaught exception that ends the process.
      // The pool has already dropped it.
      pool.on('error', () => {
        this.generation++;
      });
      return pool;
    });
  }

  /** The host in use (host:port). */
  get host(): string {
    return this.hosts.labels[this.current];
  }

  /** All hosts' pools together, for the metrics. */
  get counts(): { total: number; idle: number; waiting: number } {
    const sum = { total: 0, idle: 0, waiting: 0 };
    for (const p of this.pools) {
      sum.total += p.totalCount;
      sum.idle += p.idleCount;
      sum.waiting += p.waitingCount;
    }
    return sum;
  }

  async connect(): Promise<PostgresPoolClient> {
    const why: string[] = [];
    const n = this.pools.length;
    for (let k = 0; k < n; k++) {
      const i = (this.current + k) % n;
      const label = this.hosts.labels[i];
      let client: Client;
      const pool = this.pools[i];
      try {
        client = await pool.connect();
      } catch (e) {
        // Every connection of the pool busy for connectTimeoutMs: the database is slow, not gone.
        if (pool.totalCount >= this.opts.max && /timeout exceeded/i.test(describe(e)))
          throw new DatabaseUnavailable(
            `all ${this.opts.max} database connections stayed busy for ${this.opts.connectTimeoutMs} ms`,
            { cause: e },
          );
        why.push(`${label}: ${describe(e)}`);
        continue;
      }
      prepare(client);
      if (client[CHECKED] !== this.generation) {
        // The generation before asking: a failure meanwhile makes the next checkout ask again.
        const generation = this.generation;
        try {
          const r = await client.query<{ transaction_read_only: string }>('show transaction_read_only');
          if (r.rows[0]?.transaction_read_only === 'on') {
            client.release(true);
            why.push(`${label}: read-only (a standby)`);
            continue;
          }
          client[CHECKED] = generation;
        } catch (e) {
          client.release(true);
          why.push(`${label}: ${describe(e)}`);
          continue;
        }
      }
      if (i !== this.current || this.down) {
        this.opts.onSwitch?.({ from: this.hosts.labels[this.current], to: label });
        this.current = i;
        this.down = false;
      }
      return this.wrap(client);
    }
    this.generation++;
    const none = why.join('; ');
    if (!this.down) this.opts.onSwitch?.({ none });
    this.down = true;
    throw new DatabaseUnavailable(`no writable PostgreSQL primary: ${none}`);
  }

  async end(): Promise<void> {
    await Promise.all(this.pools.map((p) => p.end()));
  }

  /**
   * The client as Kysely uses it: its failures that mean the database is away become
   * DatabaseUnavailable, and such a client is dropped when given back rather than reused.
   */
  private wrap(client: Client): PostgresPoolClient {
    let broken = false;
    /** Between Kysely's begin and its commit or rollback: a failed statement undoes the whole unit. */
    let inTransaction = false;
    const query = client.query.bind(client) as (...args: unknown[]) => Promise<pg.QueryResult>;
    const failed = (e: unknown): never => {
      if (isConflict(e)) throw new DatabaseConflict(`the database undid the unit: ${describe(e)}`, { cause: e });
      if (!isUnavailable(e)) throw e;
      broken = true;
      this.generation++;
      throw new DatabaseUnavailable(`the database connection failed: ${describe(e)}`, { cause: e });
    };
    return {
      query: ((...args: unknown[]) => {
        const text = typeof args[0] === 'string' ? args[0] : '';
        const begins = BEGIN.test(text);
        const ends = END.test(text);
        if (begins) inTransaction = true;
        else if (ends) inTransaction = false;
        // Never a commit again: one that failed undid its transaction, which a second would not say.
        const standalone = !inTransaction && !begins && !ends;
        const result: unknown = query(...args);
        // A cursor (a streamed export) is returned as it is: its reads fail on their own.
        if (!(result instanceof Promise)) return result;
        // A statement on its own that lost a deadlock (or a serialization check) was undone whole:
        // running it again is what its caller would do, without making the request answer "retry".
        const again = (e: unknown, tries: number): Promise<pg.QueryResult> =>
          standalone && tries < CONFLICT_RETRIES && isConflict(e)
            ? pause(tries).then(() => query(...args).catch((e2: unknown) => again(e2, tries + 1)))
            : failed(e);
        return result.catch((e: unknown) => again(e, 0));
      }) as unknown as PostgresPoolClient['query'],
      release: () => client.release(broken || undefined),
    };
  }
}

/**
 * Once per connection: its statements compiled once (statement-names.ts) run as named prepared
 * statements, which each connection parses and plans once. (A pooler in transaction mode in front
 * of the database must support protocol-level prepared statements, as PgBouncer does from 1.21.)
 * And an error listener: pg-pool listens for a connection's errors only while it is idle; one the
 * server ends while a request holds it would emit 'error' with no listener, which ends the process.
 */
function prepare(client: Client): void {
  if (client[NAMED]) return;
  client.on('error', () => {});
  const query = client.query.bind(client) as (...args: unknown[]) => Promise<pg.QueryResult>;
  (client as unknown as { query: unknown }).query = (text: unknown, values?: unknown[]) => {
    const name = typeof text === 'string' ? statementName(text) : undefined;
    return name ? query({ name, text, values }) : query(text, values);
  };
  client[NAMED] = true;
}

function describe(e: unknown): string {
  const err = e as { code?: unknown; message?: unknown };
  const message = typeof err?.message === 'string' && err.message !== '' ? err.message : String(e);
  return typeof err?.code === 'string' && !message.includes(err.code) ? `${err.code} ${message}` : message;
}
