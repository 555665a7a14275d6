import { sql, type Kysely, type RawBuilder } from 'kysely';
import { NONCES_SWEPT_BEFORE, type RetentionRepo } from '../../ports/retention.js';
import type { Database } from '../schema.js';

// How retention picks its rows, exported so that a test can look at the plans. The attempt picks
// read an index that holds only notifications still to deal with (migration 0010_retention), so a
// pass costs what it removes, not the size of an outbox that grows with every order; the index's
// condition is written out in the pick, as SQLite uses a partial index only for a query that states
// its condition. The nonces have no such index (it would cost every create an entry): they are
// swept by primary key, which sorts them by creation time, over the range a pass can find due
// (usecases/retention.ts, docs/design/retention.md).

/** Attempts of notifications delivered before `before`; the notifications are still holding attempts (attempts > attempts_pruned). */
export function deliveredAttempts(before: number, limit: number, lock: RawBuilder<unknown>) {
  return sql<{
    attempt_id: number;
  }>`select a.attempt_id from outbox o join notification_attempts a on a.event_id = o.event_id
    where o.delivery_status = 'delivered' and o.delivered_at < ${before} and o.attempts > o.attempts_pruned
    limit ${limit}${lock}`;
}

/** Of notifications not delivered, the attempts after their first `keep.first` and before their last `keep.last`. */
export function undeliveredAttempts(keep: { first: number; last: number }, limit: number, lock: RawBuilder<unknown>) {
  // attempts - attempts_pruned is how many attempts a notification holds: only those holding more
  // than they keep are ranked.
  const between = sql`select attempt_id from (
      select attempt_id,
        row_number() over (partition by event_id order by attempt_id) as from_first,
        row_number() over (partition by event_id order by attempt_id desc) as from_last
      from notification_attempts
      where event_id in (select event_id from outbox where delivery_status = 'pending' and attempts - attempts_pruned > ${keep.first + keep.last})
    ) ranked where from_first > ${keep.first} and from_last > ${keep.last}`;
  return sql<{
    attempt_id: number;
  }>`select a.attempt_id from outbox o join notification_attempts a on a.event_id = o.event_id
    where o.delivery_status = 'pending' and a.attempt_id in (${between})
    limit ${limit}${lock}`;
}

/** The next `limit` nonces of a sweep, by primary key: after `after`, and below `before` if set. */
export function sweepKeys(after: string, before: string | null, limit: number) {
  const upTo = before === null ? sql`` : sql` and nonce < ${before}`;
  return sql<{ nonce: string }>`select nonce from nonces where nonce > ${after}${upTo} order by nonce limit ${limit}`;
}

/** Of the nonces in (`after`, `last`], those never used that expired before `before`. */
export function unusedNonces(after: string, last: string, before: number, lock: RawBuilder<unknown>) {
  return sql<{
    nonce: string;
  }>`select nonce from nonces where nonce > ${after} and nonce <= ${last} and used_at is null and expires_at < ${before}${lock}`;
}

/** Of the nonces in (`after`, `last`], those with a visit's hash that expired before `before`. */
export function visitNonces(after: string, last: string, before: number, lock: RawBuilder<unknown>) {
  return sql<{
    nonce: string;
  }>`select nonce from nonces where nonce > ${after} and nonce <= ${last} and page_token_hash is not null and expires_at < ${before}${lock}`;
}

/**
 * Retention's removals, alike on both engines but for `lock`, appended to every pick of rows to
 * remove or change: PostgreSQL locks the rows it picks (attempts with their notifications; the
 * nonces due in a sweep's batch, not the kept ones it reads past) and skips those another instance
 * holds, so instances running retention at once never wait for each other, nor deadlock; SQLite,
 * which one process owns, has one writer and needs nothing.
 */
export class SqlRetention implements RetentionRepo {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly lock: RawBuilder<unknown>,
  ) {}

  pruneDeliveredAttempts(before: number, limit: number): Promise<number> {
    return this.removeAttempts(deliveredAttempts(before, limit, this.lock));
  }

  pruneUndeliveredAttempts(keep: { first: number; last: number }, limit: number): Promise<number> {
    return this.removeAttempts(undeliveredAttempts(keep, limit, this.lock));
  }

  /** Removes the attempts `pick` returns, counting them on their notifications, in one unit. */
  private removeAttempts(pick: RawBuilder<{ attempt_id: number }>): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      const { rows } = await pick.execute(trx);
      if (rows.length === 0) return 0;
      const ids = sql.join(rows.map((r) => r.attempt_id));
      // Counted from the rows this unit holds, before they go.
      await sql`update outbox set
          attempts_pruned = attempts_pruned + removed.n,
          attempts_pruned_until = case when attempts_pruned_until >= removed.latest then attempts_pruned_until else removed.latest end
        from (select event_id, count(*) as n, max(attempted_at) as latest from notification_attempts where attempt_id in (${ids}) group by event_id) removed
        where outbox.event_id = removed.event_id`.execute(trx);
      const deleted = await trx
        .deleteFrom('notification_attempts')
        .where(sql<boolean>`attempt_id in (${ids})`)
        .executeTakeFirst();
      return Number(deleted.numDeletedRows);
    });
  }

  async sweepNonces(
    range: { after: string; before: string | null },
    cutoff: { nonces: number; visits: number },
    limit: number,
  ) {
    const { rows } = await sweepKeys(range.after, range.before, limit).execute(this.db);
    const last = rows.at(-1)?.nonce ?? null;
    if (last === null) return { scanned: 0, last, nonces: 0, visits: 0 };
    return this.db.transaction().execute(async (trx) => {
      const deleted = await trx
        .deleteFrom('nonces')
        .where(sql<boolean>`nonce in (${unusedNonces(range.after, last, cutoff.nonces, this.lock)})`)
        .executeTakeFirst();
      const cleared = await trx
        .updateTable('nonces')
        .set({ page_token_hash: null })
        .where(sql<boolean>`nonce in (${visitNonces(range.after, last, cutoff.visits, this.lock)})`)
        .executeTakeFirst();
      return {
        scanned: rows.length,
        last,
        nonces: Number(deleted.numDeletedRows),
        visits: Number(cleared.numUpdatedRows),
      };
    });
  }

  async noncesSweptBefore(): Promise<number | null> {
    const found = await this.db
      .selectFrom('console_settings')
      .select('value')
      .where('name', '=', NONCES_SWEPT_BEFORE)
      .executeTakeFirst();
    return found ? Number(found.value) : null;
  }

  async setNoncesSweptBefore(before: number): Promise<void> {
    // Two instances finishing at once: the later `before` stays, whichever writes last.
    await sql`insert into console_settings (name, value) values (${NONCES_SWEPT_BEFORE}, ${String(before)})
      on conflict (name) do update set value = excluded.value
      where cast(console_settings.value as bigint) < cast(excluded.value as bigint)`.execute(this.db);
  }
}
