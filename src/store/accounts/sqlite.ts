import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
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
  ) {
    super(db);
  }

  get version(): string {
    return `${this.changes}:${this.externalVersion()}`;
  }

  protected async announceChange(): Promise<void> {}
}
