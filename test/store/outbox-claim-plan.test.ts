// The claim's cost must grow with the hosts and the rows it claims, not with the rows due. It once
// ranked every due row within its host: about 1.5 us a due row on SQLite (23 ms a claim behind a
// backlog of 20,000 at one merchant, the writer held all that time), and on PostgreSQL, with
// statistics taken while the outbox was empty (the usual state before a burst), a plan that re-ran
// the ranking for every due row. Now it walks outbox_host_due host by host. The plan is checked,
// not the time: on PostgreSQL no step reads more than a few rows of the outbox with 3,000 due at one
// host; on SQLite (no row counts in its plans) the outbox is only ever searched through an index,
// never scanned.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimStatement, type ClaimDialect } from '../../src/store/outbox/base.js';
import { POSTGRES_CLAIM } from '../../src/store/outbox/postgres.js';
import { SQLITE_CLAIM } from '../../src/store/outbox/sqlite.js';
import type { ClaimInput } from '../../src/ports/outbox.js';
import { ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';
import { planNodes as nodes, type PlanNode } from '../support/pg-plan.js';

const BACKLOG = 3000;

describe.each(ENGINES)('the outbox claim on %s', (engine) => {
  let gw: TestGateway;
  const now = Date.now();
  const dialect: ClaimDialect = engine === 'postgres' ? POSTGRES_CLAIM : SQLITE_CLAIM;
  // The stalled host has one slot free here; the others all of theirs.
  const input: ClaimInput = {
    claimed_by: 'plan',
    now,
    lease_ms: 60_000,
    limit: 64,
    per_host: 4,
    host_limits: new Map([['stalled.example:443', 1]]),
  };

  beforeAll(async () => {
    gw = await startTestGateway(engine);
    const { order_id } = await gw.create();
    if (engine === 'postgres') await sql`analyze outbox`.execute(gw.store.db);
    const rows: ReturnType<typeof sql>[] = [];
    const row = (id: string, host: string, at: number, status = 'pending') =>
      sql`(${id}, ${order_id}, ${rows.length + 100}, ${`https://${host}/n`}, ${host}, '{}', ${status}, 0, ${at}, ${now})`;
    // One merchant's backlog, older than everything else, then delivered rows at the same host.
    for (let i = 0; i < BACKLOG; i++) rows.push(row(`evt_s${i}`, 'stalled.example:443', now - 100_000 + i));
    for (let i = 0; i < 500; i++) rows.push(row(`evt_d${i}`, 'stalled.example:443', now - 200_000 + i, 'delivered'));
    for (let i = 0; i < 3; i++) rows.push(row(`evt_b${i}`, 'b.example:443', now - 10 + i));
    for (let i = 0; i < 2; i++) rows.push(row(`evt_c${i}`, 'c.example:443', now + 60_000 + i)); // not due yet
    for (let i = 0; i < rows.length; i += 500) {
      await sql`insert into outbox (event_id, order_id, seq, callback_url, callback_host, payload, delivery_status, attempts, next_attempt_at, created_at)
        values ${sql.join(rows.slice(i, i + 500))}`.execute(gw.store.db);
    }
  });
  afterAll(async () => gw?.close());

  it('never scans the outbox', async () => {
    const compiled = claimStatement(dialect, input).compile(gw.store.db);
    if (engine === 'sqlite') {
      const { rows } = await gw.store.db.executeQuery<{ detail: string }>({
        ...compiled,
        sql: `explain query plan ${compiled.sql}`,
      });
      const details = rows.map((r) => r.detail);
      expect(details.some((d) => /INDEX outbox_host_due \(callback_host=\? AND next_attempt_at<\?\)/.test(d))).toBe(
        true,
      );
      // The host enumeration: one probe after another through the same index.
      expect(details.some((d) => /INDEX outbox_host_due \(callback_host>\?\)/.test(d))).toBe(true);
      // The first host: the index's first entry (`order by callback_host limit 1`), the one scan.
      expect(details.filter((d) => /^SCAN (outbox|i|o)\b/.test(d))).toEqual([
        'SCAN outbox USING COVERING INDEX outbox_host_due',
      ]);
      // The rows picked are updated by key, not found again among the due rows.
      expect(details[0]).toMatch(/^SEARCH outbox USING (COVERING )?INDEX sqlite_autoindex_outbox_1 \(event_id=\?\)$/);
      expect(details.filter((d) => /INDEX outbox_due\b/.test(d))).toEqual([]);
      return;
    }
    const plan = await gw.store.db.connection().execute(async (conn) => {
      await sql`begin`.execute(conn);
      try {
        const { rows } = await conn.executeQuery<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>({
          ...compiled,
          sql: `explain (analyze, format json) ${compiled.sql}`,
        });
        return rows[0]['QUERY PLAN'][0].Plan;
      } finally {
        await sql`rollback`.execute(conn);
      }
    });
    const onOutbox = nodes(plan).filter((n) => n['Relation Name'] === 'outbox');
    expect(onOutbox.length).toBeGreaterThan(0);
    expect(onOutbox.filter((n) => n['Node Type'] === 'Seq Scan')).toEqual([]);
    const read = onOutbox.map((n) => ({
      node: n['Node Type'],
      index: n['Index Name'],
      rows: n['Actual Rows']! * n['Actual Loops']!,
    }));
    expect(read.filter((n) => n.rows > 50)).toEqual([]);
  });

  it(`claims the stalled host's free slot and the other host's rows behind its backlog of ${BACKLOG}`, async () => {
    const claimed = await gw.store.outbox.claimDue(input);
    expect(claimed.map((r) => r.event_id)).toEqual(['evt_s0', 'evt_b0', 'evt_b1', 'evt_b2']);
  });
});
