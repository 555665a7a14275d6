// The claim's cost must grow with the rows it claims, not with the square of the rows due. On
// PostgreSQL, statistics taken while the outbox was empty (the usual state before a burst of
// settlements) once led the planner to re-run the per-host ranking for every due row: 20-45 ms per
// claim at a few hundred due rows, and a backlog drained at 20 a second. The plan is checked, not
// the time: the ranking (a WindowAgg) must run once however many rows are due.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimStatement } from '../../src/store/outbox/base.js';
import { POSTGRES_CLAIM } from '../../src/store/outbox/postgres.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { planNodes as nodes, type PlanNode } from '../support/pg-plan.js';

describe('the outbox claim on postgres', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway('postgres');
  });
  afterAll(async () => gw?.close());

  it('ranks the due rows once, with 300 due and statistics from an empty outbox', async () => {
    const { order_id } = await gw.create();
    await sql`analyze outbox`.execute(gw.store.db);
    const now = Date.now();
    await sql`insert into outbox (event_id, order_id, seq, callback_url, callback_host, payload, delivery_status, attempts, next_attempt_at, created_at)
      select 'evt_plan_' || i, ${order_id}, i, 'http://127.0.0.1:9/n', '127.0.0.1:9', '{}', 'pending', 0, cast(${now} as bigint) - i, cast(${now} as bigint)
      from generate_series(1, 300) as i`.execute(gw.store.db);
    const claim = claimStatement(POSTGRES_CLAIM, { claimed_by: 'plan', now, lease_ms: 60_000, limit: 64, per_host: 4, host_limits: new Map([['127.0.0.1:9', 2]]) });
    const plan = await gw.store.db.connection().execute(async (conn) => {
      await sql`begin`.execute(conn);
      try {
        const compiled = claim.compile(gw.store.db);
        const { rows } = await conn.executeQuery<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>({ ...compiled, sql: `explain (analyze, format json) ${compiled.sql}` });
        return rows[0]!['QUERY PLAN'][0]!.Plan;
      } finally {
        await sql`rollback`.execute(conn);
      }
    });
    const windows = nodes(plan).filter((n) => n['Node Type'] === 'WindowAgg');
    expect(windows.length).toBeGreaterThan(0);
    for (const w of windows) expect(w['Actual Loops']).toBe(1);
  });
});
