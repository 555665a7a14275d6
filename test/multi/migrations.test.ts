// Migrations on PostgreSQL: several instances starting at once on an empty database, and `gateway migrate`.
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { main } from '../../src/cli/main.js';
import { openStore } from '../../src/store/open.js';
import type { SqlStore } from '../../src/store/sql-store.js';
import { createTestDatabase } from '../support/pg-db.js';
import { pgQuery } from './pair.js';

async function schemaOf(url: string) {
  const migrations = await pgQuery<{ name: string }>(url, 'select name from kysely_migration order by name');
  const tables = await pgQuery<{ table_name: string }>(
    url,
    "select table_name from information_schema.tables where table_schema = 'public' order by table_name",
  );
  const sequences = await pgQuery<{ name: string; next_value: number }>(url, 'select name, next_value from sequences');
  return { migrations: migrations.map((r) => r.name), tables: tables.map((r) => r.table_name), sequences };
}

describe('migrations on PostgreSQL', () => {
  const stores: SqlStore[] = [];
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
    vi.restoreAllMocks();
  });

  it('three instances opening an empty database at once migrate it exactly once', async () => {
    const url = await createTestDatabase(inject('pgUrl'));
    const opened = await Promise.allSettled([openStore(url), openStore(url), openStore(url)]);
    for (const r of opened) if (r.status === 'fulfilled') stores.push(r.value);
    expect(opened.map((r) => (r.status === 'rejected' ? String(r.reason) : 'ok'))).toEqual(['ok', 'ok', 'ok']);

    const schema = await schemaOf(url);
    expect(schema.migrations.length).toBeGreaterThanOrEqual(1);
    expect(new Set(schema.migrations).size).toBe(schema.migrations.length);
    expect(schema.tables).toEqual(
      expect.arrayContaining(['transactions', 'outbox', 'refunds', 'nonces', 'sequences', 'kysely_migration']),
    );
    // The initial migration's seed row was written once, not once per instance.
    expect(schema.sequences).toEqual([{ name: 'order_id', next_value: 1 }]);
    // Every instance works on the result.
    const seqs = await Promise.all(stores.map((s) => s.transactions.nextOrderSequence()));
    expect(new Set(seqs).size).toBe(3);
  });

  it('several rounds of concurrent starts, including on an up-to-date database', async () => {
    for (let round = 0; round < 3; round++) {
      const url = await createTestDatabase(inject('pgUrl'));
      for (let again = 0; again < 2; again++) {
        const opened = await Promise.all(Array.from({ length: 4 }, () => openStore(url)));
        await Promise.all(opened.map((s) => s.close()));
      }
      const schema = await schemaOf(url);
      expect(schema.sequences).toEqual([{ name: 'order_id', next_value: 1 }]);
    }
  });

  it('`gateway migrate` brings an empty database up to date, and again is a no-op', async () => {
    const url = await createTestDatabase(inject('pgUrl'));
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    const error = vi.spyOn(console, 'error').mockImplementation(() => {});
    expect(await main(['migrate', '--database', url])).toBe(0);
    const first = await schemaOf(url);
    expect(first.tables).toContain('transactions');

    const codes = await Promise.all([main(['migrate', '--database', url]), main(['migrate', '--database', url])]);
    expect(codes).toEqual([0, 0]);
    expect(await schemaOf(url)).toEqual(first);
    expect(log).toHaveBeenCalledWith('database schema is up to date');
    expect(error).not.toHaveBeenCalled();
  });

  it('`gateway migrate` takes DATABASE_URL and reports an unreachable server as one line, exit 1', async () => {
    const url = await createTestDatabase(inject('pgUrl'));
    const error = vi.spyOn(console, 'error').mockImplementation(() => {});
    vi.spyOn(console, 'log').mockImplementation(() => {});
    vi.stubEnv('DATABASE_URL', url);
    try {
      expect(await main(['migrate'])).toBe(0);
    } finally {
      vi.unstubAllEnvs();
    }
    expect((await schemaOf(url)).tables).toContain('outbox');

    const dead = new URL(url);
    dead.port = '1'; // nothing listens there
    expect(await main(['migrate', '--database', dead.toString()])).toBe(1);
    expect(error).toHaveBeenCalledTimes(1);
    expect(String(error.mock.calls[0][0])).toMatch(/^gateway: /);
  });
});
