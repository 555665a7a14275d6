import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import type { Database } from './schema.js';
import { KyselyStore } from './kysely-store.js';

export interface OpenOptions {
  /** SQLite only: `full` (default) makes every acknowledged commit survive a power cut. */
  synchronous?: 'full' | 'normal';
}

export function isPostgresUrl(database: string): boolean {
  return /^postgres(ql)?:\/\//.test(database);
}

/** Opens the store named by a SQLite file path or a postgres:// URL and brings its schema up to date. */
export async function openStore(database: string, options: OpenOptions = {}): Promise<KyselyStore> {
  const store = isPostgresUrl(database) ? await openPostgres(database) : openSqlite(database, options);
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
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
  return new KyselyStore(db, 'sqlite');
}

async function openPostgres(url: string): Promise<KyselyStore> {
  const { openPostgresDb } = await import('./postgres.js');
  const { db, close } = openPostgresDb(url);
  return new KyselyStore(db, 'postgres', close);
}
