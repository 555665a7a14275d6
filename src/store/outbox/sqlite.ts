import { sql, type Kysely } from 'kysely';
import type { AttemptRecord, OutboxRow } from '../../ports/outbox.js';
import type { Database } from '../schema.js';
import type { GroupCommitSqlite } from '../sqlite/group-commit.js';
import { SqlOutbox, attemptStatements, type ClaimDialect } from './base.js';

/**
 * SQLite has one writer at a time: the rows the statement picked are still due when it updates
 * them, so the update only looks them up by key (with the due condition beside it, its planner
 * would walk every due row in outbox_due instead).
 * It has no lateral join: each host's first rows are a correlated `in`, which it runs once a host.
 * Its planner, without statistics, would rather sort the pending rows by host than walk the partial
 * index; `indexed by` leaves it no choice (and makes the statement fail if the index were missing).
 */
export const SQLITE_CLAIM: ClaimDialect = {
  claim: (picked, limit, _due, set) =>
    sql<OutboxRow>`update outbox set ${set} where event_id in (
      select event_id from (${picked}) picked order by next_attempt_at, event_id limit ${limit}
    ) returning *`,
  firstOfEachHost: (pick) => sql`hosts join outbox o on o.event_id in (${pick})`,
  byHost: sql` indexed by outbox_host_due`,
};

export class SqliteOutbox extends SqlOutbox {
  constructor(
    db: Kysely<Database>,
    private readonly gc: Pick<GroupCommitSqlite, 'writeAtomically'>,
  ) {
    super(db, SQLITE_CLAIM);
  }

  /** One synchronous unit (GroupCommitSqlite.writeAtomically): every notification sent records one. */
  override recordAttempt(input: AttemptRecord): Promise<boolean> {
    return this.gc.writeAtomically((run) => {
      const [insert, end, counted] = attemptStatements(this.a, input);
      run(insert);
      if (run(end).numAffectedRows! > 0n) return true;
      run(counted);
      return false;
    });
  }
}
