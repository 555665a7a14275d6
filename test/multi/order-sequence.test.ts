// order_id numbers come from blocks reserved in the shared `sequences` row: two instances never
// hand out the same one, however their requests interleave.
import { afterAll, describe, expect, inject, it } from 'vitest';
import { openStore } from '../../src/store/open.js';
import type { SqlStore } from '../../src/store/sql-store.js';
import { createTestDatabase } from '../support/pg-db.js';
import { pgQuery, startPair, type GatewayPair } from './pair.js';

describe('order_id sequence on PostgreSQL', () => {
  const stores: SqlStore[] = [];
  let pair: GatewayPair | undefined;
  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()));
    await pair?.close();
  });

  it('three stores on one database drawing concurrently never share a number', async () => {
    const url = await createTestDatabase(inject('pgUrl'));
    stores.push(...(await Promise.all([openStore(url), openStore(url), openStore(url)])));
    // 700 draws per store: several blocks each, with every store's block requests interleaved.
    const drawn = (
      await Promise.all(
        stores.map((s) => Promise.all(Array.from({ length: 700 }, () => s.transactions.nextOrderSequence()))),
      )
    ).flat();
    expect(new Set(drawn).size).toBe(drawn.length);
    expect(Math.min(...drawn)).toBeGreaterThanOrEqual(1);
    const [row] = await pgQuery(url, "select next_value from sequences where name = 'order_id'");
    // Every number drawn lies below the shared counter, so a restarted instance cannot reuse one.
    expect(Math.max(...drawn)).toBeLessThan(row.next_value);
  });

  it('creates through two gateway instances get distinct order_ids', async () => {
    pair = await startPair();
    const { a, b } = pair;
    const created = await Promise.all(Array.from({ length: 240 }, (_, i) => (i % 2 ? a : b).create({}, a.merchant)));
    const ids = created.map((c) => c.order_id);
    expect(new Set(ids).size).toBe(ids.length);
    const [count] = await pgQuery(
      pair.database,
      'select count(*)::int as n, count(distinct order_id)::int as d from transactions',
    );
    expect(count).toEqual({ n: 240, d: 240 });
  });
});
