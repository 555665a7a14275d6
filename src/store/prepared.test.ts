import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  sql,
  type CompiledQuery,
} from 'kysely';
import { describe, expect, it } from 'vitest';
import { prepared, row } from './prepared.js';

interface DB {
  items: {
    id: string;
    owner: string;
    qty: number;
    note: string | null;
    state: string;
    created_at: number;
    updated_at: number;
  };
}

// Compiles PostgreSQL SQL without a database ($1, $2, ... show the parameter positions).
const db = new Kysely<DB>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (k) => new PostgresIntrospector(k),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

function recorder() {
  const seen: CompiledQuery[] = [];
  return {
    seen,
    executor: {
      async executeQuery<R>(query: CompiledQuery<R>) {
        seen.push(query);
        return { rows: [{ n: seen.length }] as R[] };
      },
    },
  };
}

const ITEM_COLUMNS = ['id', 'owner', 'qty', 'note', 'state', 'created_at', 'updated_at'] as const;

describe('prepared', () => {
  it('builds and compiles once, on first use', async () => {
    let builds = 0;
    const q = prepared((p: { id: string }) => {
      builds++;
      return db.selectFrom('items').selectAll().where('id', '=', p.id);
    });
    expect(builds).toBe(0);
    const { seen, executor } = recorder();
    for (const id of ['a', 'b', 'c']) await q.execute(executor, { id });
    expect(builds).toBe(1);
    expect(seen.map((s) => s.parameters)).toEqual([['a'], ['b'], ['c']]);
  });

  it('gives the same SQL as compiling with the values, and each argument its positions', () => {
    const build = (p: { owner: string; qty: number; now: number }) =>
      db
        .updateTable('items')
        .set({ qty: p.qty, state: sql.lit('seen'), updated_at: p.now, created_at: p.now })
        .where('owner', '=', p.owner)
        .where('state', '=', sql.lit('new'))
        .where('note', 'is', null)
        .returning(sql`pg_notify(${sql.lit('chan')}, ${p.owner})`.as('n'));
    const args = { owner: 'o1', qty: 7, now: 1234 };
    const direct = build(args).compile();
    const bound = prepared(build).bind(args);
    expect(bound.sql).toBe(direct.sql);
    // Constants are in the SQL text; an argument used twice fills both positions.
    expect(bound.sql).toContain(`"state" = 'new'`);
    expect(bound.parameters).toEqual(direct.parameters);
    expect(bound.parameters).toEqual([7, 1234, 1234, 'o1', 'o1']);
  });

  it('refuses, when compiling, a parameter that is not an argument (it would be frozen at its first value)', () => {
    let status = 'new';
    const q = prepared((p: { id: string }) => db.updateTable('items').set({ state: status }).where('id', '=', p.id));
    expect(() => q.compiled()).toThrow(/parameter 1 .* is "new", not an argument: write a constant with sql\.lit\(\)/);
    status = 'other';
    expect(() => q.bind({ id: 'a' })).toThrow(/not an argument/);
    const constant = prepared((p: { id: string }) =>
      db.selectFrom('items').selectAll().where('id', '=', p.id).where('state', '=', 'new'),
    );
    expect(() => constant.compiled()).toThrow(/not an argument/);
  });

  it('hands every execution a fresh parameter array', async () => {
    const q = prepared((p: { id: string }) => db.selectFrom('items').selectAll().where('id', '=', p.id));
    const { seen, executor } = recorder();
    await q.execute(executor, { id: 'a' });
    await q.execute(executor, { id: 'b' });
    expect(seen[0].parameters).not.toBe(seen[1].parameters);
    expect(seen[0].parameters).toEqual(['a']);
    expect(seen[0].sql).toBe(seen[1].sql);
  });

  it('first() is the first row or undefined', async () => {
    const q = prepared((p: { id: string }) => db.selectFrom('items').select('id').where('id', '=', p.id));
    expect(await q.first(recorder().executor, { id: 'x' })).toEqual({ n: 1 });
    expect(await q.first({ executeQuery: async () => ({ rows: [] }) }, { id: 'x' })).toBeUndefined();
  });

  it('refuses an undefined argument (a DEFAULT would not apply), and sends null as NULL', () => {
    const q = prepared((p: { id: string; note?: string | null }) =>
      db.updateTable('items').set({ note: p.note }).where('id', '=', p.id),
    );
    expect(() => q.bind({ id: 'a' })).toThrow(/argument note is undefined; pass null for NULL/);
    expect(q.bind({ id: 'a', note: null }).parameters).toEqual([null, 'a']);
    expect(q.bind({ id: 'a', note: 'n' }).parameters).toEqual(['n', 'a']);
  });

  it('inserts name their columns from the list: the order of the caller object keys does not matter', () => {
    type Item = DB['items'];
    const insert = prepared((p: Item) => db.insertInto('items').values(row(p, ITEM_COLUMNS)));
    const item: Item = { id: 'i', owner: 'o', qty: 3, note: null, state: 'new', created_at: 1, updated_at: 2 };
    const reversed = Object.fromEntries(Object.entries(item).reverse()) as Item;
    const a = insert.bind(item);
    const b = insert.bind(reversed);
    expect(a.sql).toBe(
      'insert into "items" ("id", "owner", "qty", "note", "state", "created_at", "updated_at") values ($1, $2, $3, $4, $5, $6, $7)',
    );
    expect(a.parameters).toEqual(['i', 'o', 3, null, 'new', 1, 2]);
    expect(b.parameters).toEqual(a.parameters);
  });

  it('refuses to list the arguments while compiling (an insert must use a column list)', () => {
    const q = prepared((p: DB['items']) => db.insertInto('items').values({ ...p }));
    expect(() => q.compiled()).toThrow(/row\(p, COLUMNS\)/);
  });
});
