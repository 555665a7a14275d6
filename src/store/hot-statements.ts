import { sql, type Kysely, type QueryCreator } from 'kysely';
import type { Database } from './schema.js';
import { prepared, row, type QueryExecutorLike } from './prepared.js';
import { STATUS_NOTIFY_CHANNEL } from './notify-channels.js';
import { RESULT_COLUMNS, type NewOutboxRow, type NewTransaction, type Nonce, type NonceUse } from './store.js';

// The statements of the request paths, compiled once per store (prepared.ts), and the column lists
// their inserts are built from.

/**
 * The columns of an order as inserted, in parameter order. Listed here, never taken from the keys
 * of the caller's object; the check below fails to compile if a column of NewTransaction is missing,
 * and test/store/prepared-statements.test.ts compares the list with the table.
 */
export const TRANSACTION_COLUMNS = [
  'order_id',
  'user_id',
  'wallet_id',
  'merchant_reference',
  'payment_method',
  'host_type',
  'amount',
  'currency',
  'amount_cny',
  'currency_rate',
  'product_name',
  'return_url',
  'callback_url',
  'backPage_url',
  'ip',
  'present_qr',
  'status',
  'status_message',
  'msgId',
  'channel',
  'channel_ref',
  'qr_code_url',
  'channel_state',
  'refunded_amount',
  'cancel_locked_until',
  'status_seq',
  'created_at',
  'updated_at',
  'pay_time',
] as const satisfies readonly (keyof NewTransaction)[];

export const NONCE_COLUMNS = ['nonce', 'order_id', 'expires_at', 'used_at', 'created_at', 'page_token_hash'] as const satisfies readonly (keyof Nonce)[];

export const OUTBOX_COLUMNS = [
  'event_id',
  'order_id',
  'seq',
  'callback_url',
  'callback_host',
  'payload',
  'delivery_status',
  'attempts',
  'next_attempt_at',
  'claimed_by',
  'claimed_until',
  'created_at',
  'delivered_at',
] as const satisfies readonly (keyof NewOutboxRow)[];

/** `true` only when the list names every key of T (a compile error otherwise). */
type Covers<T, L extends readonly unknown[]> = [Exclude<keyof T, L[number]>] extends [never] ? true : never;
const columnListsAreComplete: [Covers<NewTransaction, typeof TRANSACTION_COLUMNS>, Covers<Nonce, typeof NONCE_COLUMNS>, Covers<NewOutboxRow, typeof OUTBOX_COLUMNS>] = [
  true,
  true,
  true,
];
void columnListsAreComplete;

/** The CTE insert's arguments: the order's columns and its nonce's (created_at would clash). */
interface OrderWithNonce extends NewTransaction {
  nonce: string;
  nonce_expires_at: number;
  nonce_used_at: number | null;
  nonce_created_at: number;
  nonce_page_token_hash: string | null;
}

interface NonceClaim {
  nonce: string;
  now: number;
  host_type: number;
  page_token_hash: string | null;
}

/**
 * The statements of the request paths (create, query, gateway data, the hosted page, settle),
 * built once per store: `prepared` compiles each on first use, for this store's dialect.
 */
export function hotStatements(db: Kysely<Database>) {
  return {
    user: prepared((p: { user_id: string }) =>
      db
        .selectFrom('users')
        .innerJoin('organisations', 'organisations.organisation_id', 'users.organisation_id')
        .select(['users.user_id', 'users.user_name', 'users.user_status', 'users.organisation_id', 'organisations.organisation_name'])
        .where('users.user_id', '=', p.user_id),
    ),
    wallet: prepared((p: { wallet_id: string }) => db.selectFrom('wallets').selectAll().where('wallet_id', '=', p.wallet_id)),
    rate: prepared((p: { currency_from: string; currency_to: string }) =>
      db.selectFrom('rates').select('rate_micros').where('currency_from', '=', p.currency_from).where('currency_to', '=', p.currency_to),
    ),
    transactionById: prepared((p: { order_id: string }) => db.selectFrom('transactions').selectAll().where('order_id', '=', p.order_id)),
    transactionByReference: prepared((p: { user_id: string; merchant_reference: string }) =>
      db.selectFrom('transactions').selectAll().where('user_id', '=', p.user_id).where('merchant_reference', '=', p.merchant_reference),
    ),
    resultByReference: prepared((p: { user_id: string; merchant_reference: string }) =>
      db.selectFrom('transactions').select(RESULT_COLUMNS).where('user_id', '=', p.user_id).where('merchant_reference', '=', p.merchant_reference),
    ),
    /** PostgreSQL: the results of many (user_id, merchant_reference) pairs, given as two arrays, in one statement. */
    resultsByReferences: prepared((p: { user_ids: string[]; merchant_references: string[] }) =>
      db
        .selectFrom('transactions')
        .select(RESULT_COLUMNS)
        .where(sql<boolean>`(user_id, merchant_reference) in (select * from unnest(${p.user_ids}::text[], ${p.merchant_references}::text[]))`),
    ),
    /** SQLite: the same, the pairs given as one JSON array of [user_id, merchant_reference]. */
    resultsByReferencesJson: prepared((p: { pairs: string }) =>
      db
        .selectFrom('transactions')
        .select(RESULT_COLUMNS)
        .where(sql<boolean>`(user_id, merchant_reference) in (select json_extract(value, '$[0]'), json_extract(value, '$[1]') from json_each(${p.pairs}))`),
    ),
    /**
     * SQLite: the order, or nothing when its (user_id, merchant_reference) exists; the number of
     * changed rows tells which (no RETURNING: it costs SQLite a temporary table per insert).
     */
    insertTransaction: prepared((p: NewTransaction) =>
      db
        .insertInto('transactions')
        .values(row(p, TRANSACTION_COLUMNS))
        .onConflict((oc) => oc.columns(['user_id', 'merchant_reference']).doNothing()),
    ),
    insertNonce: prepared((p: Nonce) => db.insertInto('nonces').values(row(p, NONCE_COLUMNS))),
    /** PostgreSQL: the order and, if it was inserted, its nonce (see insertTransactionPg). */
    insertTransactionWithNonce: prepared((p: OrderWithNonce) =>
      db
        .with('inserted', (db) =>
          db
            .insertInto('transactions')
            .values(row(p, TRANSACTION_COLUMNS))
            .onConflict((oc) => oc.columns(['user_id', 'merchant_reference']).doNothing())
            .returning('order_id'),
        )
        .insertInto('nonces')
        .columns(['nonce', 'order_id', 'expires_at', 'used_at', 'created_at', 'page_token_hash'])
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
     * PostgreSQL: many orders and the nonces of those inserted, in one statement. Each is a JSON
     * array of rows keyed by column name; the database gives every value its column's type.
     */
    insertTransactionsWithNonces: prepared((p: { orders: string; nonces: string }) =>
      db
        .with('inserted', (db) =>
          db
            .insertInto('transactions')
            .expression(sql`select * from json_populate_recordset(null::transactions, ${p.orders}::json)`)
            .onConflict((oc) => oc.columns(['user_id', 'merchant_reference']).doNothing())
            .returning('order_id'),
        )
        .with('inserted_nonces', (db) =>
          db
            .insertInto('nonces')
            .expression(sql`select n.* from json_populate_recordset(null::nonces, ${p.nonces}::json) as n where n.order_id in (select order_id from inserted)`)
            .returning('nonce'),
        )
        .selectFrom('inserted')
        .select('order_id'),
    ),
    claimNonce: prepared((p: NonceClaim) => claimNonce(db, p, false)),
    claimNonceForPage: prepared((p: NonceClaim) => claimNonce(db, p, true)),
    /** PostgreSQL: the claim and the claimed order in one statement (see useNoncePg). */
    claimNonceWithOrder: prepared((p: NonceClaim) => claimNonceWithOrder(db, p, false)),
    claimNonceForPageWithOrder: prepared((p: NonceClaim) => claimNonceWithOrder(db, p, true)),
    nonceRefusal: prepared((p: { nonce: string; host_type: number }) =>
      db
        .selectFrom('nonces')
        .innerJoin('transactions', 'transactions.order_id', 'nonces.order_id')
        .select(['nonces.used_at', 'nonces.expires_at'])
        .where('nonces.nonce', '=', p.nonce)
        .where('transactions.host_type', '=', p.host_type),
    ),
    checkoutVisit: prepared((p: { nonce: string; page_token_hash: string }) =>
      db.selectFrom('nonces').select(['order_id', 'used_at']).where('nonce', '=', p.nonce).where('page_token_hash', '=', p.page_token_hash),
    ),
    settle: prepared((p: SettleArgs) =>
      db
        .updateTable('transactions')
        .set(settleChanges(p))
        .where('order_id', '=', p.order_id)
        .where('status', '=', 'pending')
        .returningAll(),
    ),
    /**
     * PostgreSQL: settle's update, its outbox row and the NOTIFY in one statement (see
     * KyselyStore.settle). The row changes only if it is still as the caller read it in everything
     * the outbox row was built from: pending, the same status_seq and the same callback_url (the
     * rest of what a notification carries is fixed when the order is created).
     */
    settleAndQueue: prepared((p: SettleArgs & { read_seq: number; callback_url: string; outbox: string }) =>
      db
        .with('settled', (qc) =>
          qc
            .updateTable('transactions')
            .set(settleChanges(p))
            .where('order_id', '=', p.order_id)
            .where('status', '=', 'pending')
            .where('status_seq', '=', p.read_seq)
            .where('callback_url', '=', p.callback_url)
            .returningAll(),
        )
        .with('queued', (qc) =>
          qc
            .insertInto('outbox')
            .expression(sql`select o.* from json_populate_record(null::outbox, ${p.outbox}::json) as o where exists (select 1 from settled)`)
            .returning(sql`pg_notify(${STATUS_NOTIFY_CHANNEL}, ${p.order_id})`.as('notified')),
        )
        .selectFrom(['settled', 'queued'])
        .selectAll('settled'),
    ),
    insertOutbox: prepared((p: NewOutboxRow) => db.insertInto('outbox').values(row(p, OUTBOX_COLUMNS))),
    insertOutboxAndNotify: prepared((p: NewOutboxRow) =>
      db
        .insertInto('outbox')
        .values(row(p, OUTBOX_COLUMNS))
        .returning(sql`pg_notify(${STATUS_NOTIFY_CHANNEL}, ${p.order_id})`.as('notified')),
    ),
  };
}

export type HotStatements = ReturnType<typeof hotStatements>;

interface SettleArgs {
  order_id: string;
  to: string;
  status_message: string | null;
  msgId: string | null;
  now: number;
}

/** What a settle changes; `settledAs` in kysely-store.ts applies the same to a row read before. */
function settleChanges(p: SettleArgs) {
  return {
    status: p.to,
    status_message: p.status_message,
    msgId: p.msgId,
    status_seq: sql<number>`status_seq + 1`,
    pay_time: p.now,
    updated_at: p.now,
  };
}

/** Marks an unused, unexpired nonce of an order of this host_type used; returns its order_id. */
function claimNonce(db: QueryCreator<Database>, p: NonceClaim, withPageToken: boolean) {
  return db
    .updateTable('nonces')
    .set(withPageToken ? { used_at: p.now, page_token_hash: p.page_token_hash } : { used_at: p.now })
    .where('nonce', '=', p.nonce)
    .where('used_at', 'is', null)
    .where('expires_at', '>', p.now)
    .where((eb) =>
      eb.exists(
        eb.selectFrom('transactions').select('order_id').whereRef('transactions.order_id', '=', 'nonces.order_id').where('host_type', '=', p.host_type),
      ),
    )
    .returning('order_id');
}

/** claimNonce and the claimed order, in one statement (PostgreSQL). */
function claimNonceWithOrder(db: QueryCreator<Database>, p: NonceClaim, withPageToken: boolean) {
  return db
    .with('claimed', (db) => claimNonce(db, p, withPageToken))
    .selectFrom('transactions')
    .innerJoin('claimed', 'claimed.order_id', 'transactions.order_id')
    .selectAll('transactions');
}

/** Why a nonce could not be claimed: unknown (or of the other host_type), used, or expired. */
export async function nonceRefusal(q: HotStatements, db: QueryExecutorLike, nonce: string, host_type: number): Promise<NonceUse> {
  const refused = await q.nonceRefusal.first(db, { nonce, host_type });
  if (!refused) return { ok: false, reason: 'unknown' };
  return { ok: false, reason: refused.used_at !== null ? 'used' : 'expired' };
}
