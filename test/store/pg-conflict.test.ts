// PostgreSQL undoes a deadlock's victim. A statement on its own that lost is run again by the
// store (failover-pool.ts): its caller never sees it. Inside a transaction the whole unit was
// undone, so it surfaces as DatabaseConflict, which the API answers with code 1 "send it again".
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DatabaseConflict } from '../../src/ports/store.js';
import { openStore } from '../../src/store/open.js';
import type { SqlStore } from '../../src/store/sql-store.js';
import { databaseFor } from '../support/gateway.js';

describe('PostgreSQL: a statement that loses a deadlock', () => {
  let url: string;
  let store: SqlStore;
  let db: Kysely<unknown>;
  beforeAll(async () => {
    url = (await databaseFor('postgres')).database;
    store = await openStore(url, { poolSize: 2 });
    db = store.db as unknown as Kysely<unknown>;
    await sql`create table conflict_t (id int primary key, v int not null)`.execute(db);
    // A sequence is not undone with a transaction: it counts the runs of the function.
    await sql`create sequence conflict_runs`.execute(db);
    // Row 2, then row 1 (which A holds), where it waits.
    await sql`create function conflict_two_then_one() returns void language plpgsql as $$
      begin
        perform nextval('conflict_runs');
        update conflict_t set v = v + 1 where id = 2;
        update conflict_t set v = v + 1 where id = 1;
      end $$`.execute(db);
  });
  afterAll(async () => store?.close());
  beforeEach(async () => {
    await sql`delete from conflict_t`.execute(db);
    await sql`insert into conflict_t values (1, 0), (2, 0)`.execute(db);
  });

  /**
   * Runs `b` against a transaction A that holds row 1 and, once `b` holds row 2 and waits for row 1,
   * asks for row 2. `b` began waiting first, so its deadlock check (after deadlock_timeout) finds
   * the cycle and it is the one undone; A then commits. Also says how many times `b`'s function ran.
   */
  async function deadlockWith(
    b: () => Promise<unknown>,
  ): Promise<{ settled: PromiseSettledResult<unknown>; runs: number }> {
    const a = new pg.Client({ connectionString: url });
    await a.connect();
    try {
      const before = Number(
        (await a.query<{ n: string }>('select case when is_called then last_value else 0 end as n from conflict_runs'))
          .rows[0].n,
      );
      await a.query('begin');
      await a.query('update conflict_t set v = v + 1 where id = 1');
      const settled = b().then(
        (value) => ({ status: 'fulfilled', value }) as const,
        (reason: unknown) => ({ status: 'rejected', reason }) as const,
      );
      // Not a fixed wait: until b's statement waits for A (for its row lock).
      for (let waited = 0; ; waited += 20) {
        const { rows } = await a.query(
          'select 1 from pg_stat_activity where pg_backend_pid() = any(pg_blocking_pids(pid))',
        );
        if (rows.length > 0) break;
        if (waited > 10_000) throw new Error('the statement never waited for the row A holds');
        await new Promise((r) => setTimeout(r, 20));
      }
      await a.query('update conflict_t set v = v + 1 where id = 2');
      await a.query('commit');
      const result = await settled;
      const after = Number(
        (await a.query<{ n: string }>('select case when is_called then last_value else 0 end as n from conflict_runs'))
          .rows[0].n,
      );
      return { settled: result, runs: after - before };
    } finally {
      await a.end();
    }
  }

  const values = async () =>
    (await sql<{ id: number; v: number }>`select id, v from conflict_t order by id`.execute(db)).rows.map((r) => r.v);

  it('on its own, is run again and succeeds once the other commits', async () => {
    const { settled: r, runs } = await deadlockWith(() => sql`select conflict_two_then_one()`.execute(db));
    expect(r.status).toBe('fulfilled');
    // Undone once by the deadlock, then run again.
    expect(runs).toBe(2);
    // A's +1 and the statement's +1 on each row, the statement's once.
    expect(await values()).toEqual([2, 2]);
  });

  it('inside a transaction, undoes the whole unit and says so as DatabaseConflict', async () => {
    const { settled: r, runs } = await deadlockWith(() =>
      store.db.transaction().execute(async (trx) => {
        await sql`select conflict_two_then_one()`.execute(trx);
      }),
    );
    expect(runs).toBe(1);
    expect(r.status).toBe('rejected');
    expect((r as PromiseRejectedResult).reason).toBeInstanceOf(DatabaseConflict);
    expect(String((r as PromiseRejectedResult).reason)).toMatch(/40P01|deadlock/);
    // Only A's changes.
    expect(await values()).toEqual([1, 1]);
  });
});
