import type { Transaction } from '../domain/transaction.js';

// Wake-ups of long polls (a query with is_block=1, the hosted page) when an order's status
// changes, in this process and, on PostgreSQL, across instances. Implementations: src/signals.

/** Where a signal without a row reads the order. The TransactionsRepo is one. */
export interface OrderReader {
  find(order_id: string): Promise<Transaction | undefined>;
}

/**
 * What a wait needs of an abort signal. An AbortSignal is one; so is the HTTP layer's lighter
 * ClientGone (no AbortController and EventTarget listener per long poll).
 */
export interface WaitAbort {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: { handleEvent(): void }, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: { handleEvent(): void }): void;
}

export interface StatusSignals {
  /**
   * Tells every waiter of this order in this process. `order` is the row as changed, when the
   * caller has it (it saves the waiters a read); without it, one read per order is shared.
   * Waiters in other instances learn of a status change from the store: on PostgreSQL the settle
   * sends NOTIFY on STATUS_NOTIFY_CHANNEL in the transaction of the change.
   */
  publish(order_id: string, order?: Transaction): void;
  /** A point in the stream of signals: taken before reading an order, and given to wait(). */
  mark(): number;
  /**
   * Waits for a pending order to change. A change between the caller's read of the order and this
   * call must not be missed: when the order was signalled since `since` (a mark() taken before that
   * read), or `since` is not given, the order is read again once (with `reader`, in one read shared
   * by the waiters that subscribed meanwhile). Resolves with the row once the order is no longer
   * pending; with undefined after timeoutMs, on abort or when the signals close (the caller reads
   * the order if it needs its current state then).
   */
  wait(
    order_id: string,
    timeoutMs: number,
    reader: OrderReader,
    abort?: WaitAbort,
    since?: number,
  ): Promise<Transaction | undefined>;
  /** Number of waiters, for metrics and tests. */
  readonly waiting: number;
  close(): Promise<void>;
}

/** PostgreSQL NOTIFY channel carrying the order_id of every status change: the store sends, the signals listen. */
export const STATUS_NOTIFY_CHANNEL = 'gateway_status';

/** PostgreSQL NOTIFY channel telling every instance to forget cached users, wallets and rates. */
export const ADMIN_NOTIFY_CHANNEL = 'gateway_admin';
