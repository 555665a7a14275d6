import type { JournalEntry } from '../domain/ledger.js';
import type {
  ExceptionAction,
  ExceptionKind,
  ExceptionStatus,
  KnownPayment,
  KnownRefund,
  MoneyException,
  ProviderStatement,
  StatementDay,
  StoredStatementLine,
} from '../domain/reconciliation.js';

export type {
  ExceptionStatus,
  LineVerdictName,
  MoneyException,
  ProviderStatement,
  StatementDay,
  StoredStatementLine,
} from '../domain/reconciliation.js';

// Reconciliation's records: the providers' statements as imported (raw file, lines, verdicts),
// the import job's days, and the queue of money exceptions. A statement, its lines, the
// exceptions it raises and its fee entries are written in one unit, once per account and day.

/** The gateway's paid payment (or made refund) of a day that no statement line has named. */
export interface UnmatchedRecord {
  wallet_id: string;
  order_id: string;
  out_trade_no: string;
  refund_id: string | null;
  amount: number;
  currency: string;
  at: number;
}

export interface ExceptionFilter {
  status?: ExceptionStatus;
  kind?: ExceptionKind;
  wallet_id?: string;
  limit?: number;
}

export interface ReconciliationRepo {
  findStatement(provider: string, merchant_id: string, statement_date: string): Promise<ProviderStatement | undefined>;
  /**
   * Begins the import of an account's day: the statement (`importing`) with its raw file
   * (compressed), unless the day was imported (`imported`) or is being imported by an import that
   * began at or after `staleBefore` (`busy`). One left `importing` before that is discarded (its
   * lines, and the open exceptions it raised) and begun again.
   */
  beginStatement(
    statement: ProviderStatement,
    raw: Uint8Array,
    staleBefore: number,
  ): Promise<{ kind: 'begun' } | { kind: 'imported' | 'busy'; statement: ProviderStatement }>;
  /**
   * One unit: a part of the statement's lines and the exceptions they raise (an exception whose key
   * is there already is kept, and the line names it).
   */
  saveStatementPart(statement_id: string, lines: StoredStatementLine[], exceptions: MoneyException[]): Promise<void>;
  /** One unit: a statement still `importing` removed, with its lines and the open exceptions it raised. */
  discardStatement(statement_id: string): Promise<void>;
  /**
   * One unit: the statement whole (its counts and fees), its fee entries, and the open exceptions
   * with `found.keys` resolved (what earlier statements lacked and this one has); false, and
   * nothing done, when it was not `importing`.
   */
  finishStatement(
    statement: ProviderStatement,
    entries: JournalEntry[],
    found?: { keys: ReadonlySet<string>; by: string; note: string },
  ): Promise<boolean>;
  statementById(statement_id: string): Promise<ProviderStatement | undefined>;
  statementRaw(statement_id: string): Promise<Uint8Array | undefined>;
  statementLines(statement_id: string, limit: number, after?: number): Promise<StoredStatementLine[]>;
  listStatements(filter: { wallet_id?: string; limit?: number }): Promise<ProviderStatement[]>;
  /** What the gateway holds of each payment a statement names, by out_trade_no. */
  knownPayments(
    out_trade_nos: readonly string[],
  ): Promise<Map<string, KnownPayment & { wallet_id: string; provider: string }>>;
  knownRefunds(refund_ids: readonly string[]): Promise<Map<string, KnownRefund & { wallet_id: string }>>;
  /** The wallets' payments of the provider paid in [from, to), and their refunds made then, that no statement line names. */
  unmatched(provider: string, wallet_ids: readonly string[], from: number, to: number): Promise<UnmatchedRecord[]>;
  /** Records the exception, or finds the one with its key; `raised` false when it was there. */
  raiseException(e: MoneyException): Promise<{ raised: boolean; exception: MoneyException }>;
  findException(exception_id: string): Promise<MoneyException | undefined>;
  listExceptions(filter: ExceptionFilter): Promise<MoneyException[]>;
  /** Open exceptions per kind. */
  openCounts(): Promise<Array<{ kind: ExceptionKind; count: number }>>;
  /**
   * Claims an account's day for an import until `claimed_until` (on every instance, one at a time):
   * false when it is imported, claimed by another, or not due again yet.
   */
  claimDay(
    day: Omit<StatementDay, 'statement_id' | 'attempts' | 'last_error' | 'updated_at'>,
    now: number,
  ): Promise<boolean>;
  /** The claim's end: imported (its statement), or tried again at `next_try_at` with why not. */
  finishDay(
    key: Pick<StatementDay, 'provider' | 'merchant_id' | 'statement_date'>,
    done: { statement_id: string } | { error: string; next_try_at: number },
    now: number,
  ): Promise<void>;
  listDays(filter: { imported?: boolean; limit?: number }): Promise<StatementDay[]>;
  /** Each account's newest imported statement day (the metric of a missing day). */
  newestStatements(): Promise<
    Array<{ provider: string; merchant_id: string; statement_date: string; imported_at: number }>
  >;
  /** Marks an open exception resolved (its evidence kept); undefined when it is not open. */
  resolveException(
    exception_id: string,
    resolution: ExceptionAction | 'auto',
    by: string,
    note: string,
    now: number,
  ): Promise<MoneyException | undefined>;
}
