import type { AccountsRepo } from './accounts.js';
import type { ConsoleRepo } from './console.js';
import type { LedgerRepo } from './ledger.js';
import type { OutboxRepo } from './outbox.js';
import type { ReconciliationRepo } from './reconciliation.js';
import type { PayoutsRepo } from './payouts.js';
import type { RefundsRepo } from './refunds.js';
import type { RetentionRepo } from './retention.js';
import type { TransactionsRepo } from './transactions.js';

// Everything the gateway stores, one repository per aggregate. Each method is one atomic unit: a
// method that writes several rows does so in one database transaction, so a crash leaves all of
// them or none. Implementations: src/store (SQLite and PostgreSQL).

export type Engine = 'sqlite' | 'postgres';

/** What the store shows the operator's metrics: the engine's own figures. */
export interface StoreInstruments {
  /** PostgreSQL: the connection pool's use now. */
  pool?: () => { total: number; idle: number; waiting: number };
  /** SQLite: `observe` is told the size (atomic units) of every batch committed. */
  observeCommits?: (observe: (size: number) => void) => void;
}

export interface Store {
  readonly engine: Engine;
  readonly transactions: TransactionsRepo;
  readonly refunds: RefundsRepo;
  readonly outbox: OutboxRepo;
  readonly accounts: AccountsRepo;
  readonly console: ConsoleRepo;
  readonly ledger: LedgerRepo;
  readonly payouts: PayoutsRepo;
  readonly reconciliation: ReconciliationRepo;
  /** Migrations this code has that the database has not applied (a readiness check: it also asks the database). */
  pendingMigrations(): Promise<string[]>;
  readonly instruments?: StoreInstruments;
  readonly retention: RetentionRepo;
  close(): Promise<void>;
}

/**
 * The database cannot be reached or written now: no writable primary (a failover under way, a
 * restart), or the connection was lost mid-statement. Nothing of the failed unit was kept unless
 * its commit had already reached the database; a caller that retries the same request (same
 * merchant_reference, same refund reference) is safe.
 */
export class DatabaseUnavailable extends Error {
  override readonly name = 'DatabaseUnavailable';
}

/**
 * The database undid a unit because it collided with a concurrent one (a deadlock, a
 * serialization failure): nothing of that unit was written (what the request wrote before it
 * stays), and the same request sent again is safe. A single statement outside a transaction is
 * retried by the store before this is thrown.
 */
export class DatabaseConflict extends Error {
  override readonly name = 'DatabaseConflict';
}

/** The database away for a moment or a unit it undid: what a person (or a provider) may simply try again. */
export function isDatabaseAway(e: unknown): e is DatabaseUnavailable | DatabaseConflict {
  return e instanceof DatabaseUnavailable || e instanceof DatabaseConflict;
}
