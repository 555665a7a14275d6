// The SQLite store's two connections (src/store/sqlite/group-commit.ts): reads outside transactions run
// on a read-only connection that sees only committed data; writes and transactions run on the
// writing connection, in the group-commit batch, and resolve only once that batch is on disk.
import { mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { openStore } from '../../src/store/open.js';
import { READER_MMAP_BYTES } from '../../src/store/sqlite/open.js';
import type { SqlStore } from '../../src/store/sql-store.js';

let pair = 0;
const currency = () => `X${String(++pair).padStart(2, '0')}`;
const rateRow = (currency_from: string, rate_micros: number) => ({
  currency_from,
  currency_to: 'CNY',
  rate_micros,
  updated_at: 1,
});

describe('SQLite file store: a read-only connection beside the writer', () => {
  let dir: string;
  let file: string;
  let store: SqlStore;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gw-sqlite-'));
    file = join(dir, 'gateway.db');
    store = await openStore(file);
  });
  afterAll(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a read during another request write answers from committed data without waiting for that commit', async () => {
    const c = currency();
    const settled: string[] = [];
    const write = store.db
      .insertInto('rates')
      .values(rateRow(c, 5))
      .execute()
      .then(() => settled.push('write'));
    const read = store.accounts.findRate(c, 'CNY').then((r) => {
      settled.push('read');
      return r;
    });
    expect(await read).toBeUndefined();
    await write;
    expect(settled).toEqual(['read', 'write']);
    expect(await store.accounts.findRate(c, 'CNY')).toBe(5);
  });

  it('a read does not queue behind an open transaction', async () => {
    const [a, b] = [currency(), currency()];
    await store.db.insertInto('rates').values(rateRow(a, 1)).execute();
    let finish!: () => void;
    const held = new Promise<void>((resolve) => (finish = resolve));
    const trx = store.db.transaction().execute(async (t) => {
      await t.insertInto('rates').values(rateRow(b, 2)).execute();
      await held;
    });
    // With reads on the writer this would wait for the transaction, which waits for this test.
    expect(await store.accounts.findRate(a, 'CNY')).toBe(1);
    expect(await store.accounts.findRate(b, 'CNY')).toBeUndefined();
    finish();
    await trx;
    expect(await store.accounts.findRate(b, 'CNY')).toBe(2);
  });

  it('a write resolves only once it is committed: another connection sees it at once', async () => {
    const c = currency();
    await store.db.insertInto('rates').values(rateRow(c, 7)).execute();
    const other = new BetterSqlite3(file, { readonly: true });
    try {
      expect(other.prepare('select rate_micros from rates where currency_from = ?').pluck().get(c)).toBe(7);
    } finally {
      other.close();
    }
  });

  it('a single write never joins another request open transaction, which rolls back alone', async () => {
    const [a, b] = [currency(), currency()];
    let fail!: () => void;
    const held = new Promise<void>((resolve) => (fail = resolve));
    const trx = store.db.transaction().execute(async (t) => {
      await t.insertInto('rates').values(rateRow(a, 1)).execute();
      await held;
      throw new Error('rolled back');
    });
    const single = store.db.insertInto('rates').values(rateRow(b, 2)).execute();
    fail();
    await expect(trx).rejects.toThrow('rolled back');
    await single;
    expect(await store.accounts.findRate(a, 'CNY')).toBeUndefined();
    expect(await store.accounts.findRate(b, 'CNY')).toBe(2);
  });

  it('the reader maps the file, and a read after a commit sees it even in a page it read before', async () => {
    const { rows } = await sql<{ mmap_size: number }>`pragma mmap_size`.execute(store.db); // a read: it runs on the reader
    expect(rows[0]?.mmap_size).toBe(READER_MMAP_BYTES);
    const c = currency();
    await store.db.insertInto('rates').values(rateRow(c, 5)).execute();
    expect(await store.accounts.findRate(c, 'CNY')).toBe(5);
    for (const rate of [6, 7]) {
      await store.db.updateTable('rates').set({ rate_micros: rate }).where('currency_from', '=', c).execute();
      expect(await store.accounts.findRate(c, 'CNY')).toBe(rate);
    }
  });

  it('a db.connection() block reads its own uncommitted writes once it has written', async () => {
    const c = currency();
    const seen = await store.db.connection().execute(async (conn) => {
      const before = await conn
        .selectFrom('rates')
        .select('rate_micros')
        .where('currency_from', '=', c)
        .executeTakeFirst();
      await conn.insertInto('rates').values(rateRow(c, 3)).execute();
      const after = await conn
        .selectFrom('rates')
        .select('rate_micros')
        .where('currency_from', '=', c)
        .executeTakeFirst();
      return [before?.rate_micros, after?.rate_micros];
    });
    expect(seen).toEqual([undefined, 3]);
  });
});

describe('SQLite :memory: store: one connection', () => {
  it('writes and reads', async () => {
    const store = await openStore(':memory:');
    try {
      const c = currency();
      const write = store.db.insertInto('rates').values(rateRow(c, 9)).execute();
      await write;
      expect(await store.accounts.findRate(c, 'CNY')).toBe(9);
      expect(await store.transactions.nextOrderSequence()).toBeGreaterThan(0);
    } finally {
      await store.close();
    }
  });
});

describe('SQLite durability setting (SQLITE_SYNCHRONOUS)', () => {
  // The driver flushes the WAL through a descriptor of its own, opened at its first flush: one
  // more descriptor of the -wal file in this process than SQLite's own connections hold.
  const walDescriptors = (file: string) =>
    readdirSync('/proc/self/fd').filter((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`) === `${file}-wal`;
      } catch {
        return false;
      }
    }).length;

  it.runIf(process.platform === 'linux')(
    'full (the default) flushes the log after a write; normal never does',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'gw-sync-'));
      const [full, normal] = [join(dir, 'full.db'), join(dir, 'normal.db')];
      const stores = [await openStore(full), await openStore(normal, { synchronous: 'normal' })];
      try {
        for (const store of stores) await store.db.insertInto('rates').values(rateRow(currency(), 1)).execute();
        // Both have the same connections open (writer, reader, checkpoint thread), once the
        // checkpoint threads have run (every 200 ms) and so opened the log too.
        await new Promise((r) => setTimeout(r, 600));
        expect(walDescriptors(normal)).toBeGreaterThan(0);
        expect(walDescriptors(full)).toBe(walDescriptors(normal) + 1);
      } finally {
        for (const store of stores) await store.close();
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
