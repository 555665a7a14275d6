import { sql, type Kysely, type RawBuilder } from 'kysely';
import { isPending, settledTransaction, type OrderResult, type Transaction } from '../../domain/transaction.js';
import type {
  ChannelPayment,
  InsertResult,
  NewChannelPayment,
  Nonce,
  NonceUse,
  PaymentToCheck,
  PendingRenewal,
  ReadConsistency,
  SettleInput,
  SearchPage,
  SettlementFilter,
  SettlementRow,
  StoreWrite,
  SummaryRow,
  TransactionSearch,
  TransactionsRepo,
} from '../../ports/transactions.js';
import type { QueryExecutorLike } from '../prepared.js';
import { organisationUsers } from '../organisation-scope.js';
import type { Database } from '../schema.js';
import { TurnBatch } from '../turn-batch.js';

/** How many orders of the scope one page of a list filtered by method or wallet looks through. */
export const SEARCH_WINDOW = 20_000;

const newestFirstCompare = (x: Transaction, y: Transaction) =>
  y.created_at - x.created_at || (y.order_id < x.order_id ? -1 : y.order_id > x.order_id ? 1 : 0);
import {
  markPaymentStatement,
  transactionStatements,
  type SettleArgs,
  type TransactionStatements,
} from './statements.js';

/**
 * Order sequence numbers are reserved from the database in blocks, one write per block; the next
 * block is reserved once half of the current one is drawn, so that no create waits for that write
 * (one create in a hundred did: a durable write, in the create's tail).
 */
const SEQUENCE_BLOCK = 100;

/** What both engines do alike; sqlite.ts and postgres.ts add what each does its own way. */
export abstract class SqlTransactions implements TransactionsRepo {
  protected readonly q: TransactionStatements;
  private seqNext = 0;
  private seqEnd = 0;
  /** The block reserved ahead, not yet drawn from. */
  private seqAhead: { next: number; end: number } | null = null;
  private seqPending: Promise<void> | null = null;

  constructor(protected readonly db: Kysely<Database>) {
    this.q = transactionStatements(db);
  }

  abstract insert(transaction: Transaction, nonce: Nonce, payment?: NewChannelPayment): StoreWrite<InsertResult>;
  abstract useNonce(nonce: string, now: number, host_type: 0 | 1, page_token_hash?: string): Promise<NonceUse>;
  /** The settle of an order read pending: settle() has checked that it was. */
  protected abstract settlePending(input: SettleInput, args: SettleArgs): Promise<Transaction | undefined>;
  abstract claimPaymentsToCheck(now: number, lease_ms: number, limit: number): Promise<PaymentToCheck[]>;
  abstract setPaymentPayload(
    payment: Pick<ChannelPayment, 'out_trade_no' | 'order_id'>,
    payload: string,
    now: number,
    orderQr?: boolean,
  ): Promise<boolean>;
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
      if (this.seqAhead) {
        ({ next: this.seqNext, end: this.seqEnd } = this.seqAhead);
        this.seqAhead = null;
      } else {
        await this.reserveAhead();
      }
    }
    if (this.seqEnd - this.seqNext <= SEQUENCE_BLOCK / 2 && !this.seqAhead && !this.seqPending) {
      // A failure here is met again, and thrown, by the draw that needs the block.
      this.reserveAhead().catch(() => {});
    }
    return this.seqNext++;
  }

  /** Reserves the next block into seqAhead (one reservation at a time). */
  private reserveAhead(): Promise<void> {
    this.seqPending ??= this.db
      .updateTable('sequences')
      .set({ next_value: sql`next_value + ${SEQUENCE_BLOCK}` })
      .where('name', '=', 'order_id')
      .returning('next_value')
      .executeTakeFirstOrThrow()
      .then((row) => {
        const end = Number(row.next_value);
        this.seqAhead = { next: end - SEQUENCE_BLOCK, end };
      })
      .finally(() => {
        this.seqPending = null;
      });
    return this.seqPending;
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
      // The older unused nonces stop working: they expire now. Not marked used, which would tell
      // the console's timeline that someone opened the page (used_at is when a page was opened).
      await trx
        .updateTable('nonces')
        .set({ expires_at: nonce.created_at })
        .where('order_id', '=', order_id)
        .where('used_at', 'is', null)
        .where('expires_at', '>', nonce.created_at)
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

  async listNonceUses(order_id: string): Promise<number[]> {
    const rows = await this.db
      .selectFrom('nonces')
      .select('used_at')
      .where('order_id', '=', order_id)
      .where('used_at', 'is not', null)
      .orderBy('used_at')
      .execute();
    return rows.map((r) => Number(r.used_at));
  }

  async findByUsedNonce(nonce: string): Promise<Transaction | undefined> {
    const row = await this.db
      .selectFrom('nonces')
      .select(['order_id', 'used_at', 'page_token_hash'])
      .where('nonce', '=', nonce)
      .executeTakeFirst();
    // A page's nonce: used, with a visit (a gateway data nonce has none).
    return row && row.used_at !== null && row.page_token_hash !== null ? this.find(row.order_id) : undefined;
  }

  async findCheckoutVisit(
    nonce: string,
    page_token_hash: string,
  ): Promise<{ transaction: Transaction; used_at: number } | undefined> {
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
    await this.db
      .updateTable('transactions')
      .set({ channel_state, updated_at: now })
      .where('order_id', '=', order_id)
      .execute();
  }

  async setCancelLock(order_id: string, until: number, now: number): Promise<void> {
    await this.db
      .updateTable('transactions')
      .set({ cancel_locked_until: until, updated_at: now })
      .where('order_id', '=', order_id)
      .execute();
  }

  async search(f: TransactionSearch): Promise<SearchPage> {
    // The organisation's users as values, not a subquery: PostgreSQL then plans the scan by the
    // (user_id, created_at) index with what it knows of those users, instead of joining all orders.
    const users =
      f.organisation_id === undefined
        ? undefined
        : (await organisationUsers(this.db, f.organisation_id).execute()).map((u) => u.user_id);
    if (users !== undefined && users.length === 0) return { rows: [] };
    const scoped = <Q extends ReturnType<typeof this.listFrom>>(q: Q, after = f.after): Q => {
      let r = q;
      if (users !== undefined) r = r.where('user_id', 'in', users) as Q;
      if (f.status !== undefined) r = r.where('status', '=', f.status) as Q;
      if (f.from !== undefined) r = r.where('created_at', '>=', f.from) as Q;
      if (f.to !== undefined) r = r.where('created_at', '<', f.to) as Q;
      if (after !== undefined) {
        const { created_at, order_id } = after;
        // The bound on created_at alone lets both planners seek the index to the cursor; the OR
        // alone would have them read every newer row again on every page.
        r = r
          .where('created_at', '<=', created_at)
          .where((eb) => eb.or([eb('created_at', '<', created_at), eb('order_id', '<', order_id)])) as Q;
      }
      return r;
    };
    const newestFirst = <Q extends ReturnType<typeof this.listFrom>>(q: Q) =>
      q.orderBy('created_at', 'desc').orderBy('order_id', 'desc');
    const page = (rows: Transaction[], boundary?: { created_at: number; order_id: string }): SearchPage => {
      const last = rows[f.limit - 1];
      const next = last ? { created_at: last.created_at, order_id: last.order_id } : boundary;
      return { rows: rows.slice(0, f.limit), ...(next && { next }) };
    };
    if (f.text !== undefined) {
      // An order_id or a merchant_reference: two lookups, each by its own index (an OR of the two
      // has PostgreSQL read the whole table). A merchant_reference is unique per user, so it is
      // looked up user by user: (user_id, merchant_reference) is the index.
      const text = f.text;
      const sparse = (q: ReturnType<typeof this.listFrom>) => {
        let r = scoped(q);
        if (f.wallet_id !== undefined) r = r.where('wallet_id', '=', f.wallet_id);
        if (f.payment_method !== undefined) r = r.where('payment_method', '=', f.payment_method);
        return r;
      };
      // Or a payment's id at the provider, ours (out_trade_no) or theirs (provider_ref): each by its own index.
      const viaPayments = this.db
        .selectFrom('channel_payments')
        .select('order_id')
        .where('out_trade_no', '=', text)
        .union(this.db.selectFrom('channel_payments').select('order_id').where('provider_ref', '=', text));
      const [byId, byReference, byPayment] = await Promise.all([
        sparse(this.listFrom()).where('order_id', '=', text).execute(),
        sparse(this.listFrom())
          .where('merchant_reference', '=', text)
          .where('user_id', 'in', this.db.selectFrom('users').select('user_id'))
          .execute(),
        sparse(this.listFrom()).where('order_id', 'in', viaPayments).execute(),
      ]);
      const found = new Map<string, Transaction>();
      for (const t of [...byId, ...byReference, ...byPayment]) found.set(t.order_id, t);
      return { rows: [...found.values()].sort(newestFirstCompare).slice(0, f.limit) };
    }
    if (f.wallet_id === undefined && f.payment_method === undefined) {
      return page(await newestFirst(scoped(this.listFrom())).limit(f.limit).execute());
    }
    // Method or wallet: the window of the scope's next SEARCH_WINDOW orders (read from the index
    // alone), then the matches within it.
    const boundary = (await newestFirst(
      scoped(
        this.db.selectFrom('transactions').select(['created_at', 'order_id']) as unknown as ReturnType<
          typeof this.listFrom
        >,
      ),
    )
      .offset((f.window ?? SEARCH_WINDOW) - 1)
      .limit(1)
      .executeTakeFirst()) as { created_at: number; order_id: string } | undefined;
    let q = scoped(this.listFrom());
    if (f.wallet_id !== undefined) q = q.where('wallet_id', '=', f.wallet_id);
    if (f.payment_method !== undefined) q = q.where('payment_method', '=', f.payment_method);
    if (boundary) {
      const { created_at, order_id } = boundary;
      q = q
        .where('created_at', '>=', created_at)
        .where((eb) => eb.or([eb('created_at', '>', created_at), eb('order_id', '>=', order_id)]));
    }
    const rows = await newestFirst(q).limit(f.limit).execute();
    return page(
      rows,
      rows.length < f.limit && boundary
        ? { created_at: Number(boundary.created_at), order_id: boundary.order_id }
        : undefined,
    );
  }

  private listFrom() {
    return this.db.selectFrom('transactions').selectAll();
  }

  async summary(f: { organisation_id?: number; from: number }): Promise<SummaryRow[]> {
    let q = this.db
      .selectFrom('transactions')
      .select((eb) => [
        'currency',
        'payment_method',
        'status',
        eb.fn.countAll<number | string>().as('count'),
        eb.fn.sum<number | string>('amount').as('amount'),
      ])
      .where('created_at', '>=', f.from);
    if (f.organisation_id !== undefined) q = q.where('user_id', 'in', organisationUsers(this.db, f.organisation_id));
    const rows = await q
      .groupBy(['currency', 'payment_method', 'status'])
      .orderBy('currency')
      .orderBy('payment_method')
      .execute();
    // PostgreSQL's count and sum of bigint are numeric text: whole numbers, well within 2^53.
    return rows.map((r) => ({ ...r, count: Number(r.count), amount: Number(r.amount) }));
  }

  async createdByDay(f: SettlementFilter): Promise<Array<SummaryRow & { day: number }>> {
    const day = sql<number | string>`(created_at / 86400000) * 86400000`;
    let q = this.db
      .selectFrom('transactions')
      .select((eb) => [
        day.as('day'),
        'currency',
        'payment_method',
        'status',
        eb.fn.countAll<number | string>().as('count'),
        eb.fn.sum<number | string>('amount').as('amount'),
      ])
      .where('created_at', '>=', f.from)
      .where('created_at', '<', f.to);
    if (f.organisation_id !== undefined) q = q.where('user_id', 'in', organisationUsers(this.db, f.organisation_id));
    const rows = await q.groupBy([day, 'currency', 'payment_method', 'status']).execute();
    return rows.map((r) => ({ ...r, day: Number(r.day), count: Number(r.count), amount: Number(r.amount) }));
  }

  async paidByDay(f: SettlementFilter & { createdFrom: number }): Promise<SettlementRow[]> {
    const day = sql<number | string>`(pay_time / 86400000) * 86400000`;
    let q = this.db
      .selectFrom('transactions')
      .select((eb) => [
        day.as('day'),
        'wallet_id',
        'currency',
        'payment_method',
        eb.fn.countAll<number | string>().as('count'),
        eb.fn.sum<number | string>('amount').as('amount'),
      ])
      .where('created_at', '>=', f.createdFrom)
      .where('created_at', '<', f.to)
      .where('status', '=', 'paid')
      .where('pay_time', '>=', f.from)
      .where('pay_time', '<', f.to);
    if (f.organisation_id !== undefined) q = q.where('user_id', 'in', organisationUsers(this.db, f.organisation_id));
    if (f.wallet_id !== undefined) q = q.where('wallet_id', '=', f.wallet_id);
    const rows = await q
      .groupBy([day, 'wallet_id', 'currency', 'payment_method'])
      .orderBy(day)
      .orderBy('wallet_id')
      .orderBy('currency')
      .orderBy('payment_method')
      .execute();
    return rows.map((r) => ({ ...r, day: Number(r.day), count: Number(r.count), amount: Number(r.amount) }));
  }

  async organisationOf(order_id: string): Promise<number | undefined> {
    const r = await this.db
      .selectFrom('transactions')
      .innerJoin('users', 'users.user_id', 'transactions.user_id')
      .select('users.organisation_id')
      .where('transactions.order_id', '=', order_id)
      .executeTakeFirst();
    return r?.organisation_id;
  }

  async addPayment(payment: NewChannelPayment): Promise<ChannelPayment> {
    const added = await this.db
      .insertInto('channel_payments')
      .values(payment)
      .onConflict((oc) => oc.columns(['order_id', 'flow', 'attempt']).doNothing())
      .returningAll()
      .executeTakeFirst();
    return (
      added ??
      this.db
        .selectFrom('channel_payments')
        .selectAll()
        .where('order_id', '=', payment.order_id)
        .where('flow', '=', payment.flow)
        .where('attempt', '=', payment.attempt)
        .executeTakeFirstOrThrow()
    );
  }

  /** Here a read sees only what is on disk, whatever it is asked: a store that can read sooner overrides it. */
  async findPayment(
    out_trade_no: string,
    _consistency: ReadConsistency,
  ): Promise<{ payment: ChannelPayment; order: Transaction | undefined } | undefined> {
    const payment = await this.q.paymentByOutTradeNo.first(this.db, { out_trade_no });
    return payment && { payment, order: await this.find(payment.order_id) };
  }

  listPayments(order_id: string): Promise<ChannelPayment[]> {
    return this.db
      .selectFrom('channel_payments')
      .selectAll()
      .where('order_id', '=', order_id)
      .orderBy('created_at')
      .orderBy('out_trade_no')
      .execute();
  }

  async markPayment(
    out_trade_no: string,
    state: 'paid' | 'closed',
    provider_ref: string | null,
    now: number,
  ): Promise<void> {
    await this.db.executeQuery(markPaymentStatement(this.q, out_trade_no, state, provider_ref, now));
  }

  async schedulePaymentCheck(out_trade_no: string, next_check_at: number): Promise<void> {
    await this.db
      .updateTable('channel_payments')
      // Not updated_at: that is when the payment last changed (the reuse of its QR counts from it).
      .set({ next_check_at, check_claimed_until: null })
      .where('out_trade_no', '=', out_trade_no)
      .execute();
  }

  listExpired(before: number, limit: number): Promise<Transaction[]> {
    return this.db
      .selectFrom('transactions')
      .selectAll()
      .where('status', '=', 'pending')
      .where('created_at', '<', before)
      .orderBy('created_at')
      .limit(limit)
      .execute();
  }

  /**
   * Claims payments due for a check (see TransactionsRepo.claimPaymentsToCheck); `among` and `lock`
   * are how the engine writes the pick (as for the outbox claim).
   */
  protected async claimPayments(
    now: number,
    lease_ms: number,
    limit: number,
    among: (rows: RawBuilder<unknown>) => RawBuilder<unknown>,
    lock: RawBuilder<unknown>,
  ): Promise<PaymentToCheck[]> {
    const pick = sql`select p.out_trade_no from channel_payments p join transactions t on t.order_id = p.order_id
      where p.state = 'open' and t.status = 'pending' and p.next_check_at <= ${now} and (p.check_claimed_until is null or p.check_claimed_until <= ${now})
      order by p.next_check_at, p.out_trade_no limit ${limit}${lock}`;
    const { rows } = await sql<ChannelPayment>`update channel_payments set check_claimed_until = ${now + lease_ms}
      where out_trade_no ${among(pick)} returning *`.execute(this.db);
    return this.withOrders(rows.sort((a, b) => a.next_check_at - b.next_check_at));
  }

  /** The claimed payments with their orders. */
  protected async withOrders(payments: ChannelPayment[]): Promise<PaymentToCheck[]> {
    const out: PaymentToCheck[] = [];
    for (const payment of payments) {
      const order = await this.find(payment.order_id);
      if (order) out.push({ payment, order });
    }
    return out;
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
