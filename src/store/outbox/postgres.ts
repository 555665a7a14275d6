import { sql, type Kysely } from 'kysely';
import type { AttemptRecord, NotificationAttempt, OutboxRow } from '../../ports/outbox.js';
import { ATTEMPT_COLUMNS } from '../columns.js';
import { prepared, row } from '../prepared.js';
import type { Database } from '../schema.js';
import { SqlOutbox, type ClaimDialect } from './base.js';

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
    sql<OutboxRow>`update outbox set ${set} where event_id = any(array(
      select event_id from outbox where event_id = any(array(select event_id from (${picked}) picked)) and ${due}
      order by next_attempt_at, event_id limit ${limit} for update skip locked
    )) and ${due} returning *`,
  firstOfEachHost: (pick) => sql`hosts cross join lateral (${pick}) firsts join outbox o on o.event_id = firsts.event_id`,
  byHost: sql``,
};

type AttemptArgs = Omit<NotificationAttempt, 'attempt_id'> & { claimed_by: string; claimed_until: number; delivered_at: number; next_attempt_at: number };

/**
 * An attempt's record as one statement (one round trip, where a transaction of three statements
 * took four): its row; the end of its claim, delivered or due again, when the claim is still this
 * attempt's; else the attempt counted alone. Tells whether the claim was still its own.
 */
function recordStatement(db: Kysely<Database>, delivered: boolean) {
  return prepared((p: AttemptArgs) =>
    db
      .with('attempt', (qc) => qc.insertInto('notification_attempts').values(row(p, ATTEMPT_COLUMNS)))
      .with('ended', (qc) =>
        qc
          .updateTable('outbox')
          .set({
            ...(delivered ? { delivery_status: sql.lit('delivered'), delivered_at: p.delivered_at } : { next_attempt_at: p.next_attempt_at }),
            attempts: sql`attempts + 1`,
            claimed_by: sql.lit(null),
            claimed_until: sql.lit(null),
          })
          .where('event_id', '=', p.event_id)
          .where('delivery_status', '=', sql.lit('pending'))
          .where('claimed_by', '=', p.claimed_by)
          .where('claimed_until', '=', p.claimed_until)
          .returning(sql<number>`1`.as('one')),
      )
      .with('counted', (qc) =>
        qc
          .updateTable('outbox')
          .set({ attempts: sql`attempts + 1` })
          .where('event_id', '=', p.event_id)
          .where(sql<boolean>`not exists (select 1 from ended)`)
          .returning(sql<number>`1`.as('one')),
      )
      .selectNoFrom(sql<boolean>`exists (select 1 from ended)`.as('owned')),
  );
}

export class PostgresOutbox extends SqlOutbox {
  private readonly record;

  constructor(db: Kysely<Database>) {
    super(db, POSTGRES_CLAIM);
    this.record = { delivered: recordStatement(db, true), retry: recordStatement(db, false) };
  }

  override async recordAttempt(input: AttemptRecord): Promise<boolean> {
    const statement = input.delivered ? this.record.delivered : this.record.retry;
    const result = await statement.first(this.db, {
      event_id: input.event_id,
      ...input.attempt,
      claimed_by: input.claimed_by,
      claimed_until: input.claimed_until,
      delivered_at: input.now,
      next_attempt_at: input.next_attempt_at,
    });
    return result?.owned === true;
  }
}
