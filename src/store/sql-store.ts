import { Migrator, type Kysely } from 'kysely';
import type { Engine, Store, StoreInstruments } from '../ports/store.js';
import type { SqlAccounts } from './accounts/base.js';
import { SqlConsole } from './console/sql-console.js';
import { SqlPayouts } from './payouts/sql-payouts.js';
import { SqlReconciliation } from './reconciliation/sql-reconciliation.js';
import { SqlLedger } from './ledger/sql-ledger.js';
import { migrationProvider } from './migrations.js';
import type { SqlOutbox } from './outbox/base.js';
import type { SqlRefunds } from './refunds/base.js';
import type { SqlRetention } from './retention/base.js';
import type { Database } from './schema.js';
import type { SqlTransactions } from './transactions/base.js';

export interface SqlRepos {
  transactions: SqlTransactions;
  refunds: SqlRefunds;
  outbox: SqlOutbox;
  accounts: SqlAccounts;
  retention: SqlRetention;
}

/**
 * The store on one database: its repositories, built by open.ts for the engine. `db` is the
 * Kysely instance, for migrations, tools and tests; the gateway's code goes through the repositories.
 */
export class SqlStore implements Store {
  readonly transactions: SqlTransactions;
  readonly refunds: SqlRefunds;
  readonly outbox: SqlOutbox;
  readonly accounts: SqlAccounts;
  readonly console: SqlConsole;
  readonly ledger: SqlLedger;
  readonly payouts: SqlPayouts;
  readonly reconciliation: SqlReconciliation;
  readonly retention: SqlRetention;

  constructor(
    readonly engine: Engine,
    readonly db: Kysely<Database>,
    repos: SqlRepos,
    private readonly onClose: () => Promise<void> = async () => {},
    readonly instruments: StoreInstruments = {},
  ) {
    this.transactions = repos.transactions;
    this.refunds = repos.refunds;
    this.outbox = repos.outbox;
    this.accounts = repos.accounts;
    this.retention = repos.retention;
    this.console = new SqlConsole(db);
    this.ledger = new SqlLedger(db, engine);
    this.payouts = new SqlPayouts(db, engine);
    this.reconciliation = new SqlReconciliation(db, engine);
  }

  async migrate(): Promise<void> {
    const migrator = new Migrator({ db: this.db, provider: migrationProvider(this.engine) });
    const { error, results } = await migrator.migrateToLatest();
    if (error) {
      const failed = results?.find((r) => r.status === 'Error');
      throw new Error(
        `database migration ${failed?.migrationName ?? ''} failed: ${error instanceof Error ? error.message : JSON.stringify(error)}`,
      );
    }
  }

  async pendingMigrations(): Promise<string[]> {
    const migrator = new Migrator({ db: this.db, provider: migrationProvider(this.engine) });
    return (await migrator.getMigrations()).filter((m) => m.executedAt === undefined).map((m) => m.name);
  }

  async close(): Promise<void> {
    await this.db.destroy();
    await this.onClose();
  }
}
