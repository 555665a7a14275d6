import { sql, type Kysely } from 'kysely';
import type { AttemptRecord, NotificationAttempt, OutboxRow } from '../../ports/outbox.js';
import { ATTEMPT_COLUMNS } from '../columns.js';
import { prepared, row } from '../prepared.js';
import type { Database } from '../schema.js';
import type { GroupCommitSqlite } from '../sqlite/group-commit.js';
import { SqlOutbox, type ClaimDialect } from './base.js';

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

/**
 * The statements of an attempt's record, in order: its row; the end of the claim it was made
 * under (delivered, or due again), which changes nothing when the claim is no longer this
 * attempt's; and, only then, the attempt counted alone.
 */
function attemptStatements(a: AttemptStatements, input: AttemptRecord) {
  const claim = { event_id: input.event_id, claimed_by: input.claimed_by, claimed_until: input.claimed_until };
  return [
    a.insertAttempt.bind({ event_id: input.event_id, ...input.attempt }),
    input.delivered ? a.endDelivered.bind({ ...claim, delivered_at: input.now }) : a.endRetry.bind({ ...claim, next_attempt_at: input.next_attempt_at }),
    a.countAttempt.bind({ event_id: input.event_id }),
  ] as const;
}

function attemptStatementsOf(db: Kysely<Database>) {
  type Claim = { event_id: string; claimed_by: string; claimed_until: number };
  const ownedPending = (p: Claim) =>
    db
      .updateTable('outbox')
      .where('event_id', '=', p.event_id)
      .where('delivery_status', '=', sql.lit('pending'))
      .where('claimed_by', '=', p.claimed_by)
      .where('claimed_until', '=', p.claimed_until);
  return {
    insertAttempt: prepared((p: Omit<NotificationAttempt, 'attempt_id'>) => db.insertInto('notification_attempts').values(row(p, ATTEMPT_COLUMNS))),
    endDelivered: prepared((p: Claim & { delivered_at: number }) =>
      ownedPending(p).set({ delivery_status: sql.lit('delivered'), delivered_at: p.delivered_at, attempts: sql`attempts + 1`, claimed_by: sql.lit(null), claimed_until: sql.lit(null) }),
    ),
    endRetry: prepared((p: Claim & { next_attempt_at: number }) =>
      ownedPending(p).set({ next_attempt_at: p.next_attempt_at, attempts: sql`attempts + 1`, claimed_by: sql.lit(null), claimed_until: sql.lit(null) }),
    ),
    countAttempt: prepared((p: { event_id: string }) => db.updateTable('outbox').set({ attempts: sql`attempts + 1` }).where('event_id', '=', p.event_id)),
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
