// Wakes long polls (query with is_block=1, the hosted page) when an order's status changes.
// Waiters live in a Map of Sets: tens of thousands of them cost one closure each, and waking or
// timing one out is O(1) (event-emitter listeners cost a linear scan to remove).

export interface StatusSignals {
  /**
   * Tells every waiter of this order in this process. Waiters in other instances learn of a status
   * change from the store: on PostgreSQL, Store.settle sends NOTIFY in the transaction of the change
   * and PgStatusSignals listens for it.
   */
  publish(order_id: string): void;
  /** Resolves true when the order is signalled, false after timeoutMs. */
  wait(order_id: string, timeoutMs: number, abort?: AbortSignal): Promise<boolean>;
  /** Number of waiters, for metrics and tests. */
  readonly waiting: number;
  close(): Promise<void>;
}

export class LocalStatusSignals implements StatusSignals {
  private readonly waiters = new Map<string, Set<(signalled: boolean) => void>>();
  private count = 0;
  private closed = false;

  get waiting(): number {
    return this.count;
  }

  publish(order_id: string): void {
    this.wakeLocal(order_id);
  }

  /**
   * Wakes every waiter in this process, so each re-reads its order: used when signals may have been
   * missed (the cross-instance listener reconnected) and on shutdown.
   */
  wakeAll(): void {
    for (const [order_id] of this.waiters) this.wakeLocal(order_id);
  }

  /** Wakes waiters in this process only (used by the cross-instance listener too). */
  wakeLocal(order_id: string): void {
    const set = this.waiters.get(order_id);
    if (!set) return;
    this.waiters.delete(order_id);
    for (const wake of set) wake(true);
  }

  wait(order_id: string, timeoutMs: number, abort?: AbortSignal): Promise<boolean> {
    // After close, a woken long poll that looks again must not wait again: it answers with what it read.
    if (this.closed) return Promise.resolve(false);
    return new Promise((resolve) => {
      let set = this.waiters.get(order_id);
      if (!set) {
        set = new Set();
        this.waiters.set(order_id, set);
      }
      const entry = (signalled: boolean) => {
        clearTimeout(timer);
        abort?.removeEventListener('abort', onAbort);
        this.count--;
        resolve(signalled);
      };
      const remove = () => {
        const s = this.waiters.get(order_id);
        if (s?.delete(entry) && s.size === 0) this.waiters.delete(order_id);
      };
      const onAbort = () => {
        remove();
        entry(false);
      };
      const timer = setTimeout(() => {
        remove();
        entry(false);
      }, timeoutMs);
      set.add(entry);
      this.count++;
      abort?.addEventListener('abort', onAbort, { once: true });
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    this.wakeAll();
  }
}
