// Wakes long polls (query with is_block=1, the hosted page) when an order's status changes.
//
// Waiters live in a Map of per-order entries holding a Set: tens of thousands of them cost one
// small record each, and waking or dropping one is O(1) (event-emitter listeners cost a linear scan
// to remove). Deadlines are kept in buckets swept by one timer, not one Timeout per waiter.
//
// A waiter learns the order's new row, not just that it changed. A settle in this process hands
// the settled row to publish(), so its waiters need no read at all; a signal without a row (another
// instance's NOTIFY, a listener reconnect) makes one read per order, shared by all its waiters.
// Waiters stay registered while that read runs, so a change during it is not missed. A new waiter
// reads its order again only if it was signalled since the caller read it (mark()).
import { isPending, type Transaction } from '../domain/transaction.js';
import type { OrderReader, StatusSignals, WaitAbort } from '../ports/signals.js';

/** Deadline bucket width: a waiter times out up to this much later than asked. */
const SWEEP_MS = 50;
/** Signalled orders remembered for mark(); a mark older than what is remembered means "read again". */
const REMEMBERED_SIGNALS = 4096;

interface OrderEntry {
  readonly order_id: string;
  readonly waiters: Set<Waiter>;
  reader: OrderReader;
  /** A read of the order is in flight. */
  reading: boolean;
  /** Something happened after the read in flight began (a signal, a new waiter): read again after it. */
  again: boolean;
}

/** One waiting long poll. It is its own abort listener (handleEvent), so it needs no closure. */
class Waiter {
  constructor(
    readonly owner: LocalStatusSignals,
    readonly entry: OrderEntry,
    readonly due: number,
    readonly resolve: (order: Transaction | undefined) => void,
    readonly abort: WaitAbort | undefined,
  ) {}

  handleEvent(): void {
    this.owner.drop(this, undefined);
  }
}

export class LocalStatusSignals implements StatusSignals {
  private readonly orders = new Map<string, OrderEntry>();
  /** Waiters by deadline bucket (the bucket's end, in ms). */
  private readonly buckets = new Map<number, Set<Waiter>>();
  private sweepTimer: NodeJS.Timeout | undefined;
  private sweepAt = Infinity;
  private count = 0;
  private closed = false;
  /** Signals so far; mark() returns it. */
  private epoch = 0;
  /** The latest signal of recently signalled orders, oldest first. */
  private readonly signalled = new Map<string, number>();
  /** Signals up to this one may have been forgotten. */
  private forgotten = 0;
  /** The last wakeAll: any order may have changed before it. */
  private everything = 0;

  get waiting(): number {
    return this.count;
  }

  publish(order_id: string, order?: Transaction): void {
    this.wakeLocal(order_id, order);
  }

  mark(): number {
    return this.epoch;
  }

  /**
   * Makes every order with waiters in this process be read again (one read per order): used when
   * signals may have been missed (the cross-instance listener reconnected).
   */
  wakeAll(): void {
    this.everything = ++this.epoch;
    for (const entry of this.orders.values()) this.check(entry);
  }

  /** Wakes waiters in this process only (used by the cross-instance listener too). */
  wakeLocal(order_id: string, order?: Transaction): void {
    this.remember(order_id);
    const entry = this.orders.get(order_id);
    if (!entry) return;
    if (order && !isPending(order)) this.settle(entry, order);
    else this.check(entry);
  }

  wait(
    order_id: string,
    timeoutMs: number,
    reader: OrderReader,
    abort?: WaitAbort,
    since?: number,
  ): Promise<Transaction | undefined> {
    // After close, a long poll answers at once with what it reads.
    if (this.closed || abort?.aborted) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      let entry = this.orders.get(order_id);
      if (!entry) {
        entry = { order_id, waiters: new Set(), reader, reading: false, again: false };
        this.orders.set(order_id, entry);
      }
      const due = Math.ceil((Date.now() + Math.max(0, timeoutMs)) / SWEEP_MS) * SWEEP_MS;
      const waiter = new Waiter(this, entry, due, resolve, abort);
      entry.waiters.add(waiter);
      let bucket = this.buckets.get(due);
      if (!bucket) {
        bucket = new Set();
        this.buckets.set(due, bucket);
      }
      bucket.add(waiter);
      this.count++;
      abort?.addEventListener('abort', waiter, { once: true });
      if (due < this.sweepAt) this.scheduleSweep(due);
      // Subscribed first, so a change from now on is signalled; one before now is read.
      if (since === undefined || this.signalledSince(order_id, since)) this.check(entry);
    });
  }

  private signalledSince(order_id: string, since: number): boolean {
    return since < this.forgotten || since < this.everything || (this.signalled.get(order_id) ?? 0) > since;
  }

  private remember(order_id: string): void {
    const epoch = ++this.epoch;
    this.signalled.delete(order_id);
    this.signalled.set(order_id, epoch);
    if (this.signalled.size > REMEMBERED_SIGNALS) {
      const [oldest, at] = this.signalled.entries().next().value as [string, number];
      this.signalled.delete(oldest);
      this.forgotten = at;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.sweepTimer);
    this.sweepAt = Infinity;
    for (const entry of [...this.orders.values()]) for (const w of entry.waiters) this.drop(w, undefined);
  }

  /** Removes a waiter and answers it. */
  drop(w: Waiter, order: Transaction | undefined): void {
    if (!w.entry.waiters.delete(w)) return;
    if (w.entry.waiters.size === 0 && this.orders.get(w.entry.order_id) === w.entry)
      this.orders.delete(w.entry.order_id);
    this.release(w, order);
  }

  /** The order has left pending: answer all its waiters with the row. */
  private settle(entry: OrderEntry, order: Transaction): void {
    if (this.orders.get(entry.order_id) === entry) this.orders.delete(entry.order_id);
    const waiters = [...entry.waiters];
    entry.waiters.clear();
    for (const w of waiters) this.release(w, order);
  }

  /** Answers a waiter already taken out of its order's set. */
  private release(w: Waiter, order: Transaction | undefined): void {
    const bucket = this.buckets.get(w.due);
    if (bucket?.delete(w) && bucket.size === 0) this.buckets.delete(w.due);
    w.abort?.removeEventListener('abort', w);
    this.count--;
    w.resolve(order);
  }

  /** Reads the order (once for all its waiters) and answers them if it is no longer pending. */
  private check(entry: OrderEntry): void {
    entry.again = true;
    if (entry.reading) return;
    entry.reading = true;
    void this.readLoop(entry);
  }

  private async readLoop(entry: OrderEntry): Promise<void> {
    try {
      while (entry.again && entry.waiters.size > 0) {
        entry.again = false;
        let order: Transaction | undefined;
        try {
          order = await entry.reader.find(entry.order_id);
        } catch {
          // Unknown state: the waiters read the order themselves and report what they find.
          for (const w of entry.waiters) this.drop(w, undefined);
          return;
        }
        if (!order) {
          for (const w of entry.waiters) this.drop(w, undefined);
          return;
        }
        if (!isPending(order)) {
          this.settle(entry, order);
          return;
        }
      }
    } finally {
      entry.reading = false;
    }
  }

  private scheduleSweep(at: number): void {
    clearTimeout(this.sweepTimer);
    this.sweepAt = at;
    this.sweepTimer = setTimeout(() => this.sweep(), Math.max(0, at - Date.now()));
  }

  /** Times out every waiter whose bucket has ended, and sets the timer for the next bucket. */
  private sweep(): void {
    this.sweepTimer = undefined;
    this.sweepAt = Infinity;
    const now = Date.now();
    let next = Infinity;
    for (const [due, bucket] of this.buckets) {
      if (due <= now) {
        for (const w of bucket) this.drop(w, undefined);
        this.buckets.delete(due);
      } else if (due < next) {
        next = due;
      }
    }
    if (next !== Infinity && !this.closed) this.scheduleSweep(next);
  }
}
