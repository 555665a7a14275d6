import { sql, type Kysely } from 'kysely';
import type { Engine } from './migrations.js';
import type { Database } from './schema.js';
import type { AttemptRecord, ClaimInput, NotificationAttempt, OutboxRow } from './store.js';

// The notification outbox: claiming due rows under a lease, recording attempts, and the
// look-ups the CLI needs. KyselyStore delegates here.

export async function claimDueNotifications(db: Kysely<Database>, engine: Engine, input: ClaimInput): Promise<OutboxRow[]> {
  // The idle poll is a read: no write transaction (and, on SQLite, no fsync) when nothing is due.
  const { rows: anyDue } = await sql`select 1 as due from outbox where ${dueAt(input.now)} limit 1`.execute(db);
  if (anyDue.length === 0) return [];
  const { rows } = await claimStatement(engine, input).execute(db);
  return rows.sort((a, b) => a.next_attempt_at - b.next_attempt_at || (a.event_id < b.event_id ? -1 : 1));
}

const dueAt = (now: number) => sql`delivery_status = 'pending' and next_attempt_at <= ${now} and (claimed_until is null or claimed_until <= ${now})`;

/** The claim as one statement (exported so a test can look at its plan). */
export function claimStatement(engine: Engine, input: ClaimInput) {
  const { now } = input;
  const due = dueAt(now);
  const limits = [...(input.host_limits ?? new Map<string, number>())];
  const hostLimit =
    limits.length === 0
      ? sql`cast(${input.per_host} as integer)`
      : sql`case callback_host ${sql.join(
          limits.map(([host, n]) => sql`when ${host} then cast(${n} as integer)`),
          sql` `,
        )} else cast(${input.per_host} as integer) end`;
  // Rank due rows within their host so one merchant's backlog cannot fill the batch: the rows
  // of other merchants behind it are claimed in the same batch (no head-of-line blocking).
  const ranked = sql`select event_id from (
      select event_id, callback_host, row_number() over (partition by callback_host order by next_attempt_at, event_id) as rn
      from outbox where ${due}
    ) ranked where rn <= ${hostLimit}`;
  const lock = engine === 'postgres' ? sql` for update skip locked` : sql``;
  // PostgreSQL: `= any(array(...))` runs each subquery once and looks the rows up by primary key.
  // With `in (...)` the planner, misled by statistics taken while the outbox was nearly empty (the
  // usual state before a burst), chose nested loops that re-ran the ranking for every due row:
  // 20-45 ms per claim at a few hundred due rows, and a backlog drained at about 20 a second.
  const among = (rows: typeof ranked) => (engine === 'postgres' ? sql`= any(array(${rows}))` : sql`in (${rows})`);
  const pick = sql`select event_id from outbox where event_id ${among(ranked)} and ${due}
    order by next_attempt_at, event_id limit ${input.limit}${lock}`;
  // SQLite: one writer at a time, so this conditional update is the whole claim.
  return sql<OutboxRow>`update outbox set claimed_by = ${input.claimed_by}, claimed_until = ${now + input.lease_ms}
    where event_id ${among(pick)} and ${due} returning *`;
}

/**
 * Frees every claim on a pending row. Only for a process that alone serves the database, at start:
 * any claim then is one a stopped process left, and its rows are due again at once rather than when
 * the lease would have ended.
 */
export async function releaseClaims(db: Kysely<Database>): Promise<number> {
  const r = await db
    .updateTable('outbox')
    .set({ claimed_by: null, claimed_until: null })
    .where('delivery_status', '=', 'pending')
    .where('claimed_until', 'is not', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}

export async function recordAttempt(db: Kysely<Database>, input: AttemptRecord): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    await trx.insertInto('notification_attempts').values({ event_id: input.event_id, ...input.attempt }).execute();
    const ending = input.delivered
      ? { delivery_status: 'delivered', delivered_at: input.now }
      : { next_attempt_at: input.next_attempt_at };
    const owned = await trx
      .updateTable('outbox')
      .set({ ...ending, attempts: sql`attempts + 1`, claimed_by: null, claimed_until: null })
      .where('event_id', '=', input.event_id)
      .where('delivery_status', '=', 'pending')
      .where('claimed_by', '=', input.claimed_by)
      .where('claimed_until', '=', input.claimed_until)
      .executeTakeFirst();
    if (Number(owned.numUpdatedRows) > 0) return true;
    await trx.updateTable('outbox').set({ attempts: sql`attempts + 1` }).where('event_id', '=', input.event_id).execute();
    return false;
  });
}

export async function findOutbox(db: Kysely<Database>, event_id: string): Promise<OutboxRow | undefined> {
  return db.selectFrom('outbox').selectAll().where('event_id', '=', event_id).executeTakeFirst();
}

export async function listNotifications(db: Kysely<Database>, order_id: string): Promise<OutboxRow[]> {
  return db.selectFrom('outbox').selectAll().where('order_id', '=', order_id).orderBy('seq').execute();
}

export async function listAttempts(db: Kysely<Database>, event_id: string): Promise<NotificationAttempt[]> {
  return db.selectFrom('notification_attempts').selectAll().where('event_id', '=', event_id).orderBy('attempt_id').execute();
}

export async function requeueNow(db: Kysely<Database>, event_id: string, now: number): Promise<OutboxRow | undefined> {
  return db
    .updateTable('outbox')
    .set({ delivery_status: 'pending', next_attempt_at: now, claimed_by: null, claimed_until: null, delivered_at: null })
    .where('event_id', '=', event_id)
    .returningAll()
    .executeTakeFirst();
}
