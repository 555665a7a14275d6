import type { FailoverPoolOptions } from './postgres/failover-pool.js';
import type { SqlStore } from './sql-store.js';
import { openSqliteStore, type SqliteOptions } from './sqlite/open.js';

export interface OpenOptions extends SqliteOptions {
  /** PostgreSQL only: connections in this process's pool (default 10). */
  poolSize?: number;
  /** PostgreSQL only: told when the pool moves to another host of DATABASE_URL, or finds none writable. */
  onHostChange?: FailoverPoolOptions['onSwitch'];
}

export function isPostgresUrl(database: string): boolean {
  return /^postgres(ql)?:\/\//.test(database);
}

/** Opens the store named by a SQLite file path or a postgres:// URL and brings its schema up to date. */
export async function openStore(database: string, options: OpenOptions = {}): Promise<SqlStore> {
  const store = isPostgresUrl(database)
    ? (await import('./postgres/open.js')).openPostgresStore(
        database,
        options.poolSize,
        options.onQuery,
        options.onHostChange,
      )
    : openSqliteStore(database, options);
  try {
    await store.migrate();
  } catch (e) {
    await store.close();
    throw e;
  }
  return store;
}
