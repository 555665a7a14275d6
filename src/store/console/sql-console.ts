import { sql, type Kysely } from 'kysely';
import type { ConsoleKind, ConsoleUser, ConsoleUserStatus } from '../../domain/console.js';
import type {
  AuditEntry,
  ConsoleRepo,
  ConsoleSession,
  ConsoleToken,
  NewAuditEntry,
  ThrottleRow,
} from '../../ports/console.js';
import type { Database } from '../schema.js';

/** The console's tables, alike on both engines (nothing here is on a hot path of the API). */
/** The console_settings row that says whether two-factor is required of operators or of an organisation's users. */
function twoFactorSetting(scope: 'operators' | number): string {
  return scope === 'operators' ? 'two_factor.operators' : `two_factor.organisation.${scope}`;
}

export class SqlConsole implements ConsoleRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async addUser(user: ConsoleUser): Promise<boolean> {
    const r = await this.db
      .insertInto('console_users')
      .values(user)
      .onConflict((oc) => oc.column('email').doNothing())
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0n) === 1;
  }

  findUser(console_user_id: string): Promise<ConsoleUser | undefined> {
    return this.db
      .selectFrom('console_users')
      .selectAll()
      .where('console_user_id', '=', console_user_id)
      .executeTakeFirst();
  }

  findUserByEmail(email: string): Promise<ConsoleUser | undefined> {
    return this.db.selectFrom('console_users').selectAll().where('email', '=', email).executeTakeFirst();
  }

  listUsers(filter: { kind?: ConsoleKind; organisation_id?: number }): Promise<ConsoleUser[]> {
    let q = this.db.selectFrom('console_users').selectAll();
    if (filter.kind) q = q.where('kind', '=', filter.kind);
    if (filter.organisation_id !== undefined) q = q.where('organisation_id', '=', filter.organisation_id);
    return q.orderBy('email').execute();
  }

  async countUsers(kind: ConsoleKind): Promise<number> {
    const r = await this.db
      .selectFrom('console_users')
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .where('kind', '=', kind)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  async setPassword(console_user_id: string, password_hash: string, now: number): Promise<void> {
    await this.db
      .updateTable('console_users')
      .set({ password_hash, updated_at: now })
      .where('console_user_id', '=', console_user_id)
      .execute();
  }

  async setUserStatus(console_user_id: string, status: ConsoleUserStatus, now: number): Promise<boolean> {
    const r = await this.db
      .updateTable('console_users')
      .set({ status, updated_at: now })
      .where('console_user_id', '=', console_user_id)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async setTotp(
    console_user_id: string,
    totp_sealed: string | null,
    now: number,
    totp_last_step?: number,
  ): Promise<void> {
    await this.db
      .updateTable('console_users')
      .set({ totp_sealed, totp_last_step: totp_last_step ?? null, updated_at: now })
      .where('console_user_id', '=', console_user_id)
      .execute();
  }

  async useTotpStep(console_user_id: string, step: number): Promise<boolean> {
    // One statement: two sign-ins with the same code at the same moment cannot both succeed.
    const r = await this.db
      .updateTable('console_users')
      .set({ totp_last_step: step })
      .where('console_user_id', '=', console_user_id)
      .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', step)]))
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async setRecoveryCodes(console_user_id: string, code_hashes: readonly string[], now: number): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('console_recovery_codes').where('console_user_id', '=', console_user_id).execute();
      if (code_hashes.length > 0)
        await trx
          .insertInto('console_recovery_codes')
          .values(code_hashes.map((code_hash) => ({ console_user_id, code_hash, created_at: now, used_at: null })))
          .execute();
    });
  }

  async useRecoveryCode(console_user_id: string, code_hash: string, now: number): Promise<boolean> {
    // One statement: the same code typed twice at once signs in once.
    const r = await this.db
      .updateTable('console_recovery_codes')
      .set({ used_at: now })
      .where('console_user_id', '=', console_user_id)
      .where('code_hash', '=', code_hash)
      .where('used_at', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async countRecoveryCodes(console_user_id: string): Promise<number> {
    const r = await this.db
      .selectFrom('console_recovery_codes')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('console_user_id', '=', console_user_id)
      .where('used_at', 'is', null)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  async twoFactorRequired(scope: 'operators' | number): Promise<boolean> {
    const r = await this.db
      .selectFrom('console_settings')
      .select('value')
      .where('name', '=', twoFactorSetting(scope))
      .executeTakeFirst();
    return r?.value === 'required';
  }

  async setTwoFactorRequired(scope: 'operators' | number, required: boolean): Promise<void> {
    const name = twoFactorSetting(scope);
    const value = required ? 'required' : 'optional';
    await this.db
      .insertInto('console_settings')
      .values({ name, value })
      .onConflict((oc) => oc.column('name').doUpdateSet({ value }))
      .execute();
  }

  async addToken(token: ConsoleToken): Promise<void> {
    await this.db.insertInto('console_tokens').values(token).execute();
  }

  useToken(token_hash: string, purpose: ConsoleToken['purpose'], now: number): Promise<ConsoleUser | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const used = await trx
        .updateTable('console_tokens')
        .set({ used_at: now })
        .where('token_hash', '=', token_hash)
        .where('purpose', '=', purpose)
        .where('used_at', 'is', null)
        .where('expires_at', '>', now)
        .returning('console_user_id')
        .executeTakeFirst();
      if (!used) return undefined;
      return trx
        .selectFrom('console_users')
        .selectAll()
        .where('console_user_id', '=', used.console_user_id)
        .executeTakeFirst();
    });
  }

  async newestTokenAt(console_user_id: string, purpose: ConsoleToken['purpose']): Promise<number> {
    const row = await this.db
      .selectFrom('console_tokens')
      .select((eb) => eb.fn.max('created_at').as('at'))
      .where('console_user_id', '=', console_user_id)
      .where('purpose', '=', purpose)
      .executeTakeFirst();
    return Number(row?.at ?? 0);
  }

  async voidTokens(console_user_id: string, purpose: ConsoleToken['purpose'], now: number): Promise<void> {
    await this.db
      .updateTable('console_tokens')
      .set({ used_at: now })
      .where('console_user_id', '=', console_user_id)
      .where('purpose', '=', purpose)
      .where('used_at', 'is', null)
      .execute();
  }

  findToken(token_hash: string, purpose: ConsoleToken['purpose'], now: number): Promise<ConsoleToken | undefined> {
    return this.db
      .selectFrom('console_tokens')
      .selectAll()
      .where('token_hash', '=', token_hash)
      .where('purpose', '=', purpose)
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst();
  }

  async saveSession(session: ConsoleSession): Promise<void> {
    await this.db
      .insertInto('console_sessions')
      .values(session)
      .onConflict((oc) =>
        oc.column('session_hash').doUpdateSet({
          data: session.data,
          last_seen_at: session.last_seen_at,
          console_user_id: session.console_user_id,
        }),
      )
      .execute();
  }

  findSession(session_hash: string): Promise<ConsoleSession | undefined> {
    return this.db
      .selectFrom('console_sessions')
      .selectAll()
      .where('session_hash', '=', session_hash)
      .executeTakeFirst();
  }

  async touchSession(session_hash: string, now: number): Promise<void> {
    await this.db
      .updateTable('console_sessions')
      .set({ last_seen_at: now })
      .where('session_hash', '=', session_hash)
      .execute();
  }

  async deleteSession(session_hash: string): Promise<void> {
    await this.db.deleteFrom('console_sessions').where('session_hash', '=', session_hash).execute();
  }

  listUserSessions(console_user_id: string): Promise<ConsoleSession[]> {
    return this.db
      .selectFrom('console_sessions')
      .selectAll()
      .where('console_user_id', '=', console_user_id)
      .orderBy('last_seen_at', 'desc')
      .execute();
  }

  async deleteUserSession(console_user_id: string, session_hash: string): Promise<boolean> {
    const r = await this.db
      .deleteFrom('console_sessions')
      .where('console_user_id', '=', console_user_id)
      .where('session_hash', '=', session_hash)
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  async deleteUserSessions(console_user_id: string): Promise<number> {
    const r = await this.db
      .deleteFrom('console_sessions')
      .where('console_user_id', '=', console_user_id)
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  async deleteExpiredSessions(idleBefore: number, createdBefore: number): Promise<number> {
    const r = await this.db
      .deleteFrom('console_sessions')
      .where((eb) => eb.or([eb('last_seen_at', '<', idleBefore), eb('created_at', '<', createdBefore)]))
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  throttle(keys: readonly string[]): Promise<ThrottleRow[]> {
    if (keys.length === 0) return Promise.resolve([]);
    return this.db.selectFrom('console_throttle').selectAll().where('throttle_key', 'in', keys).execute();
  }

  recordFailure(
    key: string,
    now: number,
    policy: { windowMs: number; limit: number; lockMs: number },
  ): Promise<ThrottleRow> {
    // One statement: concurrent failures (a parallel guessing attack) each count, on both engines.
    const stale = sql<boolean>`console_throttle.window_start <= ${now - policy.windowMs}`;
    const failures = sql<number>`case when ${stale} then 1 else console_throttle.failures + 1 end`;
    return this.db
      .insertInto('console_throttle')
      .values({
        throttle_key: key,
        failures: 1,
        window_start: now,
        locked_until: policy.limit <= 1 ? now + policy.lockMs : 0,
      })
      .onConflict((oc) =>
        oc.column('throttle_key').doUpdateSet({
          failures,
          window_start: sql<number>`case when ${stale} then ${now} else console_throttle.window_start end`,
          locked_until: sql<number>`case when ${failures} >= ${policy.limit} then ${now + policy.lockMs} else console_throttle.locked_until end`,
        }),
      )
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  async clearThrottle(key: string): Promise<void> {
    await this.db.deleteFrom('console_throttle').where('throttle_key', '=', key).execute();
  }

  async pruneThrottle(windowBefore: number, now: number): Promise<number> {
    const r = await this.db
      .deleteFrom('console_throttle')
      .where('window_start', '<', windowBefore)
      .where('locked_until', '<=', now)
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  async setting(name: string, make: () => string): Promise<string> {
    const found = await this.db
      .selectFrom('console_settings')
      .select('value')
      .where('name', '=', name)
      .executeTakeFirst();
    if (found) return found.value;
    // Another instance may store its own first: the stored one wins, for both.
    await this.db
      .insertInto('console_settings')
      .values({ name, value: make() })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();
    return (
      await this.db.selectFrom('console_settings').select('value').where('name', '=', name).executeTakeFirstOrThrow()
    ).value;
  }

  async audit(entry: NewAuditEntry): Promise<void> {
    await this.db.insertInto('audit_log').values(entry).execute();
  }

  listAudit(filter: {
    organisation_id?: number;
    actions?: readonly string[];
    object?: string;
    objects?: readonly string[];
    actor?: string;
    from?: number;
    to?: number;
    before?: number;
    limit: number;
  }): Promise<AuditEntry[]> {
    let q = this.db.selectFrom('audit_log').selectAll();
    if (filter.organisation_id !== undefined) q = q.where('organisation_id', '=', filter.organisation_id);
    if (filter.actions !== undefined) q = q.where('action', 'in', filter.actions.length > 0 ? filter.actions : ['']);
    if (filter.object !== undefined) q = q.where('object', '=', filter.object);
    if (filter.objects !== undefined) q = q.where('object', 'in', filter.objects.length > 0 ? filter.objects : ['']);
    // The actor column holds `cu_... <email>`, `cli:<os user>` or `anonymous`: a user's entries start with their id and a space.
    if (filter.actor !== undefined) {
      const prefix = filter.actor.startsWith('cu_') ? `${filter.actor} ` : filter.actor;
      q = q.where(sql<string>`substr(actor, 1, ${prefix.length})`, '=', prefix);
    }
    if (filter.from !== undefined) q = q.where('at', '>=', filter.from);
    if (filter.to !== undefined) q = q.where('at', '<', filter.to);
    if (filter.before !== undefined) q = q.where('audit_id', '<', filter.before);
    return q.orderBy('audit_id', 'desc').limit(filter.limit).execute();
  }
}
