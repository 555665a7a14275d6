// Durable SQLite without an fsync on the event loop (src/store/sqlite/group-commit.ts): the connection
// commits with synchronous=NORMAL and the driver flushes the WAL file afterwards, off the loop.
// Nothing may be acknowledged before that flush ends: not a write, and not a read that may have
// seen the flushed-to-be commit. The flush is replaced here by one the test holds and releases.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GroupCommitSqliteDialect } from '../../src/store/sqlite/dialect.js';
import { GroupCommitSqlite } from '../../src/store/sqlite/group-commit.js';

interface Db {
  t: { k: string; v: number };
}

/** A flush the test controls: each call waits until the test resolves or rejects it. */
class HeldFlush {
  calls: Array<{ fd: number; resolve: () => void; reject: (e: Error) => void }> = [];
  /** Every flush ever started, so that a failing test still lets the store close. */
  all: Array<() => void> = [];
  flush = (fd: number): Promise<void> =>
    new Promise((resolve, reject) => {
      this.calls.push({ fd, resolve, reject });
      this.all.push(resolve);
    });
  async next(): Promise<{ resolve: () => void; reject: (e: Error) => void }> {
    for (let i = 0; i < 200 && this.calls.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
    const call = this.calls.shift();
    if (!call) throw new Error('no flush was started');
    return call;
  }
}

const tick = () => new Promise((r) => setTimeout(r, 20));

describe('SQLite: the WAL is flushed off the event loop before anything is acknowledged', () => {
  let dir: string;
  let file: string;
  let held: HeldFlush;
  let db: Kysely<Db>;
  let other: BetterSqlite3.Database;
  let gc: GroupCommitSqlite;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'gw-flush-'));
    file = join(dir, 'g.db');
    const sqlite = new BetterSqlite3(file);
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    sqlite.exec('create table t (k text primary key, v integer not null)');
    held = new HeldFlush();
    gc = new GroupCommitSqlite(sqlite, `${file}-wal`, held.flush);
    gc.attachReader(new BetterSqlite3(file, { readonly: true }));
    db = new Kysely<Db>({ dialect: new GroupCommitSqliteDialect(gc) });
    other = new BetterSqlite3(file, { readonly: true });
  });
  afterEach(async () => {
    other.close();
    const closing = db.destroy();
    for (const resolve of held.all) resolve();
    await closing;
    rmSync(dir, { recursive: true, force: true });
  });

  const visible = (k: string) => other.prepare('select v from t where k = ?').pluck().get(k);

  it('a write resolves only after its commit has been flushed', async () => {
    let done = false;
    const write = db
      .insertInto('t')
      .values({ k: 'a', v: 1 })
      .execute()
      .then(() => (done = true));
    const flush = await held.next();
    // Committed (another connection sees it) but not yet flushed: not acknowledged.
    expect(visible('a')).toBe(1);
    await tick();
    expect(done).toBe(false);
    flush.resolve();
    await write;
    expect(done).toBe(true);
  });

  it('flushes the database WAL file', async () => {
    const write = db.insertInto('t').values({ k: 'a', v: 1 }).execute();
    const flush = await held.next();
    flush.resolve();
    await write;
    expect(existsSync(`${file}-wal`)).toBe(true);
    expect(held.calls).toHaveLength(0);
  });

  it('a read that may have seen an unflushed commit answers only after the flush', async () => {
    const write = db.insertInto('t').values({ k: 'a', v: 1 }).execute();
    const flush = await held.next();
    let answered: number | undefined;
    const read = db
      .selectFrom('t')
      .select('v')
      .where('k', '=', 'a')
      .executeTakeFirst()
      .then((r) => (answered = r?.v));
    await tick();
    expect(answered).toBeUndefined();
    flush.resolve();
    await Promise.all([write, read]);
    expect(answered).toBe(1);
  });

  it('with no flush in flight a read answers at once', async () => {
    const write = db.insertInto('t').values({ k: 'a', v: 1 }).execute();
    (await held.next()).resolve();
    await write;
    expect((await db.selectFrom('t').select('v').where('k', '=', 'a').executeTakeFirst())?.v).toBe(1);
  });

  it('writes made during a flush wait for it, then commit together with one more flush', async () => {
    const first = db.insertInto('t').values({ k: 'a', v: 1 }).execute();
    const flush1 = await held.next();
    const order: string[] = [];
    const later = ['b', 'c', 'd'].map((k) =>
      db
        .insertInto('t')
        .values({ k, v: 2 })
        .execute()
        .then(() => order.push(k)),
    );
    await tick();
    // One flush at a time: the second batch is not even committed while the first flush runs.
    expect(visible('b')).toBeUndefined();
    expect(held.calls).toHaveLength(0);
    flush1.resolve();
    await first;
    const flush2 = await held.next();
    expect(visible('d')).toBe(2);
    expect(order).toEqual([]);
    flush2.resolve();
    await Promise.all(later);
    expect(order.sort()).toEqual(['b', 'c', 'd']);
    expect(held.calls).toHaveLength(0);
  });

  it('an atomic unit of work resolves after its flush, and rolls back alone when it throws', async () => {
    const insert = (k: string) => db.insertInto('t').values({ k, v: 1 }).compile();
    let done = false;
    const unit = gc
      .writeAtomically((run) => {
        run(insert('a'));
        run(insert('b'));
        return 'both';
      })
      .then((r) => ((done = true), r));
    // A unit that fails after its first statement leaves nothing, and the other unit is untouched.
    const failing = gc.writeAtomically((run) => {
      run(insert('c'));
      run(insert('a')); // primary key conflict
    });
    await expect(failing).rejects.toThrow(/UNIQUE/);
    const flush = await held.next();
    expect([visible('a'), visible('b'), visible('c')]).toEqual([1, 1, undefined]);
    await tick();
    expect(done).toBe(false);
    flush.resolve();
    expect(await unit).toBe('both');
  });

  it('a unit tells `written` its result before its commit and flush, and still resolves only after the flush; a failed unit tells nothing', async () => {
    const insert = (k: string) => db.insertInto('t').values({ k, v: 1 }).compile();
    const told: string[] = [];
    let done = false;
    const unit = gc
      .writeAtomically(
        (run) => (run(insert('a')), 'a'),
        'durable',
        (out) => told.push(out),
      )
      .then(() => (done = true));
    const failing = gc.writeAtomically(
      (run) => (run(insert('a')), 'again'),
      'durable',
      (out) => told.push(out),
    );
    await expect(failing).rejects.toThrow(/UNIQUE/);
    // Told at once, while the batch is still open: not yet visible to a reader.
    expect(told).toEqual(['a']);
    expect(visible('a')).toBeUndefined();
    const flush = await held.next();
    await tick();
    expect(done).toBe(false);
    flush.resolve();
    await unit;
    expect(told).toEqual(['a']);
  });

  it("a unit written until 'committed' resolves once its batch is committed, before the flush; a read of it still waits for the flush", async () => {
    const insert = (k: string) => db.insertInto('t').values({ k, v: 1 }).compile();
    let durableDone = false;
    const durable = gc.writeAtomically((run) => run(insert('a'))).then(() => (durableDone = true));
    const committed = gc.writeAtomically((run) => (run(insert('b')), 'b'), 'committed');
    const flush = await held.next();
    // One batch, committed and being flushed: the 'committed' unit is answered, the other is not.
    expect(await committed).toBe('b');
    expect(visible('b')).toBe(1);
    await tick();
    expect(durableDone).toBe(false);
    let readDone = false;
    const read = db
      .selectFrom('t')
      .select('v')
      .where('k', '=', 'b')
      .executeTakeFirst()
      .then((r) => ((readDone = true), r));
    await tick();
    expect(readDone).toBe(false);
    flush.resolve();
    await durable;
    expect(await read).toEqual({ v: 1 });
  });

  it('a unit on a free connection runs at once, within the call: its `written` is told before the call returns', async () => {
    const told: string[] = [];
    void Promise.resolve().then(() => told.push('a continuation queued before'));
    const unit = gc.writeAtomically(
      (run) => (run(db.insertInto('t').values({ k: 'a', v: 1 }).compile()), 'a'),
      'durable',
      (out) => told.push(out),
    );
    expect(told).toEqual(['a']);
    (await held.next()).resolve();
    expect(await unit).toBe('a');
  });

  it("a unit written until 'committed' on a free connection is committed within its turn, not after the rest of the event loop's turn", async () => {
    let laterInTurn = false;
    setImmediate(() => (laterInTurn = true));
    await gc.writeAtomically((run) => run(db.insertInto('t').values({ k: 'a', v: 1 }).compile()), 'committed');
    expect(laterInTurn).toBe(false);
    expect(visible('a')).toBe(1);
    (await held.next()).resolve();
  });

  it("a unit written until 'committed' during a flush has its batch committed at once; that batch's durable writers wait for the next flush", async () => {
    const first = db.insertInto('t').values({ k: 'a', v: 1 }).execute();
    const flush1 = await held.next();
    let durableDone = false;
    let committedDone = false;
    // A durable write and a 'committed' one join the batch that fills during the flush.
    const durable = db
      .insertInto('t')
      .values({ k: 'c', v: 1 })
      .execute()
      .then(() => (durableDone = true));
    await tick();
    const committed = gc
      .writeAtomically((run) => run(db.insertInto('t').values({ k: 'b', v: 1 }).compile()), 'committed')
      .then(() => (committedDone = true));
    await committed;
    // Answered and visible while the first flush is still held.
    expect(committedDone).toBe(true);
    expect(visible('b')).toBe(1);
    // No second flush yet: the first is still in flight.
    expect(held.calls).toHaveLength(0);
    expect(durableDone).toBe(false);
    flush1.resolve();
    await first;
    // The first flush may not cover the batch committed during it: another starts, and the durable write waits for it.
    const flush2 = await held.next();
    await tick();
    expect(durableDone).toBe(false);
    flush2.resolve();
    await durable;
    expect(durableDone).toBe(true);
  });

  it('a read that saw a batch committed during a flush answers only after the flush that covers it', async () => {
    const first = db.insertInto('t').values({ k: 'a', v: 1 }).execute();
    const flush1 = await held.next();
    await gc.writeAtomically((run) => run(db.insertInto('t').values({ k: 'b', v: 1 }).compile()), 'committed');
    let read = false;
    const reading = db
      .selectFrom('t')
      .selectAll()
      .where('k', '=', 'b')
      .execute()
      .then((rows) => {
        read = true;
        return rows;
      });
    // The read runs (and sees b) while the first flush is in flight.
    await tick();
    expect(read).toBe(false);
    flush1.resolve();
    await first;
    const flush2 = await held.next();
    await tick();
    expect(read).toBe(false);
    flush2.resolve();
    expect(await reading).toHaveLength(1);
  });

  it('the batch that filled during a flush starts its own flush before the first batch is answered', async () => {
    const order: string[] = [];
    const first = db
      .insertInto('t')
      .values({ k: 'a', v: 1 })
      .execute()
      .then(() => order.push(`a answered; flushes started: ${held.calls.length}`));
    const flush1 = await held.next();
    const second = db
      .insertInto('t')
      .values({ k: 'b', v: 1 })
      .execute()
      .then(() => order.push('b answered'));
    await tick();
    flush1.resolve();
    await first;
    // b's batch was committed and its flush asked for before a's answer ran.
    expect(order).toEqual(['a answered; flushes started: 1']);
    expect(visible('b')).toBe(1);
    (await held.next()).resolve();
    await second;
    expect(order).toEqual(['a answered; flushes started: 1', 'b answered']);
  });

  it('a failed flush refuses its waiters and everything after it', async () => {
    const write = db.insertInto('t').values({ k: 'a', v: 1 }).execute();
    const waiting = await held.next();
    const during = db.insertInto('t').values({ k: 'b', v: 1 }).execute();
    // A unit answered at its commit is committed at once, and answered: its durable neighbours are refused.
    const duringCommitted = gc.writeAtomically(
      (run) => run(db.insertInto('t').values({ k: 'd', v: 1 }).compile()),
      'committed',
    );
    await tick();
    waiting.reject(new Error('EIO: i/o error, fdatasync'));
    await expect(write).rejects.toThrow(/could not be flushed to disk.*EIO/);
    await expect(during).rejects.toThrow(/could not be flushed/);
    await expect(duringCommitted).resolves.toBeDefined();
    await expect(db.insertInto('t').values({ k: 'c', v: 1 }).execute()).rejects.toThrow(/restart the gateway/);
    await expect(db.selectFrom('t').selectAll().execute()).rejects.toThrow(/restart the gateway/);
  });
});
