// Every connection to PostgreSQL may be cut (a database restart, a failover, an administrator's
// pg_terminate_backend): the instances stay up, reconnect, and serve again.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { PgStatusSignals } from '../../src/signals/pg-status-signals.js';
import { startTestGateway } from '../support/gateway.js';
import { createTestDatabase } from '../support/pg-db.js';
import { pgQuery, startPair, until, type GatewayPair } from './pair.js';

let pair: GatewayPair;
beforeAll(async () => {
  pair = await startPair({ longPollTimeoutMs: 20_000 });
});
afterAll(async () => pair?.close());

describe('losing every database connection', () => {
  it('leaves both instances serving, with cross-instance long polls working again', async () => {
    const { a, b } = pair;
    // Fill both pools with idle connections.
    await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).create({}, a.merchant)));
    const listened = [a, b].map((gw) => (gw.ctx.signals as PgStatusSignals).connections);

    const killed = await pgQuery(
      pair.database,
      'select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
    );
    expect(killed.length).toBeGreaterThanOrEqual(4);
    await until('both listeners to reconnect', () =>
      [a, b].every(
        (gw, i) =>
          (gw.ctx.signals as PgStatusSignals).connections > listened[i] &&
          (gw.ctx.signals as PgStatusSignals).listening,
      ),
    );

    const { merchant_reference, order_id } = await b.create({}, a.merchant);
    const polled = a.query(merchant_reference, { block: true, merchant: a.merchant });
    await until('the long poll', () => a.ctx.signals.waiting > 0);
    expect(await b.pay(order_id)).toMatchObject({ code: 0, status: 'paid' });
    expect(await polled).toMatchObject({ code: 0, status: 'paid' });
    const again = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).create({}, a.merchant)));
    expect(new Set(again.map((c) => c.order_id)).size).toBe(20);
  });
});

describe('a connection cut while a request holds it', () => {
  it('fails that request alone; the process goes on, and the next request gets a fresh connection', async () => {
    const database = await createTestDatabase(inject('pgUrl'));
    const gw = await startTestGateway('postgres', { database });
    const uncaught: unknown[] = [];
    const onUncaught = (e: unknown) => uncaught.push(e);
    process.on('uncaughtException', onUncaught);
    try {
      // A connection checked out between two statements (a transaction's JavaScript work, say) when
      // the server ends it: pg-pool listens for errors only on its idle connections.
      await gw.store.db.connection().execute(async (c) => {
        const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(c);
        await pgQuery(database, 'select pg_terminate_backend($1)', [rows[0].pid]);
        await new Promise((r) => setTimeout(r, 200));
        await expect(sql`select 1`.execute(c)).rejects.toThrow();
      });
      expect(uncaught).toEqual([]);
      expect((await gw.create()).reply).toMatchObject({ code: 0 });
    } finally {
      process.off('uncaughtException', onUncaught);
      await gw.close();
    }
  });
});

describe('connections per instance', () => {
  it('are at most the pool size, plus one for LISTEN', async () => {
    const database = await createTestDatabase(inject('pgUrl'));
    const gw = await startTestGateway('postgres', { poolSize: 3, database });
    try {
      const created = await Promise.all(Array.from({ length: 30 }, () => gw.create()));
      await Promise.all(created.map((c, i) => gw.pay(c.order_id, i % 2 ? 'paid' : 'failed')));
      const rows = await pgQuery(
        database,
        "select count(*) filter (where application_name = 'gateway-status-listener')::int as listen, count(*) filter (where application_name <> 'gateway-status-listener')::int as pool from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()",
      );
      expect(rows[0]).toEqual({ listen: 1, pool: expect.any(Number) });
      expect(rows[0].pool).toBeLessThanOrEqual(3);
    } finally {
      await gw.close();
    }
  });
});
