// The checkpoint thread (src/store/sqlite/checkpointer.ts) keeps SQLite's log bounded without
// holding the write lock for long under load: a fully copied log past its bound is restarted (the
// next commit writes from the file's start again, so the file stops growing), and the file is
// truncated only once the writes stop. Writes and reads go through the group-commit driver, as the
// gateway's do, while the checkpoints run.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startCheckpointer, type Checkpointer } from '../../src/store/sqlite/checkpointer.js';
import { GroupCommitSqliteDialect } from '../../src/store/sqlite/dialect.js';
import { GroupCommitSqlite } from '../../src/store/sqlite/group-commit.js';

interface Db {
  t: { k: string; v: string };
}

const ROWS = 3000;
const PAGE = 4096;

describe('SQLite checkpoints: the log restarted under load, truncated when idle', () => {
  let dir: string;
  let file: string;
  let db: Kysely<Db>;
  let checkpointer: Checkpointer | null = null;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'gw-ckpt-'));
    file = join(dir, 'g.db');
    const sqlite = new BetterSqlite3(file);
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('wal_autocheckpoint = 0');
    sqlite.exec('create table t (k text primary key, v text not null)');
    const gc = new GroupCommitSqlite(sqlite, `${file}-wal`);
    gc.attachReader(new BetterSqlite3(file, { readonly: true }));
    db = new Kysely<Db>({ dialect: new GroupCommitSqliteDialect(gc) });
  });
  afterEach(async () => {
    await checkpointer?.stop();
    checkpointer = null;
    await db.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  const walBytes = () => statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0;

  /** ROWS commits of about a page each, a read after every tenth; the log file's largest size meanwhile. */
  async function writeRows(): Promise<number> {
    let largest = 0;
    for (let i = 0; i < ROWS; i++) {
      await db
        .insertInto('t')
        .values({ k: `k${i}`, v: `${i}`.padEnd(3000, 'x') })
        .execute();
      if (i % 10 === 0)
        await db
          .selectFrom('t')
          .select('k')
          .where('k', '=', `k${i >> 1}`)
          .executeTakeFirstOrThrow();
      largest = Math.max(largest, walBytes());
    }
    return largest;
  }

  it('restarts a fully copied log past its bound: the file stays small while every row is kept', async () => {
    checkpointer = startCheckpointer(file, {
      intervalMs: 20,
      restartFrames: 64,
      truncateBytes: Number.MAX_SAFE_INTEGER,
    });
    const largest = await writeRows();
    // Without restarts the log would hold every commit, a page or more each (the next test).
    expect(largest).toBeLessThan((ROWS * PAGE) / 2);
    expect(walBytes()).toBeGreaterThan(0); // restarted, not truncated
    const { n } = await db
      .selectFrom('t')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(n)).toBe(ROWS);
    const check = await sql<{ integrity_check: string }>`pragma integrity_check`.execute(db);
    expect(check.rows).toEqual([{ integrity_check: 'ok' }]);
  });

  it('truncates a large log file once nothing was committed for a tick, not before', async () => {
    // Idle means no commit between two ticks. At 20 ms a loaded machine (CI runs two test files
    // at once on two cores) sometimes leaves the writer off the CPU that long: a real idle tick,
    // and a truncation mid-test. A tick of 100 ms keeps "not before" about the writes, not the host.
    checkpointer = startCheckpointer(file, {
      intervalMs: 100,
      restartFrames: Number.MAX_SAFE_INTEGER,
      truncateBytes: 64 * 1024,
    });
    const largest = await writeRows();
    expect(largest).toBeGreaterThan(ROWS * PAGE); // never restarted: the log kept every commit
    const deadline = Date.now() + 5000;
    while (walBytes() > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(walBytes()).toBe(0);
    const { n } = await db
      .selectFrom('t')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(n)).toBe(ROWS);
  });

  it('runs in a process started as an ES module script (node --input-type=module -e), which it once ended', () => {
    const open = pathToFileURL(join(import.meta.dirname, '../../dist/src/store/open.js')).href;
    const script = `
      const { openStore } = await import(${JSON.stringify(open)});
      const store = await openStore(${JSON.stringify(join(dir, 'esm.db'))});
      await store.migrate();
      await new Promise((r) => setTimeout(r, 300));
      await store.close();
      console.log('alive');`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(run.stderr).not.toMatch(/require is not defined/);
    expect([run.status, run.stdout.trim()]).toEqual([0, 'alive']);
  });

  it('a worker that fails says so as a warning, does not end the process, and stops at once', async () => {
    const warned = new Promise<string>((resolve) => process.once('warning', (w) => resolve(w.message)));
    // A file in a folder that does not exist: the worker's connection cannot open it.
    const failing = startCheckpointer(join(dir, 'no-such-folder', 'g.db'), { intervalMs: 20 });
    expect(await warned).toMatch(/SQLite checkpoints stopped/);
    await new Promise((r) => setTimeout(r, 50));
    let stopped = false;
    await Promise.race([failing.stop().then(() => (stopped = true)), new Promise((r) => setTimeout(r, 3000))]);
    expect(stopped).toBe(true);
  });

  it('leaves a small idle log file as it is, for the next writes to reuse', async () => {
    checkpointer = startCheckpointer(file, { intervalMs: 20, restartFrames: 64, truncateBytes: 16 * 1024 * 1024 });
    await db
      .insertInto('t')
      .values({ k: 'one', v: 'x'.repeat(3000) })
      .execute();
    const size = walBytes();
    expect(size).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 200));
    expect(walBytes()).toBe(size);
  });
});
