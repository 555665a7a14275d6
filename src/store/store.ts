import type { Selectable, Insertable } from 'kysely';
import type {
  NotificationAttemptsTable,
  NoncesTable,
  OutboxTable,
  RefundsTable,
  TransactionsTable,
  WalletsTable,
} from './schema.js';
import type { FinalStatus } from '../domain/transaction.js';
import type { Engine } from './migrations.js';

export type Transaction = Selectable<TransactionsTable>;

/** The columns of an order that a query's answer is made of, and whose key signs it. */
export const RESULT_COLUMNS = [
  'order_id',
  'user_id',
  'wallet_id',
  'merchant_reference',
  'payment_method',
  'status',
  'currency',
  'amount',
  'amount_cny',
  'currency_rate',
  'created_at',
  'pay_time',
  'status_message',
  'msgId',
] as const satisfies readonly (keyof Transaction)[];
export type OrderResult = Pick<Transaction, (typeof RESULT_COLUMNS)[number]>;
export type NewTransaction = Insertable<TransactionsTable>;
export type Wallet = Selectable<WalletsTable>;
export type Nonce = Insertable<NoncesTable>;
export type Refund = Selectable<RefundsTable>;
/** A refund as reserved: its status and updated_at are set by the store. */
export type NewRefund = Omit<Refund, 'refund_status' | 'updated_at'>;
export type OutboxRow = Selectable<OutboxTable>;
export type NewOutboxRow = Insertable<OutboxTable>;
export type NotificationAttempt = Selectable<NotificationAttemptsTable>;

export interface UserRecord {
  user_id: string;
  user_name: string;
  user_status: string;
  organisation_id: number;
  organisation_name: string;
}

export type NonceUse =
  | { ok: true; transaction: Transaction }
  | { ok: false; reason: 'unknown' | 'used' | 'expired' };

export type RefundReservation = { ok: true } | { ok: false; reason: 'duplicate' | 'insufficient' | 'not_paid' };

export interface SettleInput {
  order_id: string;
  to: FinalStatus;
  now: number;
  status_message?: string | null;
  msgId?: string | null;
  /** Builds the notification row from the settled transaction; written in the same database transaction. */
  outbox: (settled: Transaction) => NewOutboxRow;
  /**
   * The order as the caller read it while pending, if it did: PostgreSQL then settles in one
   * statement, building the notification row from this row with the settle's changes applied.
   */
  read?: Transaction;
}

export interface ClaimInput {
  /** This instance's id, written to claimed_by. */
  claimed_by: string;
  now: number;
  /** The claim lasts until now + lease_ms; after that another instance may claim the row again. */
  lease_ms: number;
  /** At most this many rows. */
  limit: number;
  /** At most this many rows for one callback_host... */
  per_host: number;
  /** ...or fewer for these hosts, which already have attempts in flight here (0: none of theirs). */
  host_limits?: ReadonlyMap<string, number>;
}

export interface AttemptRecord {
  event_id: string;
  /** The claim this attempt was made under (claimed_by, claimed_until as returned by the claim). */
  claimed_by: string;
  claimed_until: number;
  attempt: Omit<NotificationAttempt, 'attempt_id' | 'event_id'>;
  /** Acknowledged with `sent`: the row becomes delivered at `now`. Otherwise it is due again at next_attempt_at. */
  delivered: boolean;
  next_attempt_at: number;
  now: number;
}

/** What the CLI (and later the console) may change of a wallet; a field left out is kept. */
export interface WalletChanges {
  wallet_name?: string;
  payment_methods?: string;
  legacy_signatures?: 0 | 1;
}

export interface NewMerchant {
  organisation_name: string;
  user_id: string;
  user_name: string;
  wallet: Omit<Insertable<WalletsTable>, 'user_id'>;
  now: number;
}

/**
 * Everything the gateway stores. Each method is one atomic unit: a method that writes several rows
 * does so in one database transaction, so a crash leaves either all of them or none.
 */
export interface Store {
  readonly engine: Engine;
  /** Changes whenever users, wallets or rates may have changed (here, in the CLI, or on another instance). */
  readonly credentialsVersion: string;

  findUser(user_id: string): Promise<UserRecord | undefined>;
  findWallet(wallet_id: string): Promise<Wallet | undefined>;
  listWallets(user_id: string): Promise<Wallet[]>;
  findRate(currency_from: string, currency_to: string): Promise<number | undefined>;

  /** Hands out order sequence numbers, unique across every instance sharing the database. */
  nextOrderSequence(): Promise<number>;
  /** Inserts the transaction and its nonce, or returns the existing order with that merchant_reference. */
  insertTransaction(tx: NewTransaction, nonce: Nonce): Promise<{ created: true } | { created: false; existing: Transaction }>;
  /** Gives a still-pending order a fresh nonce (older unused ones stop working) and the latest merchant URLs. */
  renewPending(
    order_id: string,
    changes: Pick<NewTransaction, 'return_url' | 'callback_url' | 'backPage_url' | 'ip' | 'product_name' | 'present_qr' | 'updated_at'>,
    nonce: Nonce,
  ): Promise<Transaction | undefined>;
  findTransaction(order_id: string): Promise<Transaction | undefined>;
  findTransactionByReference(user_id: string, merchant_reference: string): Promise<Transaction | undefined>;
  /** Only what a query answers with (RESULT_COLUMNS): a third of the row, and none of its long URLs. */
  findResultByReference(user_id: string, merchant_reference: string): Promise<OrderResult | undefined>;
  /**
   * Marks a nonce of a hosted (0) or merchant-hosted (1) order used; only the first call for an unexpired nonce succeeds.
   * The hosted page passes the hash of its visit token, stored with the use in the same statement.
   */
  useNonce(nonce: string, now: number, host_type: number, page_token_hash?: string): Promise<NonceUse>;
  /** The hosted page's visit: the order of a used nonce whose stored page token hash matches, and when it was used. */
  findCheckoutVisit(nonce: string, page_token_hash: string): Promise<{ transaction: Transaction; used_at: number } | undefined>;
  /** Moves a pending order to a final status and writes its notification; undefined when it was not pending. */
  settle(input: SettleInput): Promise<Transaction | undefined>;
  setChannelState(order_id: string, channel_state: string | null, now: number): Promise<void>;
  setCancelLock(order_id: string, until: number, now: number): Promise<void>;

  /** Records a refund as pending and adds it to the order's refunded total, atomically and within bounds. */
  reserveRefund(refund: NewRefund): Promise<RefundReservation>;
  /** The channel confirmed the refund. */
  completeRefund(refund_id: string, now: number): Promise<void>;
  /** The channel refused the refund: it no longer counts, and the same request may be tried again. */
  failRefund(refund_id: string, now: number): Promise<void>;
  listRefunds(order_id: string): Promise<Refund[]>;
  /** Refunds still 'pending' (reserved, channel outcome not recorded) last changed before `updatedBefore`, oldest first. */
  listPendingRefunds(updatedBefore: number, limit: number): Promise<Refund[]>;

  // Result notifications (the transactional outbox; rows are written by settle).
  /**
   * Claims due, unclaimed (or lease-expired) pending notifications for this instance, oldest due
   * first, within the per-host limits. On PostgreSQL concurrent claimers skip each other's locked
   * rows, so every row goes to exactly one instance per lease.
   */
  claimDueNotifications(input: ClaimInput): Promise<OutboxRow[]>;
  /** Frees every claim on a pending notification (see outbox-queries.ts: only for the sole server of the database). */
  releaseClaims(): Promise<number>;
  /**
   * Records an attempt and, if the claim is still this attempt's, ends it in the same transaction:
   * delivered, or due again at next_attempt_at. Returns false when the claim had been lost (a resend
   * or an expired lease): the attempt is recorded and counted but the row is left to its new owner.
   */
  recordAttempt(input: AttemptRecord): Promise<boolean>;
  findOutbox(event_id: string): Promise<OutboxRow | undefined>;
  /** An order's notifications, by seq. */
  listNotifications(order_id: string): Promise<OutboxRow[]>;
  /** A notification's attempts, oldest first. */
  listAttempts(event_id: string): Promise<NotificationAttempt[]>;
  /** Makes a notification due now and unclaimed, delivered or not (a resend). */
  requeueNow(event_id: string, now: number): Promise<OutboxRow | undefined>;

  // Administration (the CLI).
  createMerchant(m: NewMerchant): Promise<{ organisation_id: number }>;
  createWallet(wallet: Insertable<WalletsTable>): Promise<void>;
  setApiKey(wallet_id: string, api_key: string): Promise<boolean>;
  /** The wallet as changed, or undefined when there is no such wallet. */
  updateWallet(wallet_id: string, changes: WalletChanges): Promise<Wallet | undefined>;
  setUserStatus(user_id: string, user_status: 'active' | 'disabled'): Promise<boolean>;
  setRate(currency_from: string, currency_to: string, rate_micros: number, now: number): Promise<void>;

  close(): Promise<void>;
}
