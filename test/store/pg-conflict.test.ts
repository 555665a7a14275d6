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
    // Row 2, then (after A has taken row 1 and is about to ask for row 2) row 1.
    await sql`create function conflict_two_then_one() returns void language plpgsql as $$
      begin
        update conflict_t set v = v + 1 where id = 2;
        perform pg_sleep(0.2);
        update conflict_t set v = v + 1 where id = 1;
      end $$`.execute(db);
  });
  afterAll(async () => store?.close());
  beforeEach(async () => {
    await sql`delete from conflict_t`.execute(db);
    await sql`insert into conflict_t values (1, 0), (2, 0)`.execute(db);
  });

  /**
   * Runs `b` against a transaction A that holds row 1 and then asks for row 2 while `b` holds row 2
   * and waits for row 1. `b` began waiting first, so its deadlock check (after deadlock_timeout)
   * finds the cycle and it is the one undone; A then commits.
   */
  async function deadlockWith(b: () => Promise<unknown>): Promise<PromiseSettledResult<unknown>> {
    const a = new pg.Client({ connectionString: url });
    await a.connect();
    try {
      await a.query('begin');
      await a.query('update conflict_t set v = v + 1 where id = 1');
      const settled = b().then(
        (value) => ({ status: 'fulfilled', value }) as const,
        (reason: unknown) => ({ status: 'rejected', reason }) as const,
      );
      await new Promise((r) => setTimeout(r, 400));
      await a.query('update conflict_t set v = v + 1 where id = 2');
      await a.query('commit');
      return await settled;
    } finally {
      await a.end();
    }
  }

  const values = async () =>
    (await sql<{ id: number; v: number }>`select id, v from conflict_t order by id`.execute(db)).rows.map((r) => r.v);

  it('on its own, is run again and succeeds once the other commits', async () => {
    const r = await deadlockWith(() => sql`select conflict_two_then_one()`.execute(db));
    expect(r.status).toBe('fulfilled');
    // A's +1 and the statement's +1 on each row, the statement's once.
    expect(await values()).toEqual([2, 2]);
  });

  it('inside a transaction, undoes the whole unit and says so as DatabaseConflict', async () => {
    const r = await deadlockWith(() =>
      store.db.transaction().execute(async (trx) => {
        await sql`select conflict_two_then_one()`.execute(trx);
      }),
    );
    expect(r.status).toBe('rejected');
    expect((r as PromiseRejectedResult).reason).toBeInstanceOf(DatabaseConflict);
    expect(String((r as PromiseRejectedResult).reason)).toMatch(/40P01|deadlock/);
    // Only A's changes.
    expect(await values()).toEqual([1, 1]);
  });
});
