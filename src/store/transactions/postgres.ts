import { sql, type Kysely, type QueryCreator } from 'kysely';
import type { JournalEntry } from '../../domain/ledger.js';
import { settledTransaction, type OrderResult, type Transaction } from '../../domain/transaction.js';
import type {
  ChannelPayment,
  InsertResult,
  ReadConsistency,
  StoreWrite,
  NewChannelPayment,
  Nonce,
  NonceUse,
  PaymentToCheck,
  SettleInput,
} from '../../ports/transactions.js';
import { STATUS_NOTIFY_CHANNEL } from '../../ports/signals.js';
import {
  NEW_PAYMENT_COLUMNS,
  NONCE_COLUMNS,
  OUTBOX_COLUMNS,
  RESULT_COLUMNS,
  TRANSACTION_COLUMNS,
  requireColumns,
} from '../columns.js';
import { postingRows, postingStatements } from '../ledger/ledger-write.js';
import { prepared, raw, row } from '../prepared.js';
import type { Database } from '../schema.js';
import { TurnBatch } from '../turn-batch.js';
import { SqlTransactions } from './base.js';
import {
  claimNonce,
  insertTransaction,
  markPaymentStatement,
  markPaymentUpdate,
  settleUpdate,
  type NonceClaim,
  type SettleArgs,
} from './statements.js';

/** An order to insert with its nonce and, for a merchant-hosted QR through a provider, its payment. */
interface NewOrder {
  tx: Transaction;
  nonce: Nonce;
  payment?: NewChannelPayment | undefined;
}

/** The CTE insert's arguments: the order's columns and its nonce's (created_at would clash). */
interface OrderWithNonce extends Transaction {
  nonce: string;
  nonce_expires_at: number;
  nonce_used_at: number | null;
  nonce_created_at: number;
  nonce_page_token_hash: string | null;
}

/** `select a, b, ... from` a JSON record set, naming exactly these columns (a column left out keeps its DEFAULT). */
const columnsOf = (alias: string, columns: readonly string[]) => sql.join(columns.map((c) => sql.ref(`${alias}.${c}`)));

/** Orders, the nonces of those inserted and (with `payments`) their provider payments, in one statement. */
function insertOrders(
  db: Kysely<Database>,
  p: { orders: string; nonces: string; payments?: string },
  withPayments: boolean,
) {
  const withNonces = db
    .with('inserted', (qc) =>
      qc
        .insertInto('transactions')
        .columns(TRANSACTION_COLUMNS)
        .expression(
          sql`select ${columnsOf('t', TRANSACTION_COLUMNS)} from json_populate_recordset(null::transactions, ${p.orders}::json) as t`,
        )
        .onConflict((oc) => oc.columns(['user_id', 'merchant_reference']).doNothing())
        .returning('order_id'),
    )
    .with('inserted_nonces', (qc) =>
      qc
        .insertInto('nonces')
        .columns(NONCE_COLUMNS)
        .expression(
          sql`select ${columnsOf('n', NONCE_COLUMNS)} from json_populate_recordset(null::nonces, ${p.nonces}::json) as n where n.order_id in (select order_id from inserted)`,
        )
        .returning('nonce'),
    );
  // Decided by the caller: `p` is prepared()'s stand-in for the arguments, every name of it defined.
  if (!withPayments) return withNonces.selectFrom('inserted').select('order_id');
  return withNonces
    .with('inserted_payments', (qc) =>
      qc
        .insertInto('channel_payments')
        .columns(NEW_PAYMENT_COLUMNS)
        .expression(
          sql`select ${columnsOf('c', NEW_PAYMENT_COLUMNS)} from json_populate_recordset(null::channel_payments, ${p.payments}::json) as c where c.order_id in (select order_id from inserted)`,
        )
        .returning('out_trade_no'),
    )
    .selectFrom('inserted')
    .select('order_id');
}

/** The statements PostgreSQL runs its own way, compiled once per store (prepared.ts). */
export function postgresStatements(db: Kysely<Database>) {
  return {
    /** The order and, if it was inserted, its nonce. */
    insertTransactionWithNonce: prepared((p: OrderWithNonce) =>
      db
        .with('inserted', (qc) => insertTransaction(qc, p).returning('order_id'))
        .insertInto('nonces')
        .columns(NONCE_COLUMNS)
        .expression((eb) =>
          eb
            .selectFrom('inserted')
            .select([
              eb.cast<string>(eb.val(p.nonce), 'text').as('nonce'),
              'inserted.order_id',
              eb.cast<number>(eb.val(p.nonce_expires_at), 'bigint').as('expires_at'),
              eb.cast<number | null>(eb.val(p.nonce_used_at), 'bigint').as('used_at'),
              eb.cast<number>(eb.val(p.nonce_created_at), 'bigint').as('created_at'),
              eb.cast<string | null>(eb.val(p.nonce_page_token_hash), 'text').as('page_token_hash'),
            ]),
        )
        .returning('order_id'),
    ),
    /**
     * Many orders and the nonces of those inserted, in one statement: each a JSON array of rows
     * keyed by column name; the database gives every value its column's type.
     */
    insertTransactionsWithNonces: prepared((p: { orders: string; nonces: string }) => insertOrders(db, p, false)),
    /** The same, with the provider payments of those inserted (merchant-hosted QR through a provider). */
    insertTransactionsWithNoncesAndPayments: prepared((p: { orders: string; nonces: string; payments: string }) =>
      insertOrders(db, p, true),
    ),
    /** The results of many (user_id, merchant_reference) pairs, given as two arrays. */
    resultsByReferences: prepared((p: { user_ids: string[]; merchant_references: string[] }) =>
      db
        .selectFrom('transactions')
        .select(RESULT_COLUMNS)
        .where(
          sql<boolean>`(user_id, merchant_reference) in (select * from unnest(${p.user_ids}::text[], ${p.merchant_references}::text[]))`,
        ),
    ),
    /** The claim and the claimed order in one statement. */
    claimNonceWithOrder: prepared((p: NonceClaim) => claimNonceWithOrder(db, p, false)),
    claimNonceForPageWithOrder: prepared((p: NonceClaim) => claimNonceWithOrder(db, p, true)),
    /**
     * The settle, its notification and the NOTIFY in one statement. The order changes only if it
     * is still as the caller read it in everything the notification row was built from:
     * pending, the same status_seq and the same callback_url (the rest of what a notification
     * carries is fixed when the order is created).
     */
    settleAndQueue: prepared((p: SettleAndQueueArgs) =>
      settleAndQueue(db, p).selectFrom(['settled', 'queued']).selectAll('settled'),
    ),
    /** The same, and the provider payment that paid the order marked paid (if still open) when the order was settled. */
    settleQueueAndMark: prepared((p: SettleAndQueueArgs & { out_trade_no: string; provider_ref: string }) =>
      settleAndQueue(db, p)
        .with('marked', () =>
          markPaymentUpdate(db, p.out_trade_no, {
            state: sql.lit('paid'),
            provider_ref: p.provider_ref,
            updated_at: p.updated_at,
          }).where(sql<boolean>`exists (select 1 from settled)`),
        )
        .selectFrom(['settled', 'queued'])
        .selectAll('settled'),
    ),
    /**
     * A payment and its order, both in one round trip (a provider's notification waits for it), each
     * as jsonb: every column of both tables is bigint, integer or text, which jsonb gives back as
     * the driver does.
     */
    paymentForReport: prepared((p: { out_trade_no: string }) =>
      raw(
        db,
        sql<{
          payment: ChannelPayment;
          order: Transaction | null;
        }>`select to_jsonb(p) as payment, to_jsonb(t) as "order"
        from channel_payments p left join transactions t on t.order_id = p.order_id where p.out_trade_no = ${p.out_trade_no}`,
      ),
    ),
    /**
     * A provider's answer to an open, committed without waiting for its WAL flush
     * (TransactionsRepo.setPaymentPayload says why): set_config(..., true) is local to the
     * statement's own transaction. A merchant-hosted order's qr_code_url in the same statement.
     * One round trip, where BEGIN, SET LOCAL, two updates and COMMIT took five.
     */
    setPaymentPayload: prepared((p: { out_trade_no: string; payload: string; updated_at: number; order_qr: boolean }) =>
      raw(
        db,
        sql<{ stored: number }>`with p as (
          update channel_payments set payload = ${p.payload}, updated_at = ${p.updated_at} where out_trade_no = ${p.out_trade_no} and state <> 'closed' returning order_id
        ), o as (
          update transactions set qr_code_url = ${p.payload}, updated_at = ${p.updated_at} where ${p.order_qr} and order_id in (select order_id from p)
        )
        select set_config('synchronous_commit', 'off', true) as setting, (select count(*) from p)::int as stored`,
      ),
    ),
    /** The notification row, with the NOTIFY riding on it: sent when (and only if) the transaction commits. */
    insertOutboxAndNotify: prepared((p: Database['outbox']) =>
      db
        .insertInto('outbox')
        .values(row(p, OUTBOX_COLUMNS))
        .returning(sql`pg_notify(${sql.lit(STATUS_NOTIFY_CHANNEL)}, ${p.order_id})`.as('notified')),
    ),
  };
}

export type PostgresStatements = ReturnType<typeof postgresStatements>;

/** `entry`, `lines`, `moves`, `days`: the ledger's entry of the settle as JSON (ledger-write.ts), or null for none. */
type SettleAndQueueArgs = SettleArgs & {
  callback_url: string;
  outbox: string;
  entry: string | null;
  lines: string | null;
  moves: string | null;
  days: string | null;
};

const ENTRY_COLUMNS = [
  'entry_key',
  'kind',
  'wallet_id',
  'order_id',
  'refund_id',
  'payout_id',
  'memo',
  'created_at',
] as const;
const LINE_COLUMNS = ['entry_key', 'line_no', 'account', 'currency', 'amount', 'created_at'] as const;

/**
 * The settle and its notification row (with the NOTIFY), as CTEs `settled` and `queued`; and the
 * ledger's entry (`posted`), its lines and the wallet balances it moves, when the order was settled
 * and the entry is new.
 */
function settleAndQueue(db: Kysely<Database>, p: SettleAndQueueArgs) {
  return db
    .with('settled', (qc) => settleUpdate(qc, p).where('callback_url', '=', p.callback_url).returningAll())
    .with('queued', (qc) =>
      qc
        .insertInto('outbox')
        .columns(OUTBOX_COLUMNS)
        .expression(
          sql`select ${columnsOf('o', OUTBOX_COLUMNS)} from json_populate_record(null::outbox, ${p.outbox}::json) as o where exists (select 1 from settled)`,
        )
        .returning(sql`pg_notify(${sql.lit(STATUS_NOTIFY_CHANNEL)}, ${p.order_id})`.as('notified')),
    )
    .with('posted', (qc) =>
      qc
        .insertInto('ledger_entries')
        .columns(ENTRY_COLUMNS)
        .expression(
          sql`select ${columnsOf('e', ENTRY_COLUMNS)} from json_populate_record(null::ledger_entries, ${p.entry}::json) as e where e.entry_key is not null and exists (select 1 from settled)`,
        )
        .onConflict((oc) => oc.column('entry_key').doNothing())
        .returning('entry_key'),
    )
    .with('posted_lines', (qc) =>
      qc
        .insertInto('ledger_lines')
        .columns(LINE_COLUMNS)
        .expression(
          sql`select ${columnsOf('l', LINE_COLUMNS)} from json_populate_recordset(null::ledger_lines, ${p.lines}::json) as l where exists (select 1 from posted)`,
        )
        .returning('line_no'),
    )
    .with('posted_balances', (qc) =>
      qc
        .insertInto('ledger_balances')
        .columns(['account', 'currency', 'balance', 'updated_at'])
        .expression(
          sql`select m.account, m.currency, m.balance, m.updated_at from json_populate_recordset(null::ledger_balances, ${p.moves}::json) as m where exists (select 1 from posted)`,
        )
        .onConflict((oc) =>
          oc.columns(['account', 'currency']).doUpdateSet({
            balance: sql`ledger_balances.balance + excluded.balance`,
            updated_at: sql`excluded.updated_at`,
          }),
        )
        .returning('account'),
    )
    .with('posted_days', (qc) =>
      qc
        .insertInto('ledger_days')
        .columns(['account', 'currency', 'day', 'amount'])
        .expression(
          // After every balance row (the count consumes posted_balances whole first): the locks in
          // the order every other unit takes them, balances then days. PostgreSQL runs the CTEs no
          // one reads last-first, which took the days first, and a refund of the same wallet (its
          // balances locked, then its days) deadlocked with it.
          sql`select d.account, d.currency, d.day, d.amount from json_populate_recordset(null::ledger_days, ${p.days}::json) as d where exists (select 1 from posted) and (select count(*) from posted_balances) >= 0`,
        )
        .onConflict((oc) =>
          oc.columns(['account', 'currency', 'day']).doUpdateSet({ amount: sql`ledger_days.amount + excluded.amount` }),
        )
        .returning('account'),
    );
}

/**
 * PostgreSQL. Every statement costs a round trip (and a write, a commit), so the request paths
 * do a whole unit in one statement with data-modifying CTEs where they can: the order with its
 * nonce, the nonce's claim with its order, the settle with its notification and NOTIFY.
 */
export class PostgresTransactions extends SqlTransactions {
  private readonly pg: PostgresStatements;

  constructor(db: Kysely<Database>) {
    super(db);
    this.pg = postgresStatements(db);
  }

  /**
   * The order and its nonce in one statement, gathered with the other creates of the same turn
   * (insertBatch). On a conflict the existing order is read by a second statement: its snapshot is
   * taken after the conflicting insert committed, which the first statement's may predate.
   */
  insert(tx: Transaction, nonce: Nonce, payment?: NewChannelPayment): StoreWrite<InsertResult> {
    // One statement, committed when it returns: committed and durable at once.
    const durable = this.insertOne(tx, nonce, payment);
    return { committed: durable, durable };
  }

  private async insertOne(tx: Transaction, nonce: Nonce, payment?: NewChannelPayment): Promise<InsertResult> {
    const inserted = await this.insertBatch.load({ tx, nonce, payment });
    if (inserted) return { created: true };
    return {
      created: false,
      existing: this.conflicting(tx, await this.findByReference(tx.user_id, tx.merchant_reference)),
    };
  }

  /**
   * The creates of one turn as one statement (one commit). The rows go in sorted by
   * (user_id, merchant_reference): two batches that both hold a reference the other has just
   * inserted (concurrent retries of the same orders) then wait for each other in the same order,
   * never in a cycle (a deadlock PostgreSQL would break only after a second).
   */
  private readonly insertBatch = new TurnBatch<NewOrder, { order_id: string }>(
    (all) => this.insertMany(all),
    (one) =>
      one.payment
        ? this.insertMany([one]).then((rows) => rows[0])
        : this.pg.insertTransactionWithNonce.first(this.db, {
            ...one.tx,
            nonce: one.nonce.nonce,
            nonce_expires_at: one.nonce.expires_at,
            nonce_used_at: one.nonce.used_at,
            nonce_created_at: one.nonce.created_at,
            nonce_page_token_hash: one.nonce.page_token_hash,
          }),
    (a) => a.tx.order_id,
    (r) => r.order_id,
  );

  private async insertMany(all: NewOrder[]): Promise<Array<{ order_id: string }>> {
    const payments: NewChannelPayment[] = [];
    for (const a of all) {
      requireColumns(a.tx, TRANSACTION_COLUMNS, 'transaction');
      requireColumns(a.nonce, NONCE_COLUMNS, 'nonce');
      if (a.payment) {
        requireColumns(a.payment, NEW_PAYMENT_COLUMNS, 'provider payment');
        payments.push(a.payment);
      }
    }
    const sorted = [...all].sort(
      (a, b) =>
        compareText(a.tx.user_id, b.tx.user_id) || compareText(a.tx.merchant_reference, b.tx.merchant_reference),
    );
    // Keys that are no column are ignored; a column the statement does not name keeps its DEFAULT.
    const orders = JSON.stringify(sorted.map((a) => a.tx));
    const nonces = JSON.stringify(sorted.map((a) => a.nonce));
    const inserted = payments.length
      ? await this.pg.insertTransactionsWithNoncesAndPayments.execute(this.db, {
          orders,
          nonces,
          payments: JSON.stringify(payments),
        })
      : await this.pg.insertTransactionsWithNonces.execute(this.db, { orders, nonces });
    return inserted.rows;
  }

  /** The claim and the order in one statement; why a claim failed is read by a second one. */
  async useNonce(nonce: string, now: number, host_type: 0 | 1, page_token_hash?: string): Promise<NonceUse> {
    const claim = page_token_hash === undefined ? this.pg.claimNonceWithOrder : this.pg.claimNonceForPageWithOrder;
    const transaction = await claim.first(this.db, { nonce, now, host_type, page_token_hash: page_token_hash ?? null });
    if (transaction) return { ok: true, transaction };
    return this.nonceRefusal(this.db, nonce, host_type);
  }

  /**
   * One round trip instead of four (BEGIN, UPDATE, INSERT with NOTIFY, COMMIT): the notification row
   * is built from the row as read with settledTransaction's changes. When the order changed since it
   * was read (a re-create changed its callback_url), the general path decides: the update, then the
   * row built from what it returned.
   */
  protected async settlePending(input: SettleInput, args: SettleArgs): Promise<Transaction | undefined> {
    const row = input.outbox(settledTransaction(input.read, input));
    requireColumns(row, OUTBOX_COLUMNS, 'outbox row');
    const outbox = JSON.stringify(row);
    const queued = { ...args, callback_url: input.read.callback_url, outbox, ...ledgerArgs(input.entry) };
    // With its provider payment marked in the same statement when there is one.
    const settled = input.payment
      ? await this.pg.settleQueueAndMark.first(this.db, { ...queued, ...input.payment })
      : await this.pg.settleAndQueue.first(this.db, queued);
    if (settled) return settled;
    // The callback_url changed since the read: the row's notification is built from the row settled,
    // with the payment marked in the same transaction, so that no crash leaves one without the other.
    return this.db.transaction().execute(async (trx) => {
      const row = await this.q.settle.first(trx, args);
      if (!row) return undefined;
      await this.pg.insertOutboxAndNotify.execute(trx, input.outbox(row));
      if (input.payment)
        await trx.executeQuery(
          markPaymentStatement(this.q, input.payment.out_trade_no, 'paid', input.payment.provider_ref, input.now),
        );
      if (input.entry) {
        const posting = postingStatements(trx, input.entry);
        if ((await trx.executeQuery(posting.entry)).numAffectedRows === 1n)
          for (const q of posting.then) await trx.executeQuery(q);
      }
      return row;
    });
  }

  /** One statement for both: a commit here is on disk. */
  override async findPayment(
    out_trade_no: string,
    _consistency: ReadConsistency,
  ): Promise<{ payment: ChannelPayment; order: Transaction | undefined } | undefined> {
    const found = await this.pg.paymentForReport.first(this.db, { out_trade_no });
    return found && { payment: found.payment, order: found.order ?? undefined };
  }

  async setPaymentPayload(
    payment: Pick<ChannelPayment, 'out_trade_no' | 'order_id'>,
    payload: string,
    now: number,
    orderQr = false,
  ): Promise<boolean> {
    const stored = await this.pg.setPaymentPayload.first(this.db, {
      out_trade_no: payment.out_trade_no,
      payload,
      updated_at: now,
      order_qr: orderQr,
    });
    return stored?.stored === 1;
  }

  claimPaymentsToCheck(now: number, lease_ms: number, limit: number): Promise<PaymentToCheck[]> {
    // Instances checking at once skip each other's locked rows.
    return this.claimPayments(
      now,
      lease_ms,
      limit,
      (rows) => sql`= any(array(${rows}))`,
      sql` for update of p skip locked`,
    );
  }

  protected async resultsOf(refs: Array<{ user_id: string; merchant_reference: string }>): Promise<OrderResult[]> {
    const { rows } = await this.pg.resultsByReferences.execute(this.db, {
      user_ids: refs.map((r) => r.user_id),
      merchant_references: refs.map((r) => r.merchant_reference),
    });
    return rows;
  }
}

/** claimNonce and the claimed order, in one statement. */
function claimNonceWithOrder(db: QueryCreator<Database>, p: NonceClaim, withPageToken: boolean) {
  return db
    .with('claimed', (qc) => claimNonce(qc, p, withPageToken))
    .selectFrom('transactions')
    .innerJoin('claimed', 'claimed.order_id', 'transactions.order_id')
    .selectAll('transactions');
}

/** Any total order will do for lock ordering; the same one in every instance. */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The settle's ledger entry as the statement's JSON parameters (nulls for none). */
function ledgerArgs(entry: JournalEntry | undefined): Pick<SettleAndQueueArgs, 'entry' | 'lines' | 'moves' | 'days'> {
  if (!entry) return { entry: null, lines: null, moves: null, days: null };
  const rows = postingRows(entry);
  return {
    entry: JSON.stringify(rows.entry),
    lines: JSON.stringify(rows.lines),
    moves: JSON.stringify(rows.balances),
    days: JSON.stringify(rows.days),
  };
}
