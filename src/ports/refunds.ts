import type { RefundFeeRule } from '../domain/fees.js';
import type { Refund } from '../domain/refund.js';
import type { SettlementFilter, SettlementRow } from './transactions.js';
import type { Transaction } from '../domain/transaction.js';

// Refunds of paid orders: the amount is reserved against the order before the channel is asked,
// then the channel's answer recorded.

/** A refund as reserved: its status and updated_at are set by the store. */
export type NewRefund = Omit<Refund, 'refund_status' | 'updated_at' | 'channel_amount'>;

/** What the reservation takes from the books: the plan's rule for the fee a refund gives back. */
export interface RefundBooks {
  refund_fee: RefundFeeRule;
}

export type RefundReservation =
  | { ok: true }
  | { ok: false; reason: 'duplicate' | 'insufficient' | 'not_paid' }
  /** The wallet's pending and available balances could not cover `need` (the refund less the fee it gives back). */
  | { ok: false; reason: 'wallet'; need: number; pending: number; available: number };

/** The console's list of refunds: newest first, a page after the last row of the one before. */
export interface RefundSearch {
  /** Refunds of this organisation's orders only (a merchant's console user); every refund when absent. */
  organisation_id?: number;
  refund_status?: Refund['refund_status'];
  /** created_at from (inclusive) and to (exclusive), epoch ms. */
  from?: number;
  to?: number;
  after?: { created_at: number; refund_id: string };
  limit: number;
}

/** A refund with what the list shows of its order. */
export type RefundListRow = Refund &
  Pick<Transaction, 'currency' | 'payment_method' | 'wallet_id' | 'user_id' | 'merchant_reference'>;

export interface RefundsRepo {
  /** The console's list (RefundSearch); `next` is where the next page starts, absent at the end. */
  search(f: RefundSearch): Promise<{ rows: RefundListRow[]; next?: { created_at: number; refund_id: string } }>;
  /**
   * Records the refund as pending and adds it to the order's refunded total, atomically: only for a
   * paid order, within its amount, and unless a standing refund has the same dedupe_key. In the same
   * unit its amount is taken from the wallet (its `refund_reserved` entry), or nothing is done.
   */
  reserve(refund: NewRefund, books: RefundBooks): Promise<RefundReservation>;
  /** Fixes what the refund asks of its provider, before it is asked (and asked again with the same). */
  setChannelAmount(refund_id: string, channel_amount: number, now: number): Promise<void>;
  /** A pending refund was asked about and is still pending: it goes to the back of listPending's queue. */
  touch(refund_id: string, now: number): Promise<void>;
  /** The channel confirmed the refund (with its `refund_made` entry). */
  complete(refund_id: string, now: number): Promise<void>;
  /** The channel refused the refund: it no longer counts (its `refund_failed` entry gives back what was taken), and the same request may be made again. */
  fail(refund_id: string, now: number): Promise<void>;
  /** An order's refunds, oldest first. */
  listByOrder(order_id: string): Promise<Refund[]>;
  /** The refunds of these orders, by order and then oldest first. */
  listByOrders(order_ids: readonly string[]): Promise<Refund[]>;
  /** Refunds that succeeded in [from, to), by day (of their success), the order's currency and method. */
  succeededByDay(f: SettlementFilter): Promise<SettlementRow[]>;
  /** How many refunds are pending with their channel (the operator's metrics). */
  countPending(): Promise<number>;
  /** Refunds still pending that were made before `createdBefore`, the longest waiting first (the operators' list). */
  listPendingSince(createdBefore: number, limit: number): Promise<Refund[]>;
  /** Refunds still pending, last changed before `updatedBefore`, oldest first. */
  listPending(updatedBefore: number, limit: number): Promise<Refund[]>;
}
