import { closeSync, fdatasync, fdatasyncSync, fsyncSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import type { CompiledQuery, QueryResult } from 'kysely';
import { StatementCache } from './statement-cache.js';
import { beginWhenFree, FifoLock } from './write-lock.js';

/**
 * Group commit for better-sqlite3, with a separate read-only connection (the Kysely driver on top
 * of it is dialect.ts). One file over 300 lines: the batch, the write lock, the flush and the
 * reader are one state machine, read together. Why it is built so, and what was tried:
 * docs/design/group-commit.md.
 *
 * - Every write joins one open "batch" transaction on the writing connection (a Kysely transaction
 *   is a SAVEPOINT in it, so it still rolls back alone); the batch commits as soon as the
 *   connection is free, and concurrent requests share its fsync.
 * - An operation that used the writer resolves only once the batch it saw is on disk: the
 *   guarantee of one COMMIT per request, kept here per Kysely operation so that no store method
 *   can forget it.
 * - The connection runs with synchronous=NORMAL; the WAL is then flushed with fdatasync on libuv's
 *   thread pool (one flush in flight; the next batch fills meanwhile and commits before the flushed
 *   one is answered). A failed flush refuses everything after it.
 * - A writer that waits for the commit alone (writeAtomically's 'committed') has its batch committed
 *   at once, even during a flush; that batch's durable waiters wait for the next flush.
 * - Reads outside transactions go to the read-only connection (WAL: committed data only). A read
 *   that ran while a flush was in flight answers once that flush ends: nobody is told of data that
 *   is not on disk. `:memory:` runs everything on the writer.
 * - A write that finds SQLite's write lock taken (the checkpoint thread, the CLI) waits on timers,
 *   up to the connection's busy timeout, not in SQLite's busy handler, which sleeps the event loop.
 * - Statements are prepared once; waiters for the write lock are served first come, first served.
 */
type Waiter = { resolve: () => void; reject: (e: unknown) => void };

export class GroupCommitSqlite {
  private readonly statements: StatementCache;
  private reader: StatementCache | null = null;
  private readonly writeLock = new FifoLock();
  private batchOpen = false;
  private commitScheduled = false;
  private waiters: Waiter[] = [];
  /** Waiting for the batch's COMMIT only, not its flush (writeAtomically's `until: 'committed'`). */
  private committing: Waiter[] = [];
  private depth = 0;
  private walFd: number | null = null;
  /** The WAL flush in flight, if any: it covers every commit made before it started. */
  private syncing: Promise<void> | null = null;
  /**
   * Set when a batch was committed while a flush was in flight (for a writer waiting for the commit
   * alone): that flush may not cover it, so another starts when it ends, for `unflushed`.
   */
  private dirty = false;
  /** Waiting for the flush after the one in flight (durable waiters of batches committed during it, and readers of them). */
  private unflushed: Waiter[] = [];
  /** Set when a flush failed: what was committed may not be on disk, so nothing more is acknowledged. */
  private failed: Error | null = null;
  /** Told the time of each statement of a `writeAtomically` unit (tracing: Kysely's log does not see them). */
  onUnitStatement: ((ms: number) => void) | null = null;
  /** Told the number of atomic units in each batch committed (the operator's metrics). */
  onCommit: ((size: number) => void) | null = null;
  /** How long a write waits for another connection's write lock: the connection's own busy_timeout. */
  private readonly busyTimeoutMs: number;

  /**
   * @param walFile when given, the connection must run with synchronous=NORMAL in WAL mode: the
   *   driver flushes this file (the database's `-wal`) after every commit, off the event loop.
   */
  constructor(
    readonly sqlite: BetterSqlite3.Database,
    private readonly walFile: string | null = null,
    /** How a file is flushed to disk; tests replace it to hold or fail a flush. */
    private readonly flushFile: (fd: number) => Promise<void> = fdatasyncAsync,
  ) {
    this.statements = new StatementCache(sqlite);
    this.busyTimeoutMs = Number(sqlite.pragma('busy_timeout', { simple: true }));
    sqlite.pragma('busy_timeout = 0');
  }

  /** Sends read-only statements outside transactions to `reader`, a read-only connection to the same WAL database. */
  attachReader(reader: BetterSqlite3.Database): void {
    this.reader = new StatementCache(reader);
  }

  /** Resolves once everything written so far is committed to disk. */
  durable(): Promise<void> {
    if (this.failed) return Promise.reject(this.failed);
    if (this.batchOpen) {
      return new Promise((resolve, reject) => {
        this.waiters.push({ resolve, reject });
        this.scheduleCommit();
      });
    }
    if (this.dirty) return this.nextFlush();
    return this.syncing ?? Promise.resolve();
  }

  /** Resolves once the flush after the one in flight has ended. */
  private nextFlush(): Promise<void> {
    return new Promise((resolve, reject) => this.unflushed.push({ resolve, reject }));
  }

  /** Resolves once everything committed so far is on disk (a reader may have seen it). */
  flushed(): Promise<void> | null {
    if (this.failed) return Promise.reject(this.failed);
    if (this.dirty) return this.nextFlush();
    return this.syncing;
  }

  lock(): Promise<void> {
    return this.writeLock.take();
  }

  unlock(): void {
    this.writeLock.release();
    if (this.batchOpen) this.scheduleCommit();
  }

  private scheduleCommit(): void {
    // While a flush is in flight the batch keeps filling and the flush's end commits it, unless a
    // writer waits for the commit alone (writeAtomically's 'committed'): that one is not kept
    // waiting for a flush it does not need.
    if (this.commitScheduled || (this.syncing && this.committing.length === 0)) return;
    this.commitScheduled = true;
    // setImmediate: the requests already waiting for the connection join this batch first.
    setImmediate(() => void this.commitBatch());
  }

  private async commitBatch(): Promise<void> {
    await this.lock();
    this.commitScheduled = false;
    this.commitLocked();
  }

  /** Commits the batch and starts its flush. The caller holds the lock; this gives it up. */
  private commitLocked(): void {
    const waiters = this.waiters;
    this.waiters = [];
    const seen = this.committing;
    this.committing = [];
    let committed = false;
    try {
      if (this.batchOpen) {
        this.batchOpen = false;
        try {
          this.control('COMMIT');
          committed = true;
          this.onCommit?.(waiters.length + seen.length);
        } catch (e) {
          if (this.sqlite.inTransaction) this.sqlite.exec('ROLLBACK');
          for (const w of [...waiters, ...seen]) w.reject(e);
          return;
        }
      }
    } finally {
      this.unlock();
    }
    for (const w of seen) w.resolve();
    if (!committed || this.walFile === null) {
      for (const w of waiters) w.resolve();
      return;
    }
    if (this.syncing) {
      // Committed during a flush: its durable waiters wait for the next one.
      this.dirty = true;
      this.unflushed.push(...waiters);
      return;
    }
    this.startFlush(waiters);
  }

  /** Flushes the WAL for `waiters` and for every batch committed during the previous flush. */
  private startFlush(waiters: Waiter[]): void {
    const covered = [...this.unflushed.splice(0), ...waiters];
    this.dirty = false;
    this.syncing = this.flushWal().then(
      () => {
        this.syncing = null;
        // The batch that filled meanwhile is committed, and its flush started, before this one's
        // requests are answered: answering them keeps the event loop busy for a while, and the
        // disk can work on the next flush meanwhile instead of waiting for it.
        if (!this.commitScheduled && this.batchOpen && this.writeLock.tryTake()) this.commitLocked();
        if (this.syncing === null && this.dirty) this.startFlush([]);
        for (const w of covered) w.resolve();
        if (this.batchOpen || this.waiters.length > 0) this.scheduleCommit();
      },
      (e: unknown) => {
        this.failed = new Error(
          `the database's write-ahead log could not be flushed to disk, so nothing more is acknowledged; restart the gateway: ${e instanceof Error ? e.message : String(e)}`,
        );
        this.syncing = null;
        this.dirty = false;
        for (const w of [
          ...covered,
          ...this.unflushed.splice(0),
          ...this.waiters.splice(0),
          ...this.committing.splice(0),
        ])
          w.reject(this.failed);
      },
    );
  }

  private flushWal(): Promise<void> {
    try {
      return this.flushFile(this.openWal());
    } catch (e) {
      return Promise.reject(e);
    }
  }

  private openBatch(): void {
    if (this.batchOpen) return;
    this.control('BEGIN IMMEDIATE');
    this.batchOpen = true;
  }

  /** Opens the batch now, unless another connection holds SQLite's write lock (then false). */
  private tryOpenBatch(): boolean {
    try {
      this.openBatch();
      return true;
    } catch (e) {
      if ((e as { code?: unknown }).code === 'SQLITE_BUSY') return false;
      throw e;
    }
  }

  /** Opens the batch for the holder of the lock, once another connection's write lock is free (write-lock.ts). */
  async openBatchWaiting(): Promise<void> {
    if (this.batchOpen || this.failed) return;
    await beginWhenFree(
      () => this.tryOpenBatch(),
      () => this.openBatch(),
      this.busyTimeoutMs,
    );
  }

  get inBatch(): boolean {
    return this.batchOpen;
  }

  /** Whether the statement writes (so that its holder must open the batch first). */
  writes(query: CompiledQuery): boolean {
    return !this.prepare(query.sql).readonly;
  }

  prepare(sql: string): BetterSqlite3.Statement {
    return this.statements.get(sql);
  }

  /**
   * Runs the query on the reader if there is one and the statement only reads (SQLite's own
   * verdict, from the writer's prepared statement); otherwise returns undefined and the caller
   * must take the write lock and use `execute`.
   */
  tryRead<R>(query: CompiledQuery): QueryResult<R> | undefined {
    if (!this.reader) return undefined;
    if (this.failed) throw this.failed;
    const classified = this.prepare(query.sql);
    if (!classified.readonly || !classified.reader) return undefined;
    return { rows: this.reader.get(query.sql).all(...(query.parameters as unknown[])) as R[] };
  }

  /** Runs the query on the writer; the caller holds the write lock. */
  execute<R>(query: CompiledQuery): QueryResult<R> {
    if (this.failed) throw this.failed;
    const stmt = this.prepare(query.sql);
    if (!stmt.readonly) this.openBatch();
    const params = query.parameters as unknown[];
    if (stmt.reader) return { rows: stmt.all(...params) as R[] };
    const { changes, lastInsertRowid } = stmt.run(...params);
    return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
  }

  /**
   * Runs `work` as one atomic unit on the writer, synchronously (a SAVEPOINT in the batch, rolled
   * back alone if it throws), and resolves once the batch is on disk: what a Kysely transaction
   * does, without Kysely's asynchronous connection and transaction layers (for the hottest write).
   * With `until: 'committed'` it resolves once the batch is committed (readers see it), before its
   * flush: only for data that may be lost in a crash, because it can be had again (a provider's
   * answer that the provider gives again for the same request).
   * `written` is told the unit's result as soon as it is in the open batch, before the batch's
   * commit and flush: from then on only a failed commit or flush, or a crash, can undo it.
   */
  async writeAtomically<T>(
    work: (run: <R>(query: CompiledQuery<R>) => QueryResult<R>) => T,
    until: 'durable' | 'committed' = 'durable',
    written?: (out: T) => void,
  ): Promise<T> {
    // With the connection free the unit runs at once, within the call (no turn of the microtask
    // queue for a lock nobody holds): `written` is told before the call returns.
    if (!this.writeLock.tryTake()) await this.lock();
    let out: T;
    try {
      if (!this.batchOpen && !this.failed && !this.tryOpenBatch()) await this.openBatchWaiting();
      this.begin();
      try {
        const told = this.onUnitStatement;
        out = work(
          told === null
            ? (query) => this.execute(query)
            : (query) => {
                const t0 = performance.now();
                try {
                  return this.execute(query);
                } finally {
                  told(performance.now() - t0);
                }
              },
        );
      } catch (e) {
        this.rollback();
        throw e;
      }
      this.release();
    } finally {
      this.unlock();
    }
    try {
      written?.(out);
    } catch {
      // The listener's failure is its own: the unit is written, and is committed with its batch.
    }
    await (until === 'committed' ? this.committed() : this.durable());
    return out;
  }

  /** Resolves once everything written so far is committed (visible to readers), perhaps not yet on disk. */
  private committed(): Promise<void> {
    if (this.failed) return Promise.reject(this.failed);
    if (!this.batchOpen) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.committing.push({ resolve, reject });
      // Nobody holds the connection: the batch commits now, in this turn, rather than once the rest
      // of the event loop's turn has run (setImmediate), which under load is milliseconds at the tail.
      if (this.writeLock.tryTake()) this.commitLocked();
      else this.scheduleCommit();
    });
  }

  begin(): void {
    this.openBatch();
    this.control(`SAVEPOINT gc${++this.depth}`);
  }

  release(): void {
    this.control(`RELEASE gc${this.depth--}`);
  }

  rollback(): void {
    const name = `gc${this.depth--}`;
    this.control(`ROLLBACK TO ${name}`);
    this.control(`RELEASE ${name}`);
  }

  /**
   * Runs a transaction-control statement from the statement cache: `exec` would parse it anew
   * every time. (The time these take is mostly COMMIT writing the batch to the WAL, not parsing.)
   */
  private control(sql: string): void {
    this.prepare(sql).run();
  }

  /** The WAL's file descriptor; the first time, also makes the WAL's directory entry durable. */
  private openWal(): number {
    if (this.walFd === null) {
      const fd = openSync(this.walFile!, 'r');
      const dir = openSync(dirname(this.walFile!), 'r');
      try {
        fsyncSync(dir);
      } finally {
        closeSync(dir);
      }
      this.walFd = fd;
    }
    return this.walFd;
  }

  async close(): Promise<void> {
    // A flush's end may start the next one (for batches committed during it).
    while (this.syncing) await this.syncing.catch(() => {});
    this.reader?.db.close();
    this.reader = null;
    if (this.batchOpen && this.sqlite.inTransaction) {
      this.sqlite.exec('COMMIT');
      for (const w of this.committing.splice(0)) w.resolve();
      if (this.walFile !== null && !this.failed) {
        fdatasyncSync(this.openWal());
      }
      for (const w of this.waiters.splice(0)) w.resolve();
    }
    this.batchOpen = false;
    if (this.walFd !== null) closeSync(this.walFd);
    this.walFd = null;
    this.sqlite.close();
  }
}

function fdatasyncAsync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fdatasync(fd, (e) => (e ? reject(e) : resolve())));
}
