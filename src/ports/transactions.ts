import type { JournalEntry } from '../domain/ledger.js';
import type { OrderResult, SettleChange, Transaction } from '../domain/transaction.js';
import type { PaymentFlow, ProviderName } from './connector.js';
import type { NewOutboxRow } from './outbox.js';

// Transactions with their nonces: what the use cases need of storage for an order's life, from
// create to its final status. The settle writes the order's notification too (the outbox): one
// atomic unit, so a crash can delay a notification but never lose it.

/** A one-time nonce of an order: hosted page (host_type 0) or gateway data (host_type 1). */
export interface Nonce {
  nonce: string;
  order_id: string;
  expires_at: number;
  used_at: number | null;
  created_at: number;
  /** sha256 hex of the hosted page's visit token, set when the checkout page uses the nonce. */
  page_token_hash: string | null;
}

export type NonceUse = { ok: true; transaction: Transaction } | { ok: false; reason: 'unknown' | 'used' | 'expired' };

/** What a re-create of a pending order changes: the merchant's latest URLs and fields. */
export type PendingRenewal = Pick<
  Transaction,
  'return_url' | 'callback_url' | 'backPage_url' | 'ip' | 'product_name' | 'present_qr' | 'updated_at'
>;

export interface SettleInput extends SettleChange {
  /** The order as the caller read it: the settle happens only if it is still pending at that status_seq. */
  read: Transaction;
  /** Builds the notification row from the settled transaction; written in the same atomic unit. */
  outbox: (settled: Transaction) => NewOutboxRow;
  /**
   * The provider payment that paid the order, marked paid (if still open) once the order is
   * settled, in the same atomic unit (on PostgreSQL the settle's own statement, or the next one
   * when the order changed since it was read). Never before the settle: a payment marked paid is
   * no longer asked about, so its order must already be paid.
   */
  payment?: { out_trade_no: string; provider_ref: string };
  /**
   * The ledger's entry of the settle (a payment's: domain/ledger.ts paymentEntry), posted in the
   * same atomic unit when the order is settled, and only then; nothing when its key was posted before.
   */
  entry?: JournalEntry;
}

export type InsertResult = { created: true } | { created: false; existing: Transaction };

/**
 * A write's two moments, each with its result. `committed`: the store has made the write, and from
 * then on only a failure of the store itself (a crash, a failed commit or flush to disk) can undo
 * it. What may follow it outside is what can be done again alike after such a failure: asking a
 * provider to open the payment it records (the provider answers the same out_trade_no alike).
 * `durable`: the write is on disk. What a client is answered with, or anything that cannot be
 * taken back, waits for this. Both reject when the write fails before it is made; `durable` also
 * when it fails after. On PostgreSQL a commit is on disk: the two are one moment.
 */
export interface StoreWrite<T> {
  readonly committed: Promise<T>;
  readonly durable: Promise<T>;
}

/**
 * What a read may see. `durable`: only what is on disk (a read that may have seen a commit whose
 * flush to disk is still running answers once that flush ends), for whatever is shown or answered
 * outside. `committed`: what is committed, at once, which a crash could still take back: for a
 * caller that acts on what it read only through writes of the store (each answered once on disk,
 * which covers everything committed before it), or answers nothing that rests on it being on disk.
 * On PostgreSQL a commit is on disk: the two are the same read.
 */
export type ReadConsistency = 'durable' | 'committed';

/** 'open' until the provider reports it paid, or it is closed (by the gateway or the provider). */
export type ChannelPaymentState = 'open' | 'paid' | 'closed';

/** A payment opened at a provider for an order: one per flow and attempt, each under its own out_trade_no. */
export interface ChannelPayment {
  out_trade_no: string;
  order_id: string;
  provider: ProviderName;
  flow: PaymentFlow;
  /**
   * 1, or the n-th payment of its flow for the order: a provider whose customer can abandon a
   * payment (a bank's Cancelled) is asked for another when the customer tries again.
   */
  attempt: number;
  /** What it charges, in minor units of charged_currency (CNY for a domestic account). */
  charged_amount: number;
  charged_currency: string;
  /** What it was opened with (the order's product_name and ip then); null for payments recorded before 0007. */
  description: string | null;
  client_ip: string | null;
  /** JSAPI: the payer's openid it was opened for; null for the other flows. */
  payer: string | null;
  /** The QR text, the URL to send the browser to, or the JSAPI parameters; null until the provider answered. */
  payload: string | null;
  state: ChannelPaymentState;
  /** The provider's own id of the payment, once known (Alipay's trade_no, WeChat Pay's transaction_id). */
  provider_ref: string | null;
  created_at: number;
  updated_at: number;
  /** Reconciliation: when to ask the provider about it next, and whose claim it is under until when. */
  next_check_at: number;
  check_claimed_until: number | null;
}

export type NewChannelPayment = Omit<ChannelPayment, 'payload' | 'state' | 'provider_ref' | 'check_claimed_until'>;

/** A payment due for reconciliation, with its order. */
export interface PaymentToCheck {
  payment: ChannelPayment;
  order: Transaction;
}

/** The console's list of orders: newest first, a page at a time (keyset: after the last row shown). */
export interface TransactionSearch {
  /** Only orders of this organisation's users (a merchant's console user); every order when absent. */
  organisation_id?: number;
  wallet_id?: string;
  status?: Transaction['status'];
  payment_method?: Transaction['payment_method'];
  /** created_at from (inclusive) and to (exclusive), epoch ms. */
  from?: number;
  to?: number;
  /** An order_id, a merchant_reference, or a provider payment's out_trade_no or provider_ref, exactly. */
  text?: string;
  /** The last row of the previous page. */
  after?: { created_at: number; order_id: string };
  limit: number;
  /** How many orders a page filtered by method or wallet looks through (default SEARCH_WINDOW; tests make it small). */
  window?: number;
}

/** A page of the list, and where the next one starts (absent at the end). */
export interface SearchPage {
  rows: Transaction[];
  next?: { created_at: number; order_id: string };
}

/** Orders of one currency, method and status since a time: how many, and their amount in minor units. */
export interface SummaryRow {
  currency: string;
  payment_method: Transaction['payment_method'];
  status: Transaction['status'];
  count: number;
  amount: number;
}

/** One day (UTC), currency and method of a settlement report: the orders paid that day. */
export interface SettlementRow {
  /** The day's start, epoch ms (UTC). */
  day: number;
  wallet_id: string;
  currency: string;
  payment_method: Transaction['payment_method'];
  count: number;
  /** Minor units. */
  amount: number;
}

/** What a settlement report covers: [from, to) by the time money moved, of one organisation or of all. */
export interface SettlementFilter {
  organisation_id?: number;
  /** One wallet's only. */
  wallet_id?: string;
  from: number;
  to: number;
}

export interface TransactionsRepo {
  /** Hands out order sequence numbers, unique across every instance sharing the database. */
  nextOrderSequence(): Promise<number>;
  /**
   * Inserts the transaction and its nonce, or finds the existing order with that (user_id,
   * merchant_reference). With `payment`, the provider payment about to be opened for the new order
   * goes in the same atomic write (not inserted when the reference exists). The provider may be
   * asked to open it once the write is `committed`; the merchant is answered once it is `durable`
   * (create-transaction.ts).
   */
  insert(transaction: Transaction, nonce: Nonce, payment?: NewChannelPayment): StoreWrite<InsertResult>;
  /** Gives a still-pending order a fresh nonce (its unused ones stop working) and the latest merchant fields; undefined when not pending. */
  renewPending(order_id: string, changes: PendingRenewal, nonce: Nonce): Promise<Transaction | undefined>;
  find(order_id: string): Promise<Transaction | undefined>;
  findByReference(user_id: string, merchant_reference: string): Promise<Transaction | undefined>;
  /** The console's list (TransactionSearch). */
  /**
   * A page of the list, newest first. A filter by method or wallet (which no index serves: an
   * index per filter would slow every create) looks through at most SEARCH_WINDOW orders of the
   * scope per page: a page may then hold fewer rows than the limit and still have a next one.
   */
  search(filter: TransactionSearch): Promise<SearchPage>;
  /** The dashboard's figures: orders created since `from`, by currency, method and status. */
  summary(filter: { organisation_id?: number; from: number }): Promise<SummaryRow[]>;
  /**
   * Orders paid in [from, to) by day (of pay_time), currency and method. Only orders created since
   * `createdFrom` are looked at: an order is paid within its life, so that bound (from less the
   * longest life) finds them all through the created_at index.
   */
  paidByDay(f: SettlementFilter & { createdFrom: number }): Promise<SettlementRow[]>;
  /** Orders created in [from, to) by day (of created_at, UTC), currency, method and status: the console's charts. */
  createdByDay(f: SettlementFilter): Promise<Array<SummaryRow & { day: number }>>;
  /** The organisation an order belongs to (through its user). */
  organisationOf(order_id: string): Promise<number | undefined>;
  /** Only what a query answers with (OrderResult). */
  findResult(user_id: string, merchant_reference: string): Promise<OrderResult | undefined>;
  /**
   * Marks a nonce of a hosted (0) or merchant-hosted (1) order used; only the first call for an
   * unexpired nonce succeeds. The hosted page passes the hash of its visit token, stored with the use.
   */
  useNonce(nonce: string, now: number, host_type: 0 | 1, page_token_hash?: string): Promise<NonceUse>;
  /** The hosted page's visit: the order of a used nonce whose stored page token hash matches, and when it was used. */
  /** When the order's nonces were used: its hosted page opened (host_type 0), or its gateway data fetched (1). */
  listNonceUses(order_id: string): Promise<number[]>;
  /**
   * The order of a hosted page whose nonce was used (its page opened): for a provider's page that
   * sends the browser back with a POST, which carries no visit cookie.
   */
  findByUsedNonce(nonce: string): Promise<Transaction | undefined>;
  findCheckoutVisit(
    nonce: string,
    page_token_hash: string,
  ): Promise<{ transaction: Transaction; used_at: number } | undefined>;
  /**
   * Moves the pending order `read` to its final status (settledTransaction) and writes its
   * notification, atomically; tells other instances (PostgreSQL NOTIFY) when it commits.
   * Undefined when the order was no longer pending.
   */
  settle(input: SettleInput): Promise<Transaction | undefined>;
  setChannelState(order_id: string, channel_state: string | null, now: number): Promise<void>;
  setCancelLock(order_id: string, until: number, now: number): Promise<void>;

  /** Records the payment of an order's flow, or returns the one recorded before for that flow. */
  addPayment(payment: NewChannelPayment): Promise<ChannelPayment>;
  /**
   * Stores what the provider answered when the payment was opened; false (nothing stored) when the
   * payment was closed meanwhile. A payment already paid (its notification came first) takes it.
   * May resolve once the answer is committed, before it is on disk: the payment and its order are
   * on disk already (they were written before the provider was asked), and an answer a crash took
   * back is asked for again with the same out_trade_no, which the provider answers alike (the
   * hosted page and the gateway data open a payment that has no answer stored).
   */
  setPaymentPayload(
    payment: Pick<ChannelPayment, 'out_trade_no' | 'order_id'>,
    payload: string,
    now: number,
    orderQr?: boolean,
  ): Promise<boolean>;
  /** A provider payment by its out_trade_no, with its order, read as `consistency` says. */
  findPayment(
    out_trade_no: string,
    consistency: ReadConsistency,
  ): Promise<{ payment: ChannelPayment; order: Transaction | undefined } | undefined>;
  /** An order's payments, oldest first. */
  listPayments(order_id: string): Promise<ChannelPayment[]>;
  /** Records what the provider said: paid (with its id) or closed. Only an open payment changes. */
  markPayment(out_trade_no: string, state: 'paid' | 'closed', provider_ref: string | null, now: number): Promise<void>;
  /**
   * Claims open payments of pending orders due for a check (next_check_at passed, no live claim),
   * oldest due first, for `lease_ms`; concurrent claimers never get the same payment within a lease.
   */
  claimPaymentsToCheck(now: number, lease_ms: number, limit: number): Promise<PaymentToCheck[]>;
  /** Ends a check: the next one at `next_check_at`, the claim released. */
  schedulePaymentCheck(out_trade_no: string, next_check_at: number): Promise<void>;
  /** Pending orders created before `before`, oldest first: those past their life. */
  listExpired(before: number, limit: number): Promise<Transaction[]>;
}
