import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely } from 'kysely';
import type { Database } from './schema.js';
import { KyselyStore } from './kysely-store.js';
import { GroupCommitSqlite, GroupCommitSqliteDialect } from './sqlite-driver.js';
import { startCheckpointer } from './sqlite-checkpointer.js';

export interface OpenOptions {
  /** SQLite only: `full` (default) makes every acknowledged commit survive a power cut. */
  synchronous?: 'full' | 'normal';
  /** PostgreSQL only: connections in this process's pool (default 10). */
  poolSize?: number;
}

export function isPostgresUrl(database: string): boolean {
  return /^postgres(ql)?:\/\//.test(database);
}

/** Opens the store named by a SQLite file path or a postgres:// URL and brings its schema up to date. */
export async function openStore(database: string, options: OpenOptions = {}): Promise<KyselyStore> {
  const store = isPostgresUrl(database) ? await openPostgres(database, options.poolSize) : openSqlite(database, options);
  try {
    await store.migrate();
  } catch (e) {
    await store.close();
    throw e;
  }
  return store;
}

function openSqlite(file: string, options: OpenOptions): KyselyStore {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const sqlite = new BetterSqlite3(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma(`synchronous = ${options.synchronous === 'normal' ? 'NORMAL' : 'FULL'}`);
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  // Checkpoints run on a worker thread, so their fsyncs never stall the event loop.
  const checkpointer = file === ':memory:' ? null : startCheckpointer(file);
  if (checkpointer) sqlite.pragma('wal_autocheckpoint = 0');
  const gc = new GroupCommitSqlite(sqlite);
  const db = new Kysely<Database>({ dialect: new GroupCommitSqliteDialect(gc) });
  const store = new KyselyStore(db, 'sqlite', async () => {
    await checkpointer?.stop();
  });
  return answerWhenDurable(store, () => gc.durable());
}

/**
 * Every store call resolves only once what it wrote, or read, is committed to disk: with group
 * commit a write joins a batch that commits a moment later, and nothing may be acknowledged
 * to a merchant or a channel before that.
 */
function answerWhenDurable<T extends object>(store: T, durable: () => Promise<void>): T {
  return new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function' || prop === 'constructor') return value;
      return async (...args: unknown[]) => {
        const result = await (value as (...a: unknown[]) => unknown).apply(target, args);
        await durable();
        return result;
      };
    },
  });
}

async function openPostgres(url: string, poolSize?: number): Promise<KyselyStore> {
  const { openPostgresDb } = await import('./postgres.js');
  const { db, close } = openPostgresDb(url, poolSize);
  return new KyselyStore(db, 'postgres', close);
}
