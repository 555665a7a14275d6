import { sql, type Kysely } from 'kysely';
import { isPending, settledTransaction, type OrderResult, type Transaction } from '../../domain/transaction.js';
import type { InsertResult, Nonce, NonceUse, PendingRenewal, SettleInput, TransactionsRepo } from '../../ports/transactions.js';
import type { QueryExecutorLike } from '../prepared.js';
import type { Database } from '../schema.js';
import { TurnBatch } from '../turn-batch.js';
import { transactionStatements, type SettleArgs, type TransactionStatements } from './statements.js';

/** Order sequence numbers are reserved from the database in blocks, one write per block. */
const SEQUENCE_BLOCK = 100;

/** What both engines do alike; sqlite.ts and postgres.ts add what each does its own way. */
export abstract class SqlTransactions implements TransactionsRepo {
  protected readonly q: TransactionStatements;
  private seqNext = 0;
  private seqEnd = 0;
  private seqPending: Promise<void> | null = null;

  constructor(protected readonly db: Kysely<Database>) {
    this.q = transactionStatements(db);
  }

  abstract insert(transaction: Transaction, nonce: Nonce): Promise<InsertResult>;
  abstract useNonce(nonce: string, now: number, host_type: 0 | 1, page_token_hash?: string): Promise<NonceUse>;
  /** The settle of an order read pending: settle() has checked that it was. */
  protected abstract settlePending(input: SettleInput, args: SettleArgs): Promise<Transaction | undefined>;
  /** The query results of many (user_id, merchant_reference) pairs in one statement (see resultBatch). */
  protected abstract resultsOf(refs: Array<{ user_id: string; merchant_reference: string }>): Promise<OrderResult[]>;

  /**
   * The query's reads, gathered per turn of the event loop into one statement (turn-batch.ts):
   * under load many queries read in the same turn.
   */
  private readonly resultBatch = new TurnBatch<{ user_id: string; merchant_reference: string }, OrderResult>(
    (refs) => this.resultsOf(refs),
    (ref) => this.q.resultByReference.first(this.db, ref),
    (ref) => `${ref.user_id}\n${ref.merchant_reference}`,
    (o) => `${o.user_id}\n${o.merchant_reference}`,
  );

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

  async renewPending(order_id: string, changes: PendingRenewal, nonce: Nonce): Promise<Transaction | undefined> {
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
      await this.q.insertNonce.execute(trx, nonce);
      return updated;
    });
  }

  find(order_id: string): Promise<Transaction | undefined> {
    return this.q.byId.first(this.db, { order_id });
  }

  findByReference(user_id: string, merchant_reference: string): Promise<Transaction | undefined> {
    return this.q.byReference.first(this.db, { user_id, merchant_reference });
  }

  findResult(user_id: string, merchant_reference: string): Promise<OrderResult | undefined> {
    return this.resultBatch.load({ user_id, merchant_reference });
  }

  async findCheckoutVisit(nonce: string, page_token_hash: string): Promise<{ transaction: Transaction; used_at: number } | undefined> {
    const visit = await this.q.checkoutVisit.first(this.db, { nonce, page_token_hash });
    if (!visit || visit.used_at === null) return undefined;
    const transaction = await this.find(visit.order_id);
    return transaction && { transaction, used_at: Number(visit.used_at) };
  }

  async settle(input: SettleInput): Promise<Transaction | undefined> {
    // A final status is final: an order read ended has nothing to settle.
    if (!isPending(input.read)) return undefined;
    const after = settledTransaction(input.read, input);
    return this.settlePending(input, {
      order_id: input.read.order_id,
      status: input.to,
      status_message: after.status_message,
      msgId: after.msgId,
      status_seq: after.status_seq,
      pay_time: input.now,
      updated_at: after.updated_at,
      read_seq: input.read.status_seq,
    });
  }

  async setChannelState(order_id: string, channel_state: string | null, now: number): Promise<void> {
    await this.db.updateTable('transactions').set({ channel_state, updated_at: now }).where('order_id', '=', order_id).execute();
  }

  async setCancelLock(order_id: string, until: number, now: number): Promise<void> {
    await this.db.updateTable('transactions').set({ cancel_locked_until: until, updated_at: now }).where('order_id', '=', order_id).execute();
  }

  /** Why a nonce could not be claimed: unknown (or of the other host_type), used, or expired. */
  protected async nonceRefusal(executor: QueryExecutorLike, nonce: string, host_type: 0 | 1): Promise<NonceUse> {
    const refused = await this.q.nonceRefusal.first(executor, { nonce, host_type });
    if (!refused) return { ok: false, reason: 'unknown' };
    return { ok: false, reason: refused.used_at !== null ? 'used' : 'expired' };
  }

  protected conflicting(tx: Transaction, existing: Transaction | undefined): Transaction {
    if (!existing) throw new Error(`order ${tx.merchant_reference} conflicted with an order that cannot be read`);
    return existing;
  }
}
