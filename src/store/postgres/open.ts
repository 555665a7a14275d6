import pg from 'pg';
import { Kysely, PostgresDialect, type PostgresPool } from 'kysely';
import { PostgresAccounts } from '../accounts/postgres.js';
import { PostgresOutbox } from '../outbox/postgres.js';
import { queryLog } from '../query-log.js';
import { PostgresRefunds } from '../refunds/postgres.js';
import { PostgresRetention } from '../retention/postgres.js';
import type { Database } from '../schema.js';
import { SqlStore } from '../sql-store.js';
import { statementName } from '../statement-names.js';
import { PostgresTransactions } from '../transactions/postgres.js';

// int8 (bigint) columns hold epoch milliseconds and minor units, all within 2^53: read them as numbers.
pg.types.setTypeParser(pg.types.builtins.INT8, (v: string) => Number(v));

/** The store on a PostgreSQL database, with a pool of `poolSize` connections (not yet migrated). */
export function openPostgresStore(url: string, poolSize = 10, onQuery?: (ms: number) => void): SqlStore {
  const pool = new pg.Pool({ connectionString: url, max: poolSize });
  // An idle connection cut by the server (a restart, a failover, pg_terminate_backend) is reported
  // here; without a listener it would be an uncaught exception that ends the process. The pool has
  // already dropped that connection and opens a new one for the next query.
  pool.on('error', () => {});
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: namedStatementsPool(pool) }),
    ...queryLog(onQuery),
  });
  return new SqlStore(
    'postgres',
    db,
    {
      transactions: new PostgresTransactions(db),
      refunds: new PostgresRefunds(db),
      outbox: new PostgresOutbox(db),
      retention: new PostgresRetention(db),
      accounts: new PostgresAccounts(db),
    },
    async () => {},
    { pool: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }) },
  );
}

const NAMED = Symbol('gateway named statements');

/**
 * The pool as Kysely sees it: its clients run the statements compiled once (statement-names.ts)
 * as named prepared statements, which each connection parses and plans once, instead of sending
 * and parsing their text on every call. (A connection pooler in transaction mode in front of the
 * database must support protocol-level prepared statements, as PgBouncer does from 1.21.)
 */
function namedStatementsPool(pool: pg.Pool): PostgresPool {
  const connect = async (): Promise<pg.PoolClient> => {
    const client = (await pool.connect()) as pg.PoolClient & { [NAMED]?: true };
    if (!client[NAMED]) {
      // pg-pool listens for a connection's errors only while it is idle. One the server ends while a
      // request holds it (a restart, a failover, pg_terminate_backend) would emit 'error' with no
      // listener, which ends the process. Its statement fails with the error anyway, and the pool
      // drops it when it is given back (it is no longer queryable).
      client.on('error', () => {});
      const query = client.query.bind(client) as (...args: unknown[]) => Promise<pg.QueryResult>;
      (client as unknown as { query: unknown }).query = (text: unknown, values?: unknown[]) => {
        const name = typeof text === 'string' ? statementName(text) : undefined;
        return name ? query({ name, text, values }) : query(text, values);
      };
      client[NAMED] = true;
    }
    return client;
  };
  return { connect, end: () => pool.end() };
}
