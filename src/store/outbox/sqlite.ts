import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { AttemptRecord, ClaimedRow } from '../../ports/outbox.js';
import { prepared } from '../prepared.js';
import type { Database } from '../schema.js';
import type { GroupCommitSqlite } from '../sqlite/group-commit.js';
import {
  CLAIMED,
  SqlOutbox,
  attemptArgs,
  countAttempt,
  endClaim,
  insertAttempt,
  type AttemptArgs,
  type ClaimDialect,
} from './base.js';

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
    sql<ClaimedRow>`update outbox set ${set} where event_id in (
      select event_id from (${picked}) picked order by next_attempt_at, event_id limit ${limit}
    ) returning ${CLAIMED}`,
  firstOfEachHost: (pick) => sql`hosts join outbox o on o.event_id in (${pick})`,
  byHost: sql` indexed by outbox_host_due`,
};

function attemptStatementsOf(db: Kysely<Database>) {
  return {
    insertAttempt: prepared((p: AttemptArgs) => insertAttempt(db, p)),
    endDelivered: prepared((p: AttemptArgs) => endClaim(db, p, true)),
    endRetry: prepared((p: AttemptArgs) => endClaim(db, p, false)),
    countAttempt: prepared((p: AttemptArgs) => countAttempt(db, p)),
  };
}
type AttemptStatements = ReturnType<typeof attemptStatementsOf>;

export class SqliteOutbox extends SqlOutbox {
  private readonly a: AttemptStatements;

  constructor(
    db: Kysely<Database>,
    private readonly gc: Pick<GroupCommitSqlite, 'writeAtomically'>,
  ) {
    super(db, SQLITE_CLAIM);
    this.a = attemptStatementsOf(db);
  }

  /**
   * Answered once committed, without waiting for its flush: a claim a crash takes back costs
   * nothing, since a gateway on SQLite serves its file alone and frees every claim at start
   * (releaseClaims). The notification is then sent one flush sooner.
   */
  protected override runClaim(claim: RawBuilder<ClaimedRow>): Promise<ClaimedRow[]> {
    const compiled = claim.compile(this.db);
    return this.gc.writeAtomically((run) => run(compiled).rows, 'committed');
  }

  /** One synchronous unit (GroupCommitSqlite.writeAtomically): every notification sent records one. */
  override recordAttempt(input: AttemptRecord): Promise<boolean> {
    const args = attemptArgs(input);
    const end = input.delivered ? this.a.endDelivered : this.a.endRetry;
    return this.gc.writeAtomically((run) => {
      run(this.a.insertAttempt.bind(args));
      if (run(end.bind(args)).numAffectedRows! > 0n) return true;
      run(this.a.countAttempt.bind(args));
      return false;
    });
  }
}
