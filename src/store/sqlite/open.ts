import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely } from 'kysely';
import { SqliteAccounts } from '../accounts/sqlite.js';
import { SqliteOutbox } from '../outbox/sqlite.js';
import { queryLog } from '../query-log.js';
import { SqliteRefunds } from '../refunds/sqlite.js';
import { SqliteRetention } from '../retention/sqlite.js';
import type { Database } from '../schema.js';
import { SqlStore } from '../sql-store.js';
import { SqliteTransactions } from '../transactions/sqlite.js';
import { startCheckpointer } from './checkpointer.js';
import { GroupCommitSqliteDialect } from './dialect.js';
import { GroupCommitSqlite } from './group-commit.js';

export interface SqliteOptions {
  /** `full` (default) makes every acknowledged commit survive a power cut. */
  synchronous?: 'full' | 'normal';
  /**
   * This process serves the database, and no other may at the same time (the gateway; not the
   * CLI). Refused with an error if another process already does.
   */
  serving?: boolean;
  /** Told each statement's duration (tracing aggregates them per span); unset, nothing is timed. */
  onQuery?: (ms: number) => void;
  /** How the write-ahead log is flushed to disk (default fdatasync on libuv's thread pool); tests hold a flush with it. */
  flushFile?: (fd: number) => Promise<void>;
}

/** The reader maps up to this much of the database file (SQLite's mmap_size). */
export const READER_MMAP_BYTES = 1024 * 1024 * 1024;

/** How stale this process's view of another process's credential changes may be. */
export const EXTERNAL_CHECK_MS = 10;

/** A database no other connection can open: `:memory:`, or '' (a private temporary file). */
function isMemory(file: string): boolean {
  return file === ':memory:' || file === '';
}

/**
 * Holds an exclusive lock on `{file}-serving` for as long as this process serves `file`: a second
 * gateway on the same SQLite file is refused at start (its group commit, checkpoints and
 * notification leases all assume one process). The operating system drops the lock when the process
 * ends, however it ends, so a crashed gateway leaves nothing to clean up.
 */
function takeServingLock(file: string): BetterSqlite3.Database {
  const lock = new BetterSqlite3(`${file}-serving`, { timeout: 0 });
  try {
    // Nothing is ever written there: the journal in memory, so no journal file beside it.
    lock.pragma('journal_mode = MEMORY');
    lock.exec('BEGIN EXCLUSIVE');
  } catch (e) {
    lock.close();
    throw new Error(
      `another gateway is already serving ${file}: one process may serve a SQLite database (run several instances on PostgreSQL) (${(e as Error).message})`,
      { cause: e },
    );
  }
  return lock;
}

/** The store on a SQLite file (not yet migrated). */
export function openSqliteStore(file: string, options: SqliteOptions = {}): SqlStore {
  if (!isMemory(file)) mkdirSync(dirname(file), { recursive: true });
  const servingLock = options.serving && !isMemory(file) ? takeServingLock(file) : null;
  const sqlite = new BetterSqlite3(file);
  sqlite.pragma('journal_mode = WAL');
  // Durable (the default) is synchronous=FULL's guarantee, a reply only once its commit is on
  // disk, with the WAL's fsync done by the driver off the event loop (group-commit.ts), so the
  // connection itself runs with NORMAL. A :memory: database has nothing to flush.
  const durable = options.synchronous !== 'normal';
  const flushWal = durable && !isMemory(file);
  sqlite.pragma(`synchronous = ${durable && !flushWal ? 'FULL' : 'NORMAL'}`);
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  // Checkpoints run on a worker thread, so their fsyncs never stall the event loop.
  const checkpointer = isMemory(file) ? null : startCheckpointer(file);
  if (checkpointer) sqlite.pragma('wal_autocheckpoint = 0');
  const gc = new GroupCommitSqlite(sqlite, flushWal ? `${resolve(file)}-wal` : null, options.flushFile);
  // Reads outside transactions go to a second, read-only connection: it sees only committed data,
  // so they neither queue behind writers nor wait for a commit, only for a WAL flush in flight
  // (group-commit.ts). A :memory: database is one connection's own: no reader.
  if (!isMemory(file)) {
    const reader = new BetterSqlite3(file, { readonly: true });
    reader.pragma('busy_timeout = 5000');
    // Reads map the file instead of copying each page in with a system call: a look-up in a table
    // of 1,000,000 orders then costs what it costs in one of 10,000. The mapping holds the
    // operating system's cached pages, not memory of the process's own.
    reader.pragma(`mmap_size = ${READER_MMAP_BYTES}`);
    gc.attachReader(reader);
  }
  const db = new Kysely<Database>({ dialect: new GroupCommitSqliteDialect(gc), ...queryLog(options.onQuery) });
  // The statements of writeAtomically's units do not pass through Kysely's log: told here.
  if (options.onQuery) gc.onUnitStatement = options.onQuery;
  return new SqlStore(
    'sqlite',
    db,
    {
      transactions: new SqliteTransactions(db, gc),
      refunds: new SqliteRefunds(db),
      outbox: new SqliteOutbox(db, gc),
      retention: new SqliteRetention(db),
      accounts: new SqliteAccounts(db, dataVersion(sqlite)),
    },
    async () => {
      await checkpointer?.stop();
      servingLock?.close();
    },
    { observeCommits: (observe) => (gc.onCommit = observe) },
  );
}

/**
 * A number that changes when another connection (the CLI in another process) commits to the file:
 * SQLite's data_version. Each read of it starts a read transaction (shared-memory locks: costly if
 * read on every credential look-up), so it is read at most once per EXTERNAL_CHECK_MS: another
 * process's change is seen within that time, and a refusal re-reads the store anyway.
 */
function dataVersion(sqlite: BetterSqlite3.Database): () => number {
  const statement = sqlite.prepare('PRAGMA data_version').pluck();
  let checkedAt = -Infinity;
  let version = 0;
  return () => {
    const t = performance.now();
    if (t - checkedAt >= EXTERNAL_CHECK_MS) {
      version = statement.get() as number;
      checkedAt = t;
    }
    return version;
  };
}
