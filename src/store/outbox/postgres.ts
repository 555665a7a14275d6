import { sql, type Kysely } from 'kysely';
import type { AttemptRecord, ClaimedRow, QueuedClaimInput } from '../../ports/outbox.js';
import { prepared, raw } from '../prepared.js';
import type { Database } from '../schema.js';
import {
  CLAIMED,
  SqlOutbox,
  attemptArgs,
  byDue,
  countAttempt,
  dueAt,
  endClaim,
  insertAttempt,
  type AttemptArgs,
  type ClaimDialect,
} from './base.js';

/**
 * Concurrent claimers (other instances) skip each other's locked rows (so the limit comes after the
 * lock: a claimer takes the next free rows, not none), and a row is due again when
 * it is locked (another claim may have taken it since it was picked). `= any(array(...))` runs each
 * subquery once and looks the rows up by primary key: with `in (...)` the planner, misled by
 * statistics taken while the outbox was nearly empty (the usual state before a burst), chose nested
 * loops that re-ran the pick for every due row (docs/design/outbox-claim.md).
 */
export const POSTGRES_CLAIM: ClaimDialect = {
  claim: (picked, limit, due, set) =>
    sql<ClaimedRow>`update outbox set ${set} where event_id = any(array(
      select event_id from outbox where event_id = any(array(select event_id from (${picked}) picked)) and ${due}
      order by next_attempt_at, event_id limit ${limit} for update skip locked
    )) and ${due} returning ${CLAIMED}`,
  firstOfEachHost: (pick) =>
    sql`hosts cross join lateral (${pick}) firsts join outbox o on o.event_id = firsts.event_id`,
  byHost: sql``,
};

/**
 * An attempt's record as one statement (one round trip, where a transaction of three statements
 * took four): the three writes as CTEs, the count only when the claim's end changed nothing. Tells
 * whether the claim was still the attempt's own.
 */
function recordStatement(db: Kysely<Database>, delivered: boolean) {
  return prepared((p: AttemptArgs) =>
    db
      // Built on `db`: none of them reads an earlier CTE but through raw SQL.
      .with('attempt', () => insertAttempt(db, p))
      .with('ended', () => endClaim(db, p, delivered).returning(sql<number>`1`.as('one')))
      .with('counted', () =>
        countAttempt(db, p)
          .where(sql<boolean>`not exists (select 1 from ended)`)
          .returning(sql<number>`1`.as('one')),
      )
      .selectNoFrom(sql<boolean>`exists (select 1 from ended)`.as('owned')),
  );
}

/**
 * The claim of rows by id (claimQueued) with the ids as one array: one text for any number of
 * ids, so it is parsed and planned once per connection (a named statement), not on every claim.
 */
function queuedClaimStatement(db: Kysely<Database>) {
  return prepared((p: { claimed_by: string; claimed_until: number; now: number; event_ids: string[] }) =>
    raw(
      db,
      sql<ClaimedRow>`update outbox set claimed_by = ${p.claimed_by}, claimed_until = ${p.claimed_until}
      where event_id = any(${p.event_ids}::text[]) and ${dueAt(p.now)} returning ${CLAIMED}`,
    ),
  );
}

export class PostgresOutbox extends SqlOutbox {
  private readonly record;
  private readonly queued;

  constructor(db: Kysely<Database>) {
    super(db, POSTGRES_CLAIM);
    this.record = { delivered: recordStatement(db, true), retry: recordStatement(db, false) };
    this.queued = queuedClaimStatement(db);
  }

  override async claimQueued(input: QueuedClaimInput): Promise<ClaimedRow[]> {
    if (input.event_ids.length === 0) return [];
    const { rows } = await this.queued.execute(this.db, {
      claimed_by: input.claimed_by,
      claimed_until: input.now + input.lease_ms,
      now: input.now,
      event_ids: [...input.event_ids],
    });
    return rows.sort(byDue);
  }

  override async recordAttempt(input: AttemptRecord): Promise<boolean> {
    const statement = input.delivered ? this.record.delivered : this.record.retry;
    const result = await statement.first(this.db, attemptArgs(input));
    return result?.owned === true;
  }
}
