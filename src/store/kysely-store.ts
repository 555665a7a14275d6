import { Kysely, Migrator, sql, type CompiledQuery, type QueryResult } from 'kysely';
import type { Database } from './schema.js';
import { hotStatements, nonceRefusal, type HotStatements } from './hot-statements.js';
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
  OrderResult,
  NewRefund,
  Refund,
  RefundReservation,
  SettleInput,
  Store,
  Transaction,
  UserRecord,
  Wallet,
  WalletChanges,
} from './store.js';
import type { Insertable } from 'kysely';
import type { WalletsTable } from './schema.js';
import * as outbox from './outbox-queries.js';
import * as refunds from './refund-queries.js';
import { TurnBatch } from './turn-batch.js';
import { ADMIN_NOTIFY_CHANNEL } from './notify-channels.js';
export { ADMIN_NOTIFY_CHANNEL, STATUS_NOTIFY_CHANNEL } from './notify-channels.js';

/** Order sequence numbers are reserved from the database in blocks, one write per block. */
const SEQUENCE_BLOCK = 100;

export class KyselyStore implements Store {
  private seqNext = 0;
  private seqEnd = 0;
  private seqPending: Promise<void> | null = null;
  /** The statements of the request paths, each compiled once on first use (see prepared.ts). */
  private readonly q: HotStatements;
  private readonly refundQ: refunds.RefundStatements;

  constructor(
    readonly db: Kysely<Database>,
    readonly engine: Engine,
    private readonly onClose: () => Promise<void> = async () => {},
  ) {
    this.q = hotStatements(db);
    this.refundQ = refunds.refundStatements(db);
  }

  /** The query route's reads, gathered per turn of the event loop (turn-batch.ts). */
  private readonly resultBatch = new TurnBatch<{ user_id: string; merchant_reference: string }, OrderResult>(
    async (refs) => {
      const rows =
        this.engine === 'postgres'
          ? await this.q.resultsByReferences.execute(this.db, { user_ids: refs.map((r) => r.user_id), merchant_references: refs.map((r) => r.merchant_reference) })
          : await this.q.resultsByReferencesJson.execute(this.db, { pairs: JSON.stringify(refs.map((r) => [r.user_id, r.merchant_reference])) });
      return rows.rows;
    },
    (ref) => this.q.resultByReference.first(this.db, ref),
    (ref) => `${ref.user_id}\n${ref.merchant_reference}`,
    (o) => `${o.user_id}\n${o.merchant_reference}`,
  );

  private adminChanges = 0;
  /** SQLite with the group-commit driver: runs synchronous statements as one atomic, durable unit. */
  writeAtomically: (<T>(work: (run: <R>(query: CompiledQuery<R>) => QueryResult<R>) => T) => Promise<T>) | null = null;
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
    return this.q.user.first(this.db, { user_id });
  }

  async findWallet(wallet_id: string): Promise<Wallet | undefined> {
    return this.q.wallet.first(this.db, { wallet_id });
  }

  async listWallets(user_id: string): Promise<Wallet[]> {
    return this.db.selectFrom('wallets').selectAll().where('user_id', '=', user_id).orderBy('created_at').execute();
  }

  async findRate(currency_from: string, currency_to: string): Promise<number | undefined> {
    return (await this.q.rate.first(this.db, { currency_from, currency_to }))?.rate_micros;
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
    // and costs no round trip. With the group-commit driver it runs as one synchronous unit.
    if (this.writeAtomically) {
      return this.writeAtomically((run) => {
        if (run(this.q.insertTransaction.bind(tx)).numAffectedRows === 1n) {
          run(this.q.insertNonce.bind(nonce));
          return { created: true as const };
        }
        return { created: false as const, existing: this.conflicting(tx, run(this.q.transactionByReference.bind(tx)).rows[0]) };
      });
    }
    return this.db.transaction().execute(async (trx) => {
      const { numAffectedRows } = await this.q.insertTransaction.execute(trx, tx);
      if (numAffectedRows !== 1n) return { created: false as const, existing: this.conflicting(tx, await this.q.transactionByReference.first(trx, tx)) };
      await this.q.insertNonce.execute(trx, nonce);
      return { created: true as const };
    });
  }

  private conflicting(tx: NewTransaction, existing: Transaction | undefined): Transaction {
    if (!existing) throw new Error(`order ${tx.merchant_reference} conflicted with an order that cannot be read`);
    return existing;
  }

  /**
   * PostgreSQL: the order and its nonce in one statement (one round trip, atomic on its own)
   * instead of BEGIN, two INSERTs and COMMIT, together with the other creates of the same turn
   * (turn-batch.ts). The nonces are inserted from the RETURNING rows of the orders' insert, so a
   * nonce exists exactly when its order was inserted. On a conflict the existing
   * order is read by a second statement: its snapshot is taken after the conflicting insert
   * committed, which the first statement's snapshot may predate.
   */
  private async insertTransactionPg(tx: NewTransaction, nonce: Nonce): Promise<{ created: true } | { created: false; existing: Transaction }> {
    const inserted = await this.insertBatch.load({ tx, nonce });
    if (inserted) return { created: true };
    return { created: false, existing: this.conflicting(tx, await this.findTransactionByReference(tx.user_id, tx.merchant_reference)) };
  }

  /**
   * PostgreSQL: the creates of one turn, as one statement (one commit). The rows go in sorted by
   * (user_id, merchant_reference): two batches that both hold a reference another has just
   * inserted (concurrent retries of the same orders) then wait for each other in the same order,
   * never in a cycle (a deadlock PostgreSQL would break only after a second).
   */
  private readonly insertBatch = new TurnBatch<{ tx: NewTransaction; nonce: Nonce }, { order_id: string }>(
    async (all) => {
      const sorted = [...all].sort((a, b) => compareText(a.tx.user_id, b.tx.user_id) || compareText(a.tx.merchant_reference, b.tx.merchant_reference));
      const inserted = await this.q.insertTransactionsWithNonces.execute(this.db, {
        orders: JSON.stringify(sorted.map((a) => a.tx)),
        nonces: JSON.stringify(sorted.map((a) => a.nonce)),
      });
      return inserted.rows;
    },
    ({ tx, nonce }) => this.insertOnePg(tx, nonce),
    (a) => a.tx.order_id,
    (r) => r.order_id,
  );

  private async insertOnePg(tx: NewTransaction, nonce: Nonce): Promise<{ order_id: string } | undefined> {
    return this.q.insertTransactionWithNonce.first(this.db, {
      ...tx,
      nonce: nonce.nonce,
      nonce_expires_at: nonce.expires_at,
      nonce_used_at: nonce.used_at ?? null,
      nonce_created_at: nonce.created_at,
      nonce_page_token_hash: nonce.page_token_hash ?? null,
    });
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
    return this.q.transactionById.first(this.db, { order_id });
  }

  async findResultByReference(user_id: string, merchant_reference: string): Promise<OrderResult | undefined> {
    return this.resultBatch.load({ user_id, merchant_reference });
  }

  async findTransactionByReference(user_id: string, merchant_reference: string): Promise<Transaction | undefined> {
    return this.q.transactionByReference.first(this.db, { user_id, merchant_reference });
  }

  async useNonce(nonce: string, now: number, host_type: number, page_token_hash?: string): Promise<NonceUse> {
    if (this.engine === 'postgres') return this.useNoncePg(nonce, now, host_type, page_token_hash);
    const claim = page_token_hash === undefined ? this.q.claimNonce : this.q.claimNonceForPage;
    return this.db.transaction().execute(async (trx) => {
      const claimed = await claim.first(trx, { nonce, now, host_type, page_token_hash: page_token_hash ?? null });
      if (!claimed) return nonceRefusal(this.q, trx, nonce, host_type);
      const transaction = await this.q.transactionById.first(trx, claimed);
      if (!transaction) throw new Error(`nonce ${nonce} was claimed for order ${claimed.order_id}, which cannot be read`);
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
    const claim = page_token_hash === undefined ? this.q.claimNonceWithOrder : this.q.claimNonceForPageWithOrder;
    const transaction = await claim.first(this.db, { nonce, now, host_type, page_token_hash: page_token_hash ?? null });
    if (transaction) return { ok: true, transaction };
    return nonceRefusal(this.q, this.db, nonce, host_type);
  }

  async findCheckoutVisit(nonce: string, page_token_hash: string): Promise<{ transaction: Transaction; used_at: number } | undefined> {
    const visit = await this.q.checkoutVisit.first(this.db, { nonce, page_token_hash });
    if (!visit || visit.used_at === null) return undefined;
    const transaction = await this.findTransaction(visit.order_id);
    return transaction && { transaction, used_at: Number(visit.used_at) };
  }

  async settle(input: SettleInput): Promise<Transaction | undefined> {
    if (this.engine === 'postgres' && input.read?.status === 'pending') {
      const settled = await this.settleInOneStatement(input, input.read);
      if (settled) return settled;
      // The order changed since the caller read it (or settled meanwhile): the general path decides.
    }
    return this.db.transaction().execute(async (trx) => {
      const settled = await this.q.settle.first(trx, {
        order_id: input.order_id,
        to: input.to,
        status_message: input.status_message ?? null,
        msgId: input.msgId ?? null,
        now: input.now,
      });
      if (!settled) return undefined;
      // PostgreSQL: the NOTIFY rides on the outbox insert (one round trip less). It is delivered to
      // every listening instance when (and only if) this transaction commits.
      const queue = this.engine === 'postgres' ? this.q.insertOutboxAndNotify : this.q.insertOutbox;
      await queue.execute(trx, input.outbox(settled));
      return settled;
    });
  }

  /**
   * PostgreSQL, when the caller read the pending order: one round trip instead of four (BEGIN,
   * UPDATE, INSERT with NOTIFY, COMMIT); 100 pays cost the gateway 130-180 ms of CPU instead of
   * 160-220 (docs/performance.md), and each waits less behind other work. The outbox row is built
   * from the row as read with the settle's changes applied; the statement changes nothing unless
   * the order is still that row in everything the outbox row holds, and returns the row as settled.
   */
  private settleInOneStatement(input: SettleInput, read: Transaction): Promise<Transaction | undefined> {
    const args = { order_id: input.order_id, to: input.to, status_message: input.status_message ?? null, msgId: input.msgId ?? null, now: input.now };
    const outbox = input.outbox(settledAs(read, args));
    return this.q.settleAndQueue.first(this.db, { ...args, read_seq: read.status_seq, callback_url: read.callback_url, outbox: JSON.stringify(outbox) });
  }

  async setChannelState(order_id: string, channel_state: string | null, now: number): Promise<void> {
    await this.db.updateTable('transactions').set({ channel_state, updated_at: now }).where('order_id', '=', order_id).execute();
  }

  async setCancelLock(order_id: string, until: number, now: number): Promise<void> {
    await this.db.updateTable('transactions').set({ cancel_locked_until: until, updated_at: now }).where('order_id', '=', order_id).execute();
  }

  reserveRefund(refund: NewRefund): Promise<RefundReservation> {
    return refunds.reserveRefund(this.db, this.engine, this.refundQ, refund);
  }

  completeRefund(refund_id: string, now: number): Promise<void> {
    return refunds.completeRefund(this.db, refund_id, now);
  }

  failRefund(refund_id: string, now: number): Promise<void> {
    return refunds.failRefund(this.db, this.engine, refund_id, now);
  }

  listPendingRefunds(updatedBefore: number, limit: number): Promise<Refund[]> {
    return refunds.listPendingRefunds(this.db, updatedBefore, limit);
  }

  listRefunds(order_id: string): Promise<Refund[]> {
    return refunds.listRefunds(this.db, order_id);
  }

  releaseClaims(): Promise<number> {
    return outbox.releaseClaims(this.db);
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

  async updateWallet(wallet_id: string, changes: WalletChanges): Promise<Wallet | undefined> {
    const set = Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined)) as WalletChanges;
    if (Object.keys(set).length === 0) return this.findWallet(wallet_id);
    const updated = await this.db.updateTable('wallets').set(set).where('wallet_id', '=', wallet_id).returningAll().executeTakeFirst();
    await this.adminChanged();
    return updated;
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

/** The row as settle's update leaves it (settleChanges in hot-statements.ts), from the row before. */
function settledAs(read: Transaction, p: { to: string; status_message: string | null; msgId: string | null; now: number }): Transaction {
  return { ...read, status: p.to, status_message: p.status_message, msgId: p.msgId, status_seq: read.status_seq + 1, pay_time: p.now, updated_at: p.now };
}

/** Any total order will do for lock ordering; the same one in every instance. */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
