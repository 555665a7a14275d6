import pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import { PostgresAccounts } from '../accounts/postgres.js';
import { PostgresOutbox } from '../outbox/postgres.js';
import { queryLog } from '../query-log.js';
import { PostgresRefunds } from '../refunds/postgres.js';
import { PostgresRetention } from '../retention/postgres.js';
import type { Database } from '../schema.js';
import { SqlStore } from '../sql-store.js';
import { PostgresTransactions } from '../transactions/postgres.js';
import { FailoverPool, type FailoverPoolOptions } from './failover-pool.js';
import { splitPostgresHosts } from './hosts.js';

// int8 (bigint) columns hold epoch milliseconds and minor units, all within 2^53: read them as numbers.
pg.types.setTypeParser(pg.types.builtins.INT8, (v: string) => Number(v));

/**
 * The store on a PostgreSQL database (not yet migrated): `url` may name several hosts (hosts.ts),
 * of which the writable one is used (failover-pool.ts), with a pool of `poolSize` connections.
 */
export function openPostgresStore(
  url: string,
  poolSize = 10,
  onQuery?: (ms: number) => void,
  onSwitch?: FailoverPoolOptions['onSwitch'],
): SqlStore {
  const pool = new FailoverPool(splitPostgresHosts(url), {
    max: poolSize,
    connectTimeoutMs: CONNECT_TIMEOUT_MS,
    ...(onSwitch && { onSwitch }),
  });
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool }),
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
    { pool: () => pool.counts },
  );
}

/** Connecting to one host may take this long before the next is tried (a host that is down but does not refuse). */
const CONNECT_TIMEOUT_MS = 5_000;
