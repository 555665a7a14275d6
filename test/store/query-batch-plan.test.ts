// The query route's batched read on PostgreSQL (src/store/turn-batch.ts) must find each order
// through the (user_id, merchant_reference) index, also in the generic plan a named statement
// settles on after five executions: a sequential scan would make query time grow with the table.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStatements } from '../../src/store/transactions/postgres.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { planNodes as nodes, type PlanNode } from '../support/pg-plan.js';

describe('the batched query read on postgres', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway('postgres');
    // Enough orders that reading all of them would cost more than the index: the planner then
    // has a real choice to make.
    const m = gw.merchant;
    await sql`insert into transactions (order_id, user_id, wallet_id, merchant_reference, payment_method, host_type, amount, currency,
        product_name, return_url, callback_url, ip, status, channel, refunded_amount, status_seq, created_at, updated_at)
      select 'PLAN' || i, ${m.user_id}, ${m.wallet_id}, 'plan-' || i, 'alipay', 1, 100, 'NZD', 'p', 'https://m.example/r',
        'https://m.example/n', '10.0.0.1', 'pending', 'sandbox', 0, 0, 1, 1
      from generate_series(1, 20000) as i`.execute(gw.store.db);
  });
  afterAll(async () => gw?.close());

  it.each(['force_custom_plan', 'force_generic_plan'])(
    'uses the user_id/merchant_reference index (%s)',
    async (mode) => {
      const created = await Promise.all([1, 2, 3].map(() => gw.create()));
      await sql`analyze transactions`.execute(gw.store.db);
      const compiled = postgresStatements(gw.store.db).resultsByReferences.bind({
        user_ids: created.map(() => gw.merchant.user_id),
        merchant_references: created.map((c) => c.merchant_reference),
      });
      const plan = await gw.store.db.connection().execute(async (conn) => {
        await sql.raw(`set plan_cache_mode = ${mode}`).execute(conn);
        try {
          await conn.executeQuery({
            ...compiled,
            sql: `prepare batch_plan (text[], text[]) as ${compiled.sql}`,
            parameters: [],
          });
          // EXPLAIN EXECUTE takes no bound parameters: the arrays as literals (ids and references are plain words).
          const literal = (a: unknown) => `'{${(a as string[]).join(',')}}'`;
          const { rows } = await sql
            .raw<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
              `explain (format json) execute batch_plan (${compiled.parameters.map(literal).join(', ')})`,
            )
            .execute(conn);
          return rows[0]['QUERY PLAN'][0].Plan;
        } finally {
          await sql.raw('deallocate batch_plan').execute(conn);
          await sql.raw('reset plan_cache_mode').execute(conn);
        }
      });
      const all = nodes(plan);
      expect(all.map((n) => n['Node Type'])).not.toContain('Seq Scan');
      expect(all.some((n) => n['Index Name'] === 'transactions_user_reference')).toBe(true);
    },
  );
});
