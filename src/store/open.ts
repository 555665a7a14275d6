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

/** A database no other connection can open: `:memory:`, or '' (a private temporary file). */
function isMemory(file: string): boolean {
  return file === ':memory:' || file === '';
}

function openSqlite(file: string, options: OpenOptions): KyselyStore {
  if (!isMemory(file)) mkdirSync(dirname(file), { recursive: true });
  const sqlite = new BetterSqlite3(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma(`synchronous = ${options.synchronous === 'normal' ? 'NORMAL' : 'FULL'}`);
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  // Checkpoints run on a worker thread, so their fsyncs never stall the event loop.
  const checkpointer = isMemory(file) ? null : startCheckpointer(file);
  if (checkpointer) sqlite.pragma('wal_autocheckpoint = 0');
  const gc = new GroupCommitSqlite(sqlite);
  // Reads outside transactions go to a second, read-only connection: it sees only committed data,
  // so they neither queue behind writers nor wait for a commit (see sqlite-driver.ts). Every call
  // that used the writing connection resolves only once the batch it joined is on disk; the
  // driver does that per operation. A :memory: database is one connection's own: no reader.
  if (!isMemory(file)) {
    const reader = new BetterSqlite3(file, { readonly: true });
    reader.pragma('busy_timeout = 5000');
    gc.attachReader(reader);
  }
  const db = new Kysely<Database>({ dialect: new GroupCommitSqliteDialect(gc) });
  const store = new KyselyStore(db, 'sqlite', async () => {
    await checkpointer?.stop();
  });
  // data_version changes when another connection, e.g. the CLI in another process, commits.
  const dataVersion = sqlite.prepare('PRAGMA data_version').pluck();
  store.externalVersion = () => dataVersion.get() as number;
  return store;
}

async function openPostgres(url: string, poolSize?: number): Promise<KyselyStore> {
  const { openPostgresDb } = await import('./postgres.js');
  const { db, close } = openPostgresDb(url, poolSize);
  return new KyselyStore(db, 'postgres', close);
}
