import type { FeePlan } from '../domain/fees.js';
import type { JournalEntry, WalletBalances } from '../domain/ledger.js';

// The books: journal entries, appended in the same atomic unit as the state change each records
// (a payment's with its settle: SettleInput.entry), read back, and checked. Rules: domain/ledger.ts.

export type { WalletBalances };

/** What `gateway ledger check` found wrong; empty when the books are sound. */
export interface LedgerProblem {
  kind:
    | 'unbalanced_entry'
    | 'balance_differs'
    | 'paid_order_without_entry'
    | 'refund_without_entry'
    | 'payout_without_entry';
  /** The entry, the account (and currency) or the order concerned. */
  subject: string;
  detail: string;
}

export interface LedgerCheck {
  entries: number;
  lines: number;
  paid_orders: number;
  problems: LedgerProblem[];
}

/** What a settlement run moved from pending to available in one wallet. */
export interface SettlementMove {
  wallet_id: string;
  currency: string;
  amount: number;
}

export interface SettlementRun {
  /** Wallets with money pending that were looked at. */
  wallets: number;
  moves: SettlementMove[];
  /** Another instance held the run's claim (PostgreSQL): it does the work. */
  claimed_elsewhere: boolean;
}

/** A wallet's limits, for every method (payment_method '') or one; null is no limit. Minor units. */
export interface WalletLimits {
  wallet_id: string;
  payment_method: string;
  single_min: number | null;
  single_max: number | null;
  daily_max: number | null;
  updated_at: number;
  updated_by: string;
}

/** One entry's movement of a wallet's balances, as its statement shows it (shown-normal: + is owed to the merchant). */
export interface StatementLine {
  entry_key: string;
  kind: JournalEntry['kind'];
  created_at: number;
  order_id: string | null;
  refund_id: string | null;
  payout_id: string | null;
  memo: string | null;
  pending: number;
  available: number;
  reserved: number;
}

/** Where a page of a statement ends: the next page starts after this entry. */
export interface StatementCursor {
  created_at: number;
  entry_key: string;
}

export interface Statement {
  wallet_id: string;
  currency: string;
  from: number;
  to: number;
  /** The balances at `from` and at `to`, whatever page this is. */
  opening: WalletBalances;
  /** The movements of this page, oldest first. */
  lines: StatementLine[];
  closing: WalletBalances;
  /** When the range has more movements than the page: where the next page starts. */
  next?: StatementCursor;
}

/** Fees earned in a currency by one method (or `payout`): their net over the range, and how many entries. */
export interface MarginRow {
  currency: string;
  payment_method: string;
  /** Minor units: fees charged less fees given back. */
  fees: number;
  count: number;
  /** Minor units: what the providers charged for the method, as their statements say (reconciliation). */
  provider_fees: number;
}

export interface LedgerRepo {
  /** The entries of an order (its payment's, its refunds'), oldest first, with their lines. */
  entriesOfOrder(order_id: string): Promise<JournalEntry[]>;
  /** The wallet's balances (zero where nothing was posted). */
  walletBalances(wallet_id: string, currency: string): Promise<WalletBalances>;
  /**
   * Every entry balances in each currency, every kept balance equals the sum of its account's
   * lines, every paid order has its payment's entry, every refund standing or made and every payout its entries. At most `limit` problems of each kind.
   */
  check(limit?: number): Promise<LedgerCheck>;
  /** Appends the next version of the wallet's plan for the method (1 for its first), as given. */
  addFeePlan(plan: Omit<FeePlan, 'version'>): Promise<FeePlan>;
  /** Every version of the plans of a wallet (or of all), by wallet, method and version. */
  listFeePlans(filter?: { wallet_id?: string; payment_method?: string }): Promise<FeePlan[]>;
  /** Sets the wallet's settlement delay in days. */
  setSettlementDelay(wallet_id: string, days: number, by: string, now: number): Promise<void>;
  /** The wallet's settlement delay, or undefined when none was set (the default applies). */
  settlementDelay(wallet_id: string): Promise<number | undefined>;
  /** Moves what is due in every wallet from pending to available (domain/settlement.ts): idempotent. */
  runSettlement(now: number, defaultDelayDays: number): Promise<SettlementRun>;
  /** Sets (replaces) the wallet's limits for one method or every method (''). */
  setLimits(limits: WalletLimits): Promise<void>;
  /** The wallet's limits: the row for every method ('') and each method's. */
  listLimits(wallet_id?: string): Promise<WalletLimits[]>;
  /** The sum of the wallet's orders paid since `since` (of one method, or of all with null). */
  paidSince(wallet_id: string, payment_method: string | null, since: number): Promise<number>;
  /** The balances of these wallets (of every wallet with none), each in its currency; wallets with no postings left out. */
  walletsBalances(wallet_ids: readonly string[] | undefined): Promise<Array<WalletBalances & { wallet_id: string }>>;
  /** The operator's fee revenue in [from, to) per currency and method (the margin report). */
  margin(from: number, to: number): Promise<MarginRow[]>;
  /**
   * Posts an operator's adjustment (domain/ledger.ts adjustmentEntry), unless it takes more from the
   * wallet's available balance than there is: then says what is available.
   */
  adjust(entry: JournalEntry): Promise<{ ok: true } | { ok: false; available: number }>;
  /** The wallet's balances at `from`, every movement in [from, to), and its balances at `to`. */
  statement(
    wallet_id: string,
    currency: string,
    from: number,
    to: number,
    page?: { limit?: number; after?: StatementCursor },
  ): Promise<Statement>;
}
