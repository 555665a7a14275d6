import { sql } from 'kysely';
import { ADMIN_NOTIFY_CHANNEL } from '../../ports/signals.js';
import { SqlAccounts } from './base.js';

/**
 * PostgreSQL: a change is announced to every instance with NOTIFY on ADMIN_NOTIFY_CHANNEL; each
 * instance's listener (src/signals/pg-status-signals.ts) calls noteExternalChange.
 */
export class PostgresAccounts extends SqlAccounts {
  get version(): string {
    return String(this.changes);
  }

  protected async announceChange(): Promise<void> {
    await sql`select pg_notify(${ADMIN_NOTIFY_CHANNEL}, '')`.execute(this.db);
  }
}
