// Creates on two instances, batched per event-loop turn (src/store/turn-batch.ts), racing for the
// same merchant_references: each reference ends as exactly one order with one nonce, every
// request gets an answer, and the batches never deadlock (their rows go in one agreed order).
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createMerchant } from '../../src/cli/admin.js';
import { openStore } from '../../src/store/open.js';
import type { SqlStore } from '../../src/store/sql-store.js';
import { nonceOf, pendingOrder } from '../support/rows.js';
import { createTestDatabase } from '../support/pg-db.js';
import { uniqueRef } from '../support/gateway.js';
import { pgQuery } from './pair.js';

describe('batched creates racing on PostgreSQL', () => {
  const stores: SqlStore[] = [];
  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()));
  });

  it('two stores creating the same 300 references in opposite orders: one order each, no deadlock', async () => {
    const url = await createTestDatabase(inject('pgUrl'));
    stores.push(...(await Promise.all([openStore(url), openStore(url)])));
    const m = await createMerchant(stores[0], { name: 'Race', currency: 'NZD' });
    const refs = Array.from({ length: 300 }, () => uniqueRef('race'));
    const order = (store: number, ref: string, i: number) =>
      pendingOrder(m, { order_id: `R${store}-${i}-${ref}`, merchant_reference: ref, created_at: 1, updated_at: 1 });
    const [before] = await pgQuery(
      url,
      'select deadlocks::int as n from pg_stat_database where datname = current_database()',
    );
    for (let round = 0; round < 5; round++) {
      const mine = refs.map((r) => `${r}-${round}`);
      const runs = [mine, [...mine].reverse()].map((list, s) =>
        Promise.all(
          list.map(
            (ref, i) =>
              stores[s].transactions.insert(
                order(s, ref, i),
                nonceOf(order(s, ref, i), { nonce: `n${s}-${ref}`, expires_at: 9e12 }),
              ).durable,
          ),
        ),
      );
      const [a, b] = await Promise.all(runs);
      // Each reference: created by exactly one of the two, and the other answered with that order.
      for (let i = 0; i < mine.length; i++) {
        const pair = [a[i], b[mine.length - 1 - i]];
        expect(pair.filter((r) => r.created)).toHaveLength(1);
      }
      const rows = await pgQuery(
        url,
        `select merchant_reference, count(*)::int as n, min(order_id) as order_id from transactions where merchant_reference like '%-${round}' group by merchant_reference`,
      );
      expect(rows).toHaveLength(mine.length);
      expect(rows.every((r) => r.n === 1)).toBe(true);
      const nonces = await pgQuery(url, `select count(*)::int as n from nonces where nonce like '%-${round}'`);
      expect(nonces[0].n).toBe(mine.length);
    }
    const [after] = await pgQuery(
      url,
      'select deadlocks::int as n from pg_stat_database where datname = current_database()',
    );
    expect(after.n - before.n).toBe(0);
  });
});
