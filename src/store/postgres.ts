import pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import type { Database } from './schema.js';

// int8 (bigint) columns hold epoch milliseconds and minor units, all within 2^53: read them as numbers.
pg.types.setTypeParser(pg.types.builtins.INT8, (v: string) => Number(v));

export function openPostgresDb(url: string, poolSize = 10): { db: Kysely<Database>; pool: pg.Pool; close: () => Promise<void> } {
  const pool = new pg.Pool({ connectionString: url, max: poolSize });
  // An idle connection cut by the server (a restart, a failover, pg_terminate_backend) is reported
  // here; without a listener it would be an uncaught exception that ends the process. The pool has
  // already dropped that connection and opens a new one for the next query.
  pool.on('error', () => {});
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return { db, pool, close: async () => {} };
}
