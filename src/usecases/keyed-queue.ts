/**
 * Runs work one at a time per key, in this process: work for keys that share one waits for the
 * work that came before it. A check and its record (the sign-in throttle: is the account locked,
 * test the password, count the failure) then cannot be interleaved by parallel requests.
 */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<void>>();

  async run<T>(keys: readonly string[], work: () => Promise<T>): Promise<T> {
    const ks = [...new Set(keys)];
    // Only work registered before this one is waited for, so no two runs wait for each other.
    const before = Promise.all(ks.flatMap((k) => this.tails.get(k) ?? []));
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    const tail = before.then(() => finished);
    for (const k of ks) this.tails.set(k, tail);
    try {
      await before;
      return await work();
    } finally {
      finish();
      for (const k of ks) if (this.tails.get(k) === tail) this.tails.delete(k);
    }
  }

  /** Keys with work running or waiting (for a test). */
  get size(): number {
    return this.tails.size;
  }
}
