import { Kysely, Migrator, sql, type QueryCreator } from 'kysely';
import type { Database } from './schema.js';
import { migrationProvider, type Engine } from './migrations.js';
import type {
  AttemptRecord,
  ClaimInput,
  NewMerchant,
  NotificationAttempt,
  OutboxRow,
  NewTransaction,
  Nonce,
  NonceUse,
  Refund,
  RefundReservation,
  SettleInput,
  Store,
  Transaction,
  UserRecord,
  Wallet,
} from './store.js';
import type { Insertable } from 'kysely';
import type { WalletsTable } from './schema.js';
import * as outbox from './outbox-queries.js';

/** PostgreSQL NOTIFY channel that carries the order_id of every status change (see PgStatusSignals). */
export const STATUS_NOTIFY_CHANNEL = 'gateway_status';

/** PostgreSQL NOTIFY channel that tells every instance to forget cached users, wallets and rates. */
export const ADMIN_NOTIFY_CHANNEL = 'gateway_admin';

/** Order sequence numbers are reserved from the database in blocks, one write per block. */
const SEQUENCE_BLOCK = 100;

export class KyselyStore implements Store {
  private seqNext = 0;
  private seqEnd = 0;
  private seqPending: Promise<void> | null = null;

  constructor(
    readonly db: Kysely<Database>,
    readonly engine: Engine,
    private readonly onClose: () => Promise<void> = async () => {},
  ) {}

  private adminChanges = 0;
  /** SQLite: a number that changes when another process (the CLI) commits to the file. */
  externalVersion: () => number = () => 0;

  /** Changes whenever users, wallets or rates may have changed, here or elsewhere. */
  get credentialsVersion(): string {
    return `${this.adminChanges}:${this.externalVersion()}`;
  }

  /** Another instance changed users, wallets or rates (PostgreSQL tells us by NOTIFY). */
  noteAdminChange(): void {
    this.adminChanges++;
  }

  private async adminChanged(): Promise<void> {
    this.adminChanges++;
    if (this.engine === 'postgres') await sql`select pg_notify(${ADMIN_NOTIFY_CHANNEL}, '')`.execute(this.db);
  }

  async migrate(): Promise<void> {
    const migrator = new Migrator({ db: this.db, provider: migrationProvider(this.engine) });
    const { error, results } = await migrator.migrateToLatest();
    if (error) {
      const failed = results?.find((r) => r.status === 'Error');
      throw new Error(`database migration ${failed?.migrationName ?? ''} failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  async findUser(user_id: string): Promise<UserRecord | undefined> {
    return this.db
      .selectFrom('users')
      .innerJoin('organisations', 'organisations.organisation_id', 'users.organisation_id')
      .select(['users.user_id', 'users.user_name', 'users.user_status', 'users.organisation_id', 'organisations.organisation_name'])
      .where('users.user_id', '=', user_id)
      .executeTakeFirst();
  }

  async findWallet(wallet_id: string): Promise<Wallet | undefined> {
    return this.db.selectFrom('wallets').selectAll().where('wallet_id', '=', wallet_id).executeTakeFirst();
  }

  async listWallets(user_id: string): Promise<Wallet[]> {
    return this.db.selectFrom('wallets').selectAll().where('user_id', '=', user_id).orderBy('created_at').execute();
  }

  async findRate(currency_from: string, currency_to: string): Promise<number | undefined> {
    const row = await this.db
      .selectFrom('rates')
      .select('rate_micros')
      .where('currency_from', '=', currency_from)
      .where('currency_to', '=', currency_to)
      .executeTakeFirst();
    return row?.rate_micros;
  }

  async nextOrderSequence(): Promise<number> {
    while (this.seqNext >= this.seqEnd) {
      this.seqPending ??= this.reserveSequenceBlock().finally(() => {
        this.seqPending = null;
      });
      await this.seqPending;
    }
    return this.seqNext++;
  }

  private async reserveSequenceBlock(): Promise<void> {
    const row = await this.db
      .updateTable('sequences')
      .set({ next_value: sql`next_value + ${SEQUENCE_BLOCK}` })
      .where('name', '=', 'order_id')
      .returning('next_value')
      .executeTakeFirstOrThrow();
    this.seqEnd = Number(row.next_value);
    this.seqNext = this.seqEnd - SEQUENCE_BLOCK;
  }

  async insertTransaction(tx: NewTransaction, nonce: Nonce): Promise<{ created: true } | { created: false; existing: Transaction }> {
    if (this.engine === 'postgres') return this.insertTransactionPg(tx, nonce);
    // SQLite has no data-modifying CTEs; its transaction is a SAVEPOINT in the group-commit batch
    // and costs no round trip.
    return this.db.transaction().execute(async (trx) => {
      const inserted = await trx
        .insertInto('transactions')
        .values(tx)
        .onConflict((oc) => oc.columns(['user_id', 'merchant_reference']).doNothing())
        .returning('order_id')
        .executeTakeFirst();
      if (!inserted) {
        const existing = await trx
          .selectFrom('transactions')
          .selectAll()
          .where('user_id', '=', tx.user_id)
          .where('merchant_reference', '=', tx.merchant_reference)
          .executeTakeFirstOrThrow();
        return { created: false as const, existing };
      }
      await trx.insertInto('nonces').values(nonce).execute();
      return { created: true as const };
    });
  }

  /**
   * PostgreSQL: the order and its nonce in one statement (one round trip, atomic on its own)
   * instead of BEGIN, two INSERTs and COMMIT. The nonce is inserted from the RETURNING rows of the
   * order's insert, so it exists exactly when the order was inserted. On a conflict the existing
   * order is read by a second statement: its snapshot is taken after the conflicting insert
   * committed, which the first statement's snapshot may predate.
   */
  private async insertTransactionPg(tx: NewTransaction, nonce: Nonce): Promise<{ created: true } | { created: false; existing: Transaction }> {
    const inserted = await this.db
      .with('inserted', (db) =>
        db
          .insertInto('transactions')
          .values(tx)
          .onConflict((oc) => oc.columns(['user_id', 'merchant_reference']).doNothing())
          .returning('order_id'),
      )
      .insertInto('nonces')
      .columns(['nonce', 'order_id', 'expires_at', 'used_at', 'created_at', 'page_token_hash'])
      .expression((eb) =>
        eb
          .selectFrom('inserted')
          .select([
            eb.cast<string>(eb.val(nonce.nonce), 'text').as('nonce'),
            'inserted.order_id',
            eb.cast<number>(eb.val(nonce.expires_at), 'bigint').as('expires_at'),
            eb.cast<number | null>(eb.val(nonce.used_at ?? null), 'bigint').as('used_at'),
            eb.cast<number>(eb.val(nonce.created_at), 'bigint').as('created_at'),
            eb.cast<string | null>(eb.val(nonce.page_token_hash ?? null), 'text').as('page_token_hash'),
          ]),
      )
      .returning('order_id')
      .executeTakeFirst();
    if (inserted) return { created: true };
    const existing = await this.findTransactionByReference(tx.user_id, tx.merchant_reference);
    if (!existing) throw new Error(`order ${tx.merchant_reference} conflicted with an order that cannot be read`);
    return { created: false, existing };
  }

  async renewPending(
    order_id: string,
    changes: Parameters<Store['renewPending']>[1],
    nonce: Nonce,
  ): Promise<Transaction | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const updated = await trx
        .updateTable('transactions')
        .set(changes)
        .where('order_id', '=', order_id)
        .where('status', '=', 'pending')
        .returningAll()
        .executeTakeFirst();
      if (!updated) return undefined;
      await trx
        .updateTable('nonces')
        .set({ used_at: nonce.created_at })
        .where('order_id', '=', order_id)
        .where('used_at', 'is', null)
        .execute();
      await trx.insertInto('nonces').values(nonce).execute();
      return updated;
    });
  }

  async findTransaction(order_id: string): Promise<Transaction | undefined> {
    return this.db.selectFrom('transactions').selectAll().where('order_id', '=', order_id).executeTakeFirst();
  }

  async findTransactionByReference(user_id: string, merchant_reference: string): Promise<Transaction | undefined> {
    return this.db
      .selectFrom('transactions')
      .selectAll()
      .where('user_id', '=', user_id)
      .where('merchant_reference', '=', merchant_reference)
      .executeTakeFirst();
  }

  async useNonce(nonce: string, now: number, host_type: number, page_token_hash?: string): Promise<NonceUse> {
    if (this.engine === 'postgres') return this.useNoncePg(nonce, now, host_type, page_token_hash);
    return this.db.transaction().execute(async (trx) => {
      const claimed = await claimNonce(trx, nonce, now, host_type, page_token_hash).executeTakeFirst();
      if (!claimed) return nonceRefusal(trx, nonce, host_type);
      const transaction = await trx.selectFrom('transactions').selectAll().where('order_id', '=', claimed.order_id).executeTakeFirstOrThrow();
      return { ok: true as const, transaction };
    });
  }

  /**
   * PostgreSQL: claims the nonce and reads its order in one statement (one round trip instead of
   * BEGIN, UPDATE, SELECT, COMMIT). Only one claim can succeed: a concurrent claim of the same
   * nonce waits for the row lock and then finds used_at set. Why a claim failed is read by a second
   * statement, as before.
   */
  private async useNoncePg(nonce: string, now: number, host_type: number, page_token_hash?: string): Promise<NonceUse> {
    const transaction = await this.db
      .with('claimed', (db) => claimNonce(db, nonce, now, host_type, page_token_hash))
      .selectFrom('transactions')
      .innerJoin('claimed', 'claimed.order_id', 'transactions.order_id')
      .selectAll('transactions')
      .executeTakeFirst();
    if (transaction) return { ok: true, transaction };
    return nonceRefusal(this.db, nonce, host_type);
  }

  async findCheckoutVisit(nonce: string, page_token_hash: string): Promise<{ transaction: Transaction; used_at: number } | undefined> {
    const row = await this.db
      .selectFrom('nonces')
      .select(['order_id', 'used_at'])
      .where('nonce', '=', nonce)
      .where('page_token_hash', '=', page_token_hash)
      .executeTakeFirst();
    if (!row || row.used_at === null) return undefined;
    const transaction = await this.findTransaction(row.order_id);
    return transaction && { transaction, used_at: Number(row.used_at) };
  }

  async settle(input: SettleInput): Promise<Transaction | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const settled = await trx
        .updateTable('transactions')
        .set({
          status: input.to,
          status_message: input.status_message ?? null,
          msgId: input.msgId ?? null,
          status_seq: sql`status_seq + 1`,
          pay_time: input.now,
          updated_at: input.now,
        })
        .where('order_id', '=', input.order_id)
        .where('status', '=', 'pending')
        .returningAll()
        .executeTakeFirst();
      if (!settled) return undefined;
      const queued = trx.insertInto('outbox').values(input.outbox(settled));
      // PostgreSQL: the NOTIFY rides on the outbox insert (one round trip less). It is delivered to
      // every listening instance when (and only if) this transaction commits.
      if (this.engine === 'postgres') await queued.returning(sql`pg_notify(${STATUS_NOTIFY_CHANNEL}, ${settled.order_id})`.as('notified')).execute();
      else await queued.execute();
      return settled;
    });
  }

  async setChannelState(order_id: string, channel_state: string | null, now: number): Promise<void> {
    await this.db.updateTable('transactions').set({ channel_state, updated_at: now }).where('order_id', '=', order_id).execute();
  }

  async setCancelLock(order_id: string, until: number, now: number): Promise<void> {
    await this.db.updateTable('transactions').set({ cancel_locked_until: until, updated_at: now }).where('order_id', '=', order_id).execute();
  }

  async reserveRefund(refund: Omit<Refund, 'refund_status' | 'updated_at'>): Promise<RefundReservation> {
    return this.db.transaction().execute(async (trx) => {
      if (refund.dedupe_key !== null) {
        const dup = await trx.selectFrom('refunds').select('refund_id').where('dedupe_key', '=', refund.dedupe_key).executeTakeFirst();
        if (dup) return { ok: false as const, reason: 'duplicate' as const };
      }
      const updated = await trx
        .updateTable('transactions')
        .set({ refunded_amount: sql`refunded_amount + ${refund.refund_amount}`, updated_at: refund.created_at })
        .where('order_id', '=', refund.order_id)
        .where('status', '=', 'paid')
        .where(sql<boolean>`refunded_amount + ${refund.refund_amount} <= amount`)
        .returning('order_id')
        .executeTakeFirst();
      if (!updated) {
        const tx = await trx.selectFrom('transactions').select('status').where('order_id', '=', refund.order_id).executeTakeFirst();
        return { ok: false as const, reason: tx?.status === 'paid' ? ('insufficient' as const) : ('not_paid' as const) };
      }
      // The unique dedupe_key makes a concurrent identical request fail here, rolling back the total.
      const inserted = await trx
        .insertInto('refunds')
        .values({ ...refund, refund_status: 'pending', updated_at: refund.created_at })
        .onConflict((oc) => oc.column('dedupe_key').doNothing())
        .returning('refund_id')
        .executeTakeFirst();
      if (!inserted) throw new DuplicateRefund();
      return { ok: true as const };
    }).catch((e: unknown) => {
      if (e instanceof DuplicateRefund) return { ok: false as const, reason: 'duplicate' as const };
      throw e;
    });
  }

  async completeRefund(refund_id: string, now: number): Promise<void> {
    await this.db
      .updateTable('refunds')
      .set({ refund_status: 'succeeded', updated_at: now })
      .where('refund_id', '=', refund_id)
      .where('refund_status', '=', 'pending')
      .execute();
  }

  async failRefund(refund_id: string, now: number): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const failed = await trx
        .updateTable('refunds')
        .set({ refund_status: 'failed', dedupe_key: null, updated_at: now })
        .where('refund_id', '=', refund_id)
        .where('refund_status', '=', 'pending')
        .returning(['order_id', 'refund_amount'])
        .executeTakeFirst();
      if (!failed) return;
      await trx
        .updateTable('transactions')
        .set({ refunded_amount: sql`refunded_amount - ${failed.refund_amount}`, updated_at: now })
        .where('order_id', '=', failed.order_id)
        .execute();
    });
  }

  async listRefunds(order_id: string): Promise<Refund[]> {
    return this.db.selectFrom('refunds').selectAll().where('order_id', '=', order_id).orderBy('created_at').execute();
  }

  claimDueNotifications(input: ClaimInput): Promise<OutboxRow[]> {
    return outbox.claimDueNotifications(this.db, this.engine, input);
  }

  recordAttempt(input: AttemptRecord): Promise<boolean> {
    return outbox.recordAttempt(this.db, input);
  }

  findOutbox(event_id: string): Promise<OutboxRow | undefined> {
    return outbox.findOutbox(this.db, event_id);
  }

  listNotifications(order_id: string): Promise<OutboxRow[]> {
    return outbox.listNotifications(this.db, order_id);
  }

  listAttempts(event_id: string): Promise<NotificationAttempt[]> {
    return outbox.listAttempts(this.db, event_id);
  }

  requeueNow(event_id: string, now: number): Promise<OutboxRow | undefined> {
    return outbox.requeueNow(this.db, event_id, now);
  }

  async createMerchant(m: NewMerchant): Promise<{ organisation_id: number }> {
    return this.db.transaction().execute(async (trx) => {
      const org = await trx
        .insertInto('organisations')
        .values({ organisation_name: m.organisation_name, created_at: m.now })
        .returning('organisation_id')
        .executeTakeFirstOrThrow();
      await trx
        .insertInto('users')
        .values({ user_id: m.user_id, organisation_id: org.organisation_id, user_name: m.user_name, user_status: 'active', created_at: m.now })
        .execute();
      await trx.insertInto('wallets').values({ ...m.wallet, user_id: m.user_id }).execute();
      return { organisation_id: Number(org.organisation_id) };
    }).finally(() => this.adminChanged());
  }

  async createWallet(wallet: Insertable<WalletsTable>): Promise<void> {
    await this.db.insertInto('wallets').values(wallet).execute();
    await this.adminChanged();
  }

  async setApiKey(wallet_id: string, api_key: string): Promise<boolean> {
    const r = await this.db.updateTable('wallets').set({ api_key }).where('wallet_id', '=', wallet_id).executeTakeFirst();
    await this.adminChanged();
    return Number(r.numUpdatedRows) > 0;
  }

  async setUserStatus(user_id: string, user_status: 'active' | 'disabled'): Promise<boolean> {
    const r = await this.db.updateTable('users').set({ user_status }).where('user_id', '=', user_id).executeTakeFirst();
    await this.adminChanged();
    return Number(r.numUpdatedRows) > 0;
  }

  async setRate(currency_from: string, currency_to: string, rate_micros: number, now: number): Promise<void> {
    await this.db
      .insertInto('rates')
      .values({ currency_from, currency_to, rate_micros, updated_at: now })
      .onConflict((oc) => oc.columns(['currency_from', 'currency_to']).doUpdateSet({ rate_micros, updated_at: now }))
      .execute();
    await this.adminChanged();
  }

  async close(): Promise<void> {
    await this.db.destroy();
    await this.onClose();
  }
}

class DuplicateRefund extends Error {}

/** Marks an unused, unexpired nonce of an order of this host_type used; returns its order_id. */
function claimNonce(db: QueryCreator<Database>, nonce: string, now: number, host_type: number, page_token_hash?: string) {
  return db
    .updateTable('nonces')
    .set({ used_at: now, ...(page_token_hash !== undefined && { page_token_hash }) })
    .where('nonce', '=', nonce)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .where((eb) =>
      eb.exists(
        eb.selectFrom('transactions').select('order_id').whereRef('transactions.order_id', '=', 'nonces.order_id').where('host_type', '=', host_type),
      ),
    )
    .returning('order_id');
}

/** Why a nonce could not be claimed: unknown (or of the other host_type), used, or expired. */
async function nonceRefusal(db: Kysely<Database>, nonce: string, host_type: number): Promise<NonceUse> {
  const row = await db
    .selectFrom('nonces')
    .innerJoin('transactions', 'transactions.order_id', 'nonces.order_id')
    .select(['nonces.used_at', 'nonces.expires_at'])
    .where('nonces.nonce', '=', nonce)
    .where('transactions.host_type', '=', host_type)
    .executeTakeFirst();
  if (!row) return { ok: false, reason: 'unknown' };
  return { ok: false, reason: row.used_at !== null ? 'used' : 'expired' };
}
