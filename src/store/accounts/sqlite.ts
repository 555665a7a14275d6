import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import type { GroupCommitSqlite } from '../sqlite/group-commit.js';
import { SqlAccounts } from './base.js';

/**
 * SQLite: another process (the CLI) changes the file directly. `externalVersion` is SQLite's
 * data_version of the writing connection, which moves whenever another connection commits
 * (sqlite/open.ts reads it at most every few milliseconds).
 */
export class SqliteAccounts extends SqlAccounts {
  constructor(
    db: Kysely<Database>,
    private readonly externalVersion: () => number,
    private readonly gc?: Pick<GroupCommitSqlite, 'tryRead'>,
  ) {
    super(db);
  }

  override currentKeyOfOrder(order_id: string): Promise<string | undefined> {
    // On the reader, synchronously, without the wait for a flush in flight that a read through
    // Kysely makes (AccountsRepo.currentKeyOfOrder says why it need not): every notification
    // attempt reads it, and under load a flush is nearly always in flight.
    const read = this.gc?.tryRead<{ api_key: string }>(this.q.orderKey.bind({ order_id }));
    if (!read) return super.currentKeyOfOrder(order_id); // no reader (:memory:)
    return Promise.resolve(read.rows[0]?.api_key);
  }

  get version(): string {
    return `${this.changes}:${this.externalVersion()}`;
  }

  protected async announceChange(): Promise<void> {}
}
