// Another connection holding SQLite's write lock (the checkpoint thread truncating the log, the
// CLI in another process) must not stall the event loop: SQLite's busy handler would sleep the
// whole thread. The group-commit driver waits on timers instead (src/store/sqlite/group-commit.ts), up
// to the busy timeout its connection was opened with, and then fails the write with SQLITE_BUSY.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GroupCommitSqliteDialect } from '../../src/store/sqlite/dialect.js';
import { GroupCommitSqlite } from '../../src/store/sqlite/group-commit.js';
import { openStore } from '../../src/store/open.js';

interface Db {
  t: { k: string; v: number };
}

const tick = () => new Promise((r) => setTimeout(r, 30));

describe('SQLite: a write waits for another connection’s write lock without holding the event loop', () => {
  let dir: string;
  let file: string;
  let db: Kysely<Db>;
  let gc: GroupCommitSqlite;
  let other: BetterSqlite3.Database;

  const open = (busyTimeoutMs: number) => {
    const sqlite = new BetterSqlite3(file);
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma(`busy_timeout = ${busyTimeoutMs}`);
    sqlite.exec('create table if not exists t (k text primary key, v integer not null)');
    gc = new GroupCommitSqlite(sqlite, `${file}-wal`);
    gc.attachReader(new BetterSqlite3(file, { readonly: true }));
    db = new Kysely<Db>({ dialect: new GroupCommitSqliteDialect(gc) });
    return sqlite;
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'gw-busy-'));
    file = join(dir, 'g.db');
  });
  afterEach(async () => {
    if (other?.inTransaction) other.exec('ROLLBACK');
    other?.close();
    await db?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  const holdWriteLock = () => {
    other = new BetterSqlite3(file);
    other.exec('BEGIN IMMEDIATE');
  };

  it('takes over the connection’s busy timeout and sets SQLite’s own to 0', () => {
    const sqlite = open(5000);
    expect(sqlite.pragma('busy_timeout', { simple: true })).toBe(0);
  });

  it('a statement, a transaction and an atomic unit wait while timers and reads go on, then commit', async () => {
    open(5000);
    await db.insertInto('t').values({ k: 'before', v: 1 }).execute();
    holdWriteLock();
    const settled: string[] = [];
    const single = db
      .insertInto('t')
      .values({ k: 'a', v: 1 })
      .execute()
      .then(() => settled.push('single'));
    const trx = db
      .transaction()
      .execute(async (t) => {
        await t.insertInto('t').values({ k: 'b', v: 2 }).execute();
      })
      .then(() => settled.push('transaction'));
    const unit = gc
      .writeAtomically((run) => run(db.insertInto('t').values({ k: 'c', v: 3 }).compile()))
      .then(() => settled.push('unit'));
    // SQLite's busy handler would have slept the event loop here, and this timer would fire only
    // after the writes had settled (or failed with SQLITE_BUSY).
    await tick();
    expect(settled).toEqual([]);
    // Reads are answered from committed data meanwhile.
    expect(await db.selectFrom('t').select('k').execute()).toEqual([{ k: 'before' }]);
    await tick();
    expect(settled).toEqual([]);
    other.exec('COMMIT');
    await Promise.all([single, trx, unit]);
    expect(settled.sort()).toEqual(['single', 'transaction', 'unit']);
    expect((await db.selectFrom('t').select('k').orderBy('k').execute()).map((r) => r.k)).toEqual([
      'a',
      'b',
      'before',
      'c',
    ]);
  });

  it('fails with SQLITE_BUSY after the busy timeout, and writes again once the lock is free', async () => {
    open(150);
    holdWriteLock();
    let timerFired = false;
    setTimeout(() => (timerFired = true), 20);
    await expect(db.insertInto('t').values({ k: 'a', v: 1 }).execute()).rejects.toMatchObject({ code: 'SQLITE_BUSY' });
    expect(timerFired).toBe(true);
    other.exec('ROLLBACK');
    await db.insertInto('t').values({ k: 'b', v: 1 }).execute();
    expect(await db.selectFrom('t').select('k').execute()).toEqual([{ k: 'b' }]);
  });

  it('the store opened by the gateway waits the same way', async () => {
    const store = await openStore(file);
    try {
      holdWriteLock();
      let done = false;
      const write = store.db
        .insertInto('rates')
        .values({ currency_from: 'NZD', currency_to: 'CNY', rate_micros: 4_500_000, updated_at: 1 })
        .execute()
        .then(() => (done = true));
      await tick();
      expect(done).toBe(false);
      other.exec('COMMIT');
      await write;
      expect(await store.accounts.findRate('NZD', 'CNY')).toBe(4_500_000);
    } finally {
      await store.close();
    }
  });
});
