import {
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
} from 'kysely';
import type { GroupCommitSqlite } from './group-commit.js';

// Kysely's view of the group-commit connection (group-commit.ts): every Kysely operation gets a
// Connection that reads on the reader until it needs the writer, and whose release waits for the
// commit of what it wrote or saw.

/**
 * One Kysely operation's view of the database: a single statement, a transaction, or a
 * `db.connection()` block. It reads on the reader until it first needs the writer; from then on
 * it holds the write lock until it is released, and its release waits for the commit.
 */
class Connection implements DatabaseConnection {
  private holdsWriter = false;

  constructor(private readonly gc: GroupCommitSqlite) {}

  async useWriter(): Promise<void> {
    if (this.holdsWriter) return;
    await this.gc.lock();
    this.holdsWriter = true;
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (!this.holdsWriter) {
      const read = this.gc.tryRead<R>(query);
      if (read) {
        // It may have seen a commit whose flush is still in flight.
        const flushed = this.gc.flushed();
        if (flushed) await flushed;
        return read;
      }
      await this.useWriter();
    }
    if (!this.gc.inBatch && this.gc.writes(query)) await this.gc.openBatchWaiting();
    return this.gc.execute<R>(query);
  }

  /** Gives up the write lock, then waits until what this operation wrote or saw on the writer is on disk. */
  async release(): Promise<void> {
    if (!this.holdsWriter) return;
    this.holdsWriter = false;
    this.gc.unlock();
    await this.gc.durable();
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming is not supported by the SQLite store');
  }
}

class GroupCommitDriver implements Driver {
  /**
   * Released Connection objects, for reuse: Kysely remembers every connection it is handed in a
   * WeakSet, so a fresh object per statement would be one more WeakSet entry (and garbage) each time.
   */
  private readonly idle: Connection[] = [];

  constructor(private readonly gc: GroupCommitSqlite) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return this.idle.pop() ?? new Connection(this.gc);
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await (connection as Connection).useWriter();
    await this.gc.openBatchWaiting();
    this.gc.begin();
  }

  async commitTransaction(): Promise<void> {
    this.gc.release();
  }

  async rollbackTransaction(): Promise<void> {
    this.gc.rollback();
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    const c = connection as Connection;
    try {
      await c.release();
    } finally {
      if (this.idle.length < 1000) this.idle.push(c);
    }
  }

  async destroy(): Promise<void> {
    await this.gc.close();
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
  // Kysely's Dialect interface: an introspector reads any schema.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  createIntrospector(db: Kysely<any>) {
    return new SqliteIntrospector(db);
  }
}
