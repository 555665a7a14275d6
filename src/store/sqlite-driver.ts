import type BetterSqlite3 from 'better-sqlite3';
import {
  CompiledQuery,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
} from 'kysely';

/**
 * A Kysely driver for one better-sqlite3 connection with group commit.
 *
 * Durable SQLite (synchronous=FULL) pays one fsync per COMMIT, which caps a server at a few
 * thousand writes a second. Here every write joins one open "batch" transaction: a Kysely
 * transaction becomes a SAVEPOINT inside it (so it still rolls back alone), and the batch is
 * committed, with one fsync, as soon as the connection is free. Callers wait for `durable()`
 * before they answer, so nothing is acknowledged before it is on disk, exactly as with one
 * COMMIT per request, but concurrent requests share the fsync.
 *
 * It also keeps prepared statements (the stock driver prepares every query again) and queues
 * waiters for the connection first-come first-served in O(1) each.
 */
export class GroupCommitSqlite {
  private readonly statements = new Map<string, BetterSqlite3.Statement>();
  private readonly queue: Array<() => void> = [];
  private locked = false;
  private batchOpen = false;
  private commitScheduled = false;
  private waiters: Array<{ resolve: () => void; reject: (e: unknown) => void }> = [];
  private depth = 0;

  constructor(readonly sqlite: BetterSqlite3.Database) {}

  /** Resolves once everything written so far is committed to disk. */
  durable(): Promise<void> {
    if (!this.batchOpen) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.waiters.push({ resolve, reject });
      this.scheduleCommit();
    });
  }

  async lock(): Promise<void> {
    if (!this.locked) {
      this.locked = true;
      return;
    }
    await new Promise<void>((resolve) => this.queue.push(resolve));
  }

  unlock(): void {
    const next = this.queue.shift();
    if (next) next();
    else this.locked = false;
    if (this.batchOpen) this.scheduleCommit();
  }

  private scheduleCommit(): void {
    if (this.commitScheduled) return;
    this.commitScheduled = true;
    // setImmediate: the requests already waiting for the connection join this batch first.
    setImmediate(() => void this.commitBatch());
  }

  private async commitBatch(): Promise<void> {
    await this.lock();
    this.commitScheduled = false;
    const waiters = this.waiters;
    this.waiters = [];
    try {
      if (this.batchOpen) {
        this.batchOpen = false;
        try {
          this.sqlite.exec('COMMIT');
        } catch (e) {
          if (this.sqlite.inTransaction) this.sqlite.exec('ROLLBACK');
          for (const w of waiters) w.reject(e);
          return;
        }
      }
      for (const w of waiters) w.resolve();
    } finally {
      this.unlock();
    }
  }

  private openBatch(): void {
    if (this.batchOpen) return;
    this.sqlite.exec('BEGIN IMMEDIATE');
    this.batchOpen = true;
  }

  prepare(sql: string): BetterSqlite3.Statement {
    let stmt = this.statements.get(sql);
    if (!stmt) {
      stmt = this.sqlite.prepare(sql);
      if (this.statements.size > 500) this.statements.clear();
      this.statements.set(sql, stmt);
    }
    return stmt;
  }

  execute<R>(query: CompiledQuery): QueryResult<R> {
    const stmt = this.prepare(query.sql);
    if (!stmt.readonly) this.openBatch();
    const params = query.parameters as unknown[];
    if (stmt.reader) return { rows: stmt.all(...params) as R[] };
    const { changes, lastInsertRowid } = stmt.run(...params);
    return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
  }

  begin(): void {
    this.openBatch();
    this.sqlite.exec(`SAVEPOINT gc${++this.depth}`);
  }

  release(): void {
    this.sqlite.exec(`RELEASE gc${this.depth--}`);
  }

  rollback(): void {
    const name = `gc${this.depth--}`;
    this.sqlite.exec(`ROLLBACK TO ${name}`);
    this.sqlite.exec(`RELEASE ${name}`);
  }

  close(): void {
    if (this.batchOpen && this.sqlite.inTransaction) this.sqlite.exec('COMMIT');
    this.batchOpen = false;
    this.sqlite.close();
  }
}

class Connection implements DatabaseConnection {
  constructor(private readonly gc: GroupCommitSqlite) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return this.gc.execute<R>(query);
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming is not supported by the SQLite store');
  }
}

class GroupCommitDriver implements Driver {
  private readonly connection: Connection;

  constructor(private readonly gc: GroupCommitSqlite) {
    this.connection = new Connection(gc);
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    await this.gc.lock();
    return this.connection;
  }

  async beginTransaction(): Promise<void> {
    this.gc.begin();
  }

  async commitTransaction(): Promise<void> {
    this.gc.release();
  }

  async rollbackTransaction(): Promise<void> {
    this.gc.rollback();
  }

  async releaseConnection(): Promise<void> {
    this.gc.unlock();
  }

  async destroy(): Promise<void> {
    this.gc.close();
  }
}

export class GroupCommitSqliteDialect implements Dialect {
  constructor(private readonly gc: GroupCommitSqlite) {}
  createDriver(): Driver {
    return new GroupCommitDriver(this.gc);
  }
  createQueryCompiler() {
    return new SqliteQueryCompiler();
  }
  createAdapter() {
    return new SqliteAdapter();
  }
  createIntrospector(db: Kysely<any>) {
    return new SqliteIntrospector(db);
  }
}
