import { sql, type Kysely, type QueryCreator, type RawBuilder } from 'kysely';
import type {
  AttemptRecord,
  ClaimInput,
  ClaimedRow,
  FailingHost,
  QueuedClaimInput,
  NotificationAttempt,
  OutboxRepo,
  OutboxRow,
  OutboxScope,
  OutboxSearch,
  OutboxSearchPage,
} from '../../ports/outbox.js';
import { ATTEMPT_COLUMNS } from '../columns.js';
import { organisationUsers } from '../organisation-scope.js';
import { row } from '../prepared.js';
import type { Database } from '../schema.js';

/** How an engine writes three parts of the claim (claimStatement). */
export interface ClaimDialect {
  /**
   * The update that claims, with `set`, the first `limit` (by next_attempt_at, event_id) of the rows
   * `picked` (a select of event_id and next_attempt_at: due rows within their hosts' free slots);
   * `due` is the condition a claimable row meets, for an engine whose rows may have changed since
   * they were read (PostgreSQL: another instance's claim).
   */
  claim(
    picked: RawBuilder<unknown>,
    limit: number,
    due: RawBuilder<unknown>,
    set: RawBuilder<unknown>,
  ): RawBuilder<ClaimedRow>;
  /**
   * A FROM clause joining each row of `hosts` (column `h`) to the rows of `pick` (a select of
   * event_id from outbox rows, alias `i`, limited, that refers to `hosts.h`) as outbox rows `o`: a
   * lateral join where the engine has one, else a join on a correlated `in`.
   */
  firstOfEachHost(pick: RawBuilder<unknown>): RawBuilder<unknown>;
  /** After `outbox` (and its alias, if any) where the walk must go through outbox_host_due (SQLite: `indexed by`). */
  byHost: RawBuilder<unknown>;
}

/** An attempt's record (AttemptRecord) as the arguments of the statements that write it. */
export type AttemptArgs = Omit<NotificationAttempt, 'attempt_id'> & {
  claimed_by: string;
  claimed_until: number;
  delivered_at: number;
  next_attempt_at: number;
};

export function attemptArgs(input: AttemptRecord): AttemptArgs {
  return {
    event_id: input.event_id,
    ...input.attempt,
    claimed_by: input.claimed_by,
    claimed_until: input.claimed_until,
    delivered_at: input.now,
    next_attempt_at: input.next_attempt_at,
  };
}

// The three writes of an attempt's record, which each engine runs as one unit of its own
// (SqliteOutbox, PostgresOutbox): its row; the end of the claim it was made under (delivered, or
// due again), which changes nothing when the claim is no longer this attempt's; and, only then,
// the attempt counted alone.

export function insertAttempt(db: QueryCreator<Database>, p: AttemptArgs) {
  return db.insertInto('notification_attempts').values(row(p, ATTEMPT_COLUMNS));
}

export function endClaim(db: QueryCreator<Database>, p: AttemptArgs, delivered: boolean) {
  return db
    .updateTable('outbox')
    .set({
      ...(delivered
        ? { delivery_status: sql.lit('delivered'), delivered_at: p.delivered_at }
        : { next_attempt_at: p.next_attempt_at }),
      attempts: sql`attempts + 1`,
      claimed_by: sql.lit(null),
      claimed_until: sql.lit(null),
    })
    .where('event_id', '=', p.event_id)
    .where('delivery_status', '=', sql.lit('pending'))
    .where('claimed_by', '=', p.claimed_by)
    .where('claimed_until', '=', p.claimed_until);
}

export function countAttempt(db: QueryCreator<Database>, p: AttemptArgs) {
  return db
    .updateTable('outbox')
    .set({ attempts: sql`attempts + 1` })
    .where('event_id', '=', p.event_id);
}

/**
 * What a claim's update returns: each row with the key its attempt signs with (ClaimedRow), read in
 * the same statement, where a read of its own after the claim was one more round trip per attempt
 * on PostgreSQL.
 */
export const CLAIMED = sql`*, (select w.api_key from transactions t join wallets w on w.wallet_id = t.wallet_id where t.order_id = outbox.order_id) as api_key`;

/** Claimed rows in the order their attempts start: the oldest due first. */
export const byDue = (a: OutboxRow, b: OutboxRow) =>
  a.next_attempt_at - b.next_attempt_at || (a.event_id < b.event_id ? -1 : 1);

export const dueAt = (now: number) =>
  sql`delivery_status = 'pending' and next_attempt_at <= ${now} and (claimed_until is null or claimed_until <= ${now})`;

/** The claim as one statement (exported so a test can look at its plan). */
export function claimStatement(dialect: ClaimDialect, input: ClaimInput) {
  const { now } = input;
  const due = dueAt(now);
  const limits = [...(input.host_limits ?? new Map<string, number>())];
  const hostLimit = (host: RawBuilder<unknown>) =>
    limits.length === 0
      ? sql`cast(${input.per_host} as integer)`
      : sql`case ${host} ${sql.join(
          limits.map(([h, n]) => sql`when ${h} then cast(${n} as integer)`),
          sql` `,
        )} else cast(${input.per_host} as integer) end`;
  // The hosts with a pending row, one index probe each (a loose index scan of outbox_host_due),
  // then the first due rows of each through the same index, at most per_host of them; those are
  // ranked within their host against its free slots. The work grows with the hosts and the rows
  // claimed, not with the rows due: a merchant whose endpoint is down with 100,000 notifications
  // behind it costs a claim a few probes, and never fills it (no head-of-line blocking).
  // A host's first due rows, as many as the largest room any host has (a host's limit adapts).
  const most = Math.max(input.per_host, ...limits.map(([, n]) => n));
  const firstDue = sql`select i.event_id from outbox i${dialect.byHost} where i.callback_host = hosts.h and ${due}
    order by i.next_attempt_at, i.event_id limit ${most}`;
  const ranked = sql`with recursive hosts(h) as (
      select (select callback_host from outbox${dialect.byHost} where delivery_status = 'pending' order by callback_host limit 1)
      union all
      select (select callback_host from outbox${dialect.byHost} where delivery_status = 'pending' and callback_host > hosts.h order by callback_host limit 1)
      from hosts where hosts.h is not null
    ), picked as (
      select o.event_id, o.callback_host, o.next_attempt_at from ${dialect.firstOfEachHost(firstDue)}
      where hosts.h is not null and ${hostLimit(sql`hosts.h`)} > 0
    )
    select event_id, next_attempt_at from (
      select event_id, callback_host, next_attempt_at, row_number() over (partition by callback_host order by next_attempt_at, event_id) as rn from picked
    ) ranked where rn <= ${hostLimit(sql`callback_host`)}`;
  return dialect.claim(
    ranked,
    input.limit,
    due,
    sql`claimed_by = ${input.claimed_by}, claimed_until = ${now + input.lease_ms}`,
  );
}

/** The outbox, alike on both engines but for three parts of the claim (the ClaimDialect). */
export abstract class SqlOutbox implements OutboxRepo {
  constructor(
    protected readonly db: Kysely<Database>,
    private readonly dialect: ClaimDialect,
  ) {}

  async claimDue(input: ClaimInput): Promise<ClaimedRow[]> {
    // The idle poll is a read: no write transaction (and, on SQLite, no fsync) when nothing is due.
    const { rows: anyDue } = await sql`select 1 as due from outbox where ${dueAt(input.now)} limit 1`.execute(this.db);
    if (anyDue.length === 0) return [];
    return (await this.runClaim(claimStatement(this.dialect, input))).sort(byDue);
  }

  async claimQueued(input: QueuedClaimInput): Promise<ClaimedRow[]> {
    if (input.event_ids.length === 0) return [];
    const claim = sql<ClaimedRow>`update outbox set claimed_by = ${input.claimed_by}, claimed_until = ${input.now + input.lease_ms}
      where event_id in (${sql.join(input.event_ids)}) and ${dueAt(input.now)} returning ${CLAIMED}`;
    return (await this.runClaim(claim)).sort(byDue);
  }

  /** Runs a claim's update; the rows it claimed. */
  protected async runClaim(claim: RawBuilder<ClaimedRow>): Promise<ClaimedRow[]> {
    return (await claim.execute(this.db)).rows;
  }

  /**
   * Frees every claim on a pending row. Only for a process that alone serves the database, at start:
   * any claim then is one a stopped process left, and its rows are due again at once rather than when
   * the lease would have ended.
   */
  async releaseClaims(): Promise<number> {
    const r = await this.db
      .updateTable('outbox')
      .set({ claimed_by: null, claimed_until: null })
      .where('delivery_status', '=', 'pending')
      .where('claimed_until', 'is not', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows);
  }

  /** The notifications of one organisation's orders, as a condition on outbox.order_id. */
  private ofOrganisation(organisation_id: number) {
    return this.db
      .selectFrom('transactions')
      .select('order_id')
      .where('user_id', 'in', organisationUsers(this.db, organisation_id));
  }

  async search(f: OutboxSearch): Promise<OutboxSearchPage> {
    // The order's user_id alongside: the operator's page names each row's organisation from it.
    let q = this.db
      .selectFrom('outbox')
      .leftJoin('transactions', 'transactions.order_id', 'outbox.order_id')
      .selectAll('outbox')
      .select('transactions.user_id');
    if (f.organisation_id !== undefined) q = q.where('outbox.order_id', 'in', this.ofOrganisation(f.organisation_id));
    if (f.state === 'delivered') q = q.where('outbox.delivery_status', '=', 'delivered');
    if (f.state === 'failing') q = q.where('outbox.delivery_status', '=', 'pending').where('outbox.attempts', '>', 0);
    if (f.state === 'waiting') q = q.where('outbox.delivery_status', '=', 'pending').where('outbox.attempts', '=', 0);
    if (f.callback_host !== undefined) q = q.where('outbox.callback_host', '=', f.callback_host);
    if (f.from !== undefined) q = q.where('outbox.created_at', '>=', f.from);
    if (f.to !== undefined) q = q.where('outbox.created_at', '<', f.to);
    const after = f.after;
    if (after)
      q = q.where((eb) =>
        eb.or([
          eb('outbox.created_at', '<', after.created_at),
          eb.and([eb('outbox.created_at', '=', after.created_at), eb('outbox.event_id', '<', after.event_id)]),
        ]),
      );
    const rows = await q
      .orderBy('outbox.created_at', 'desc')
      .orderBy('outbox.event_id', 'desc')
      .limit(f.limit + 1)
      .execute();
    const more = rows.length > f.limit;
    if (more) rows.length = f.limit;
    const last = rows[rows.length - 1];
    return { rows, ...(more && last && { next: { created_at: last.created_at, event_id: last.event_id } }) };
  }

  async retryHostNow(f: { callback_host: string; organisation_id?: number }, now: number): Promise<number> {
    let q = this.db
      .updateTable('outbox')
      .set({ next_attempt_at: now })
      .where('callback_host', '=', f.callback_host)
      .where('delivery_status', '=', 'pending')
      .where('attempts', '>', 0)
      .where('next_attempt_at', '>', now)
      .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<=', now)]));
    if (f.organisation_id !== undefined) q = q.where('order_id', 'in', this.ofOrganisation(f.organisation_id));
    const r = await q.executeTakeFirst();
    return Number(r.numUpdatedRows);
  }

  async countFailing(organisation_id?: number): Promise<number> {
    let q = this.db
      .selectFrom('outbox')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('delivery_status', '=', 'pending')
      .where('attempts', '>', 0);
    if (organisation_id !== undefined) {
      q = q.where(
        'order_id',
        'in',
        this.db
          .selectFrom('transactions')
          .select('order_id')
          .where('user_id', 'in', organisationUsers(this.db, organisation_id)),
      );
    }
    return Number((await q.executeTakeFirstOrThrow()).n);
  }

  async countFailingHosts(): Promise<number> {
    const row = await this.db
      .selectFrom('outbox')
      .select((eb) => eb.fn.count<number | string>('callback_host').distinct().as('n'))
      .where('delivery_status', '=', 'pending')
      .where('attempts', '>', 0)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async failingHosts(scope: OutboxScope, limit: number): Promise<FailingHost[]> {
    const failing = () => {
      let q = this.db
        .selectFrom('outbox')
        .where('outbox.delivery_status', '=', 'pending')
        .where('outbox.attempts', '>', 0);
      if ('wallet_id' in scope)
        q = q.where(
          'outbox.order_id',
          'in',
          this.db.selectFrom('transactions').select('order_id').where('wallet_id', '=', scope.wallet_id),
        );
      if ('organisation_id' in scope)
        q = q.where(
          'outbox.order_id',
          'in',
          this.db
            .selectFrom('transactions')
            .select('order_id')
            .where('user_id', 'in', organisationUsers(this.db, scope.organisation_id)),
        );
      return q;
    };
    const hosts = await failing()
      .select((eb) => [
        'callback_host',
        eb.fn.countAll<number | string>().as('failing'),
        eb.fn.min('created_at').as('oldest_created_at'),
      ])
      .groupBy('callback_host')
      .orderBy('failing', 'desc')
      .orderBy('callback_host')
      .limit(limit)
      .execute();
    return Promise.all(
      hosts.map(async (h) => {
        const latest = await failing()
          .select('event_id')
          .where('callback_host', '=', h.callback_host)
          .orderBy('next_attempt_at', 'desc')
          .limit(1)
          .executeTakeFirstOrThrow();
        return {
          callback_host: h.callback_host,
          failing: Number(h.failing),
          oldest_created_at: Number(h.oldest_created_at),
          latest_event_id: latest.event_id,
        };
      }),
    );
  }

  async backlog(): Promise<{ pending: number; oldest_created_at: number | null }> {
    const r = await this.db
      .selectFrom('outbox')
      .select((eb) => [eb.fn.countAll<number | string>().as('pending'), eb.fn.min('created_at').as('oldest')])
      .where('delivery_status', '=', 'pending')
      .executeTakeFirstOrThrow();
    return { pending: Number(r.pending), oldest_created_at: r.oldest === null ? null : Number(r.oldest) };
  }

  /** Each engine records an attempt in one unit of its own (sqlite.ts, postgres.ts). */
  abstract recordAttempt(input: AttemptRecord): Promise<boolean>;

  find(event_id: string): Promise<OutboxRow | undefined> {
    return this.db.selectFrom('outbox').selectAll().where('event_id', '=', event_id).executeTakeFirst();
  }

  listByOrder(order_id: string): Promise<OutboxRow[]> {
    return this.db.selectFrom('outbox').selectAll().where('order_id', '=', order_id).orderBy('seq').execute();
  }

  listAttempts(event_id: string): Promise<NotificationAttempt[]> {
    return this.db
      .selectFrom('notification_attempts')
      .selectAll()
      .where('event_id', '=', event_id)
      .orderBy('attempt_id')
      .execute();
  }

  requeueNow(event_id: string, now: number): Promise<OutboxRow | undefined> {
    return this.db
      .updateTable('outbox')
      .set({
        delivery_status: 'pending',
        next_attempt_at: now,
        claimed_by: null,
        claimed_until: null,
        delivered_at: null,
      })
      .where('event_id', '=', event_id)
      .returningAll()
      .executeTakeFirst();
  }
}
