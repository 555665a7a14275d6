// `gateway backup --to FILE` (the built CLI, a process of its own) copies a SQLite database while
// the gateway serves it and orders keep being created: the copy opens, passes SQLite's check,
// holds every order acknowledged before the backup began, and only orders that exist in the live
// database; the gateway kept answering throughout.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { databaseFor, startTestGateway, uniqueRef, type TestGateway } from '../support/gateway.js';

const ROOT = resolve(import.meta.dirname, '../..');
const cli = (args: string[]) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
    execFile(
      process.execPath,
      [join(ROOT, 'bin/gateway.js'), ...args],
      { cwd: ROOT, env: { ...process.env, DATABASE_URL: '' }, timeout: 60_000 },
      (err, stdout, stderr) => done({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
    );
  });

describe('gateway backup (SQLite)', () => {
  let gw: TestGateway | undefined;
  let cleanup = () => {};
  afterAll(async () => {
    await gw?.close();
    cleanup();
  });

  it('copies a live database under write load into a consistent file that opens', async () => {
    const made = await databaseFor('sqlite');
    cleanup = made.cleanup;
    gw = await startTestGateway('sqlite', { database: made.database });
    const created: string[] = [];
    const create = async () => {
      const { reply, order_id } = await gw!.create({ merchant_reference: uniqueRef('bk') });
      expect(reply.code).toBe(0);
      created.push(order_id);
    };
    for (let i = 0; i < 200; i++) await create();
    const before = new Set(created);
    // Writers keep creating until the backup has finished.
    let backingUp = true;
    const writers = Array.from({ length: 4 }, async () => {
      while (backingUp) await create();
    });
    const target = join(made.database, '..', 'copy.db');
    const countAtStart = created.length;
    const run = await cli(['backup', '--database', made.database, '--to', target, '--json']);
    backingUp = false;
    await Promise.all(writers);
    expect(run, run.stderr).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(run.stdout)).toMatchObject({ file: target });
    expect(created.length).toBeGreaterThan(countAtStart); // the gateway served during the backup

    const copy = new BetterSqlite3(target, { readonly: true, fileMustExist: true });
    try {
      expect(copy.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(copy.pragma('journal_mode', { simple: true })).toBe('delete');
      const ids = new Set(copy.prepare('select order_id from transactions').pluck().all() as string[]);
      for (const id of before) expect(ids.has(id)).toBe(true);
      const live = new Set(created);
      for (const id of ids) expect(live.has(id)).toBe(true);
      // Consistent: every order's nonce made in the same transaction is there too.
      const orphans = copy
        .prepare(
          'select count(*) from transactions t where not exists (select 1 from nonces n where n.order_id = t.order_id)',
        )
        .pluck()
        .get();
      expect(orphans).toBe(0);
      const migrations = copy.prepare('select count(*) from kysely_migration').pluck().get() as number;
      expect(migrations).toBeGreaterThan(8);
    } finally {
      copy.close();
    }
    expect(existsSync(`${target}.partial`)).toBe(false);

    // Never over an existing file; PostgreSQL is pg_dump's.
    const again = await cli(['backup', '--database', made.database, '--to', target]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('exists');
    const pg = await cli([
      'backup',
      '--database',
      'postgres://nobody@127.0.0.1:1/none',
      '--to',
      join(made.database, '..', 'pg.db'),
    ]);
    expect(pg.code).toBe(2);
    expect(pg.stderr).toContain('pg_dump');
  }, 90_000);
});
