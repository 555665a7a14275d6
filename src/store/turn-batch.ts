/**
 * Gathers the calls of one turn of the event loop and runs them as one statement.
 *
 * On PostgreSQL each statement costs a round trip, a write to the socket, a wake-up of the
 * server's backend and, for a write, a commit; that is more than looking up or inserting one
 * row. Under load many requests read (or create) an order in the same turn: one statement for
 * all of them (up to `max`) replaces as many round trips and commits. On SQLite it replaces as
 * many passes through Kysely's connection layer. A call that arrives alone waits only for the end
 * of the current turn (setImmediate) and runs its single-row statement. When the gathered
 * statement fails, each call runs again on its own, so a call fails only if it fails alone: one
 * bad row cannot fail the other requests.
 */
export class TurnBatch<K, V> {
  private pending: Array<{ key: K; resolve: (v: V | undefined) => void; reject: (e: unknown) => void }> = [];

  constructor(
    /** Runs the calls of these keys in one statement; returns their rows in any order (`keyOf` finds each one's key), none for a key with no row. */
    private readonly runMany: (keys: K[]) => Promise<V[]>,
    private readonly runOne: (key: K) => Promise<V | undefined>,
    private readonly id: (key: K) => string,
    private readonly keyOf: (value: V) => string,
    private readonly max = 64,
  ) {}

  load(key: K): Promise<V | undefined> {
    return new Promise((resolve, reject) => {
      if (this.pending.push({ key, resolve, reject }) === 1) setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    const all = this.pending;
    this.pending = [];
    for (let i = 0; i < all.length; i += this.max) this.run(all.slice(i, i + this.max));
  }

  private run(batch: TurnBatch<K, V>['pending']): void {
    if (batch.length === 1) {
      const [one] = batch as [(typeof batch)[number]];
      this.runOne(one.key).then(one.resolve, one.reject);
      return;
    }
    this.runMany(batch.map((b) => b.key)).then(
      (values) => {
        const found = new Map<string, V>();
        for (const v of values) found.set(this.keyOf(v), v);
        for (const b of batch) b.resolve(found.get(this.id(b.key)));
      },
      // One bad row (a value the database refuses, a wallet deleted meanwhile) must not fail the
      // other requests: each runs again on its own.
      () => {
        for (const b of batch) this.runOne(b.key).then(b.resolve, b.reject);
      },
    );
  }
}
