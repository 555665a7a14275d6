import { sql, type Kysely } from 'kysely';
import type { OutboxRow } from '../../ports/outbox.js';
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

export class PostgresOutbox extends SqlOutbox {
  constructor(db: Kysely<Database>) {
    super(db, POSTGRES_CLAIM);
  }
}
