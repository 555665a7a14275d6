import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { SqlOutbox, type ClaimDialect } from './base.js';

/**
 * Concurrent claimers (other instances) skip each other's locked rows. `= any(array(...))` runs
 * each subquery once and looks the rows up by primary key: with `in (...)` the planner, misled by
 * statistics taken while the outbox was nearly empty (the usual state before a burst), chose nested
 * loops that re-ran the ranking for every due row (docs/design/outbox-claim.md).
 */
export const POSTGRES_CLAIM: ClaimDialect = { among: (rows) => sql`= any(array(${rows}))`, lock: sql` for update skip locked` };

export class PostgresOutbox extends SqlOutbox {
  constructor(db: Kysely<Database>) {
    super(db, POSTGRES_CLAIM);
  }
}
