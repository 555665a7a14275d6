// The two waits of group-commit.ts that are not for a commit: for the write lock of this process's
// writing connection, first come first served, and for SQLite's own write lock when another
// connection holds it (the checkpoint thread, the CLI), on timers rather than in SQLite's busy
// handler, which would sleep the whole event loop.

/** A first-come, first-served lock of one holder. */
export class FifoLock {
  private readonly queue: Array<() => void> = [];
  private held = false;

  /** Takes the lock now if nobody holds it. */
  tryTake(): boolean {
    if (this.held) return false;
    this.held = true;
    return true;
  }

  async take(): Promise<void> {
    if (this.tryTake()) return;
    await new Promise<void>((resolve) => this.queue.push(resolve));
  }

  /** Hands the lock to the next in line, or frees it. */
  release(): void {
    const next = this.queue.shift();
    if (next) next();
    else this.held = false;
  }
}

/**
 * Runs `tryBegin` until it stops finding SQLite's lock taken (it returns false), waiting 1, 2, 4, 8,
 * then 16 ms between tries, for at most `busyTimeoutMs`; then `begin` once more, which fails with
 * SQLite's own SQLITE_BUSY, as it would have after SQLite's own wait.
 */
export async function beginWhenFree(tryBegin: () => boolean, begin: () => void, busyTimeoutMs: number): Promise<void> {
  const deadline = performance.now() + busyTimeoutMs;
  for (let delay = 1; !tryBegin(); delay = Math.min(delay * 2, 16)) {
    if (performance.now() >= deadline) return begin();
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}
