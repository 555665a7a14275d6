import pg from 'pg';
import { describe, expect, inject, it } from 'vitest';
import { createTestDatabase } from './pg-db.js';

async function query<T extends pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

describe('test PostgreSQL server (globalSetup)', () => {
  const pgUrl = inject('pgUrl');

  it('is provided to tests through inject() and process.env.PG_URL', () => {
    expect(pgUrl).toMatch(/^postgres(ql)?:\/\//);
    expect(process.env.PG_URL).toBe(pgUrl);
  });

  it('answers select version()', async () => {
    const [row] = await query<{ version: string }>(pgUrl, 'select version()');
    expect(row.version).toMatch(/^PostgreSQL \d+/);
  });

  it('createTestDatabase makes fresh, distinct, usable databases', async () => {
    const [a, b] = await Promise.all([createTestDatabase(pgUrl), createTestDatabase(pgUrl)]);
    expect(a).not.toBe(b);
    expect(a).not.toBe(pgUrl);

    await query(a, 'create table t (v text)');
    await query(a, 'insert into t values ($1)', ['only in a']);
    expect(await query(a, 'select v from t')).toEqual([{ v: 'only in a' }]);

    const dbName = (url: string) => new URL(url).pathname.slice(1);
    const [inA] = await query<{ db: string }>(a, 'select current_database() as db');
    const [inB] = await query<{ db: string; has_t: boolean }>(
      b,
      "select current_database() as db, to_regclass('public.t') is not null as has_t",
    );
    expect(inA.db).toBe(dbName(a));
    expect(inB.db).toBe(dbName(b));
    expect(inA.db).not.toBe(inB.db);
    expect(inB.has_t).toBe(false); // b is fresh: it does not see a's table
  });
});
