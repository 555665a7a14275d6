import type { FeePlan } from '../domain/fees.js';
import type { JournalEntry, WalletBalances } from '../domain/ledger.js';

// The books: journal entries, appended in the same atomic unit as the state change each records
// (a payment's with its settle: SettleInput.entry), read back, and checked. Rules: domain/ledger.ts.

export type { WalletBalances };

/** What `gateway ledger check` found wrong; empty when the books are sound. */
export interface LedgerProblem {
  kind: 'unbalanced_entry' | 'balance_differs' | 'paid_order_without_entry' | 'refund_without_entry';
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

export interface LedgerRepo {
  /** The entries of an order (its payment's, its refunds'), oldest first, with their lines. */
  entriesOfOrder(order_id: string): Promise<JournalEntry[]>;
  /** The wallet's balances (zero where nothing was posted). */
  walletBalances(wallet_id: string, currency: string): Promise<WalletBalances>;
  /**
   * Every entry balances in each currency, every kept balance equals the sum of its account's
   * lines, every paid order has its payment's entry, every refund standing or made its entries. At most `limit` problems of each kind.
   */
  check(limit?: number): Promise<LedgerCheck>;
  /** Appends the next version of the wallet's plan for the method (1 for its first), as given. */
  addFeePlan(plan: Omit<FeePlan, 'version'>): Promise<FeePlan>;
  /** Every version of the plans of a wallet (or of all), by wallet, method and version. */
  listFeePlans(filter?: { wallet_id?: string; payment_method?: string }): Promise<FeePlan[]>;
}
