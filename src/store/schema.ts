import type { ColumnType, Generated } from 'kysely';
import type { UserStatus, Wallet } from '../domain/account.js';
import type { ConsoleUser } from '../domain/console.js';
import type { AutoPayoutDay, AutoPayoutSetting } from '../domain/auto-payout.js';
import type { BankAccount } from '../domain/bank-account.js';
import type { Payout } from '../domain/payout.js';
import type { FeePlan } from '../domain/fees.js';
import type { JournalEntry } from '../domain/ledger.js';
import type { Refund } from '../domain/refund.js';
import type { Transaction } from '../domain/transaction.js';
import type { StoredChannelAccount } from '../ports/accounts.js';
import type { WalletLimits } from '../ports/ledger.js';
import type { PayoutBatch } from '../ports/payouts.js';
import type { MoneyException, ProviderStatement, StatementDay, StoredStatementLine } from '../ports/reconciliation.js';
import type { AuditEntry, ConsoleSession, ConsoleToken, ThrottleRow } from '../ports/console.js';
import type { NotificationAttempt, OutboxRow } from '../ports/outbox.js';
import type { ChannelPayment, ChannelPaymentState, Nonce } from '../ports/transactions.js';

// The tables as Kysely sees them, made of the row types the domain and the ports define. Column
// names are the spec's field names. Amounts are integer minor units, rates integer millionths,
// times integer epoch milliseconds (UTC); formatting happens at the wire.
//
// A column the code always sets on insert is a plain field of its row type. A column left to its
// DEFAULT on insert is `Generated` (or a ColumnType whose insert type allows undefined) and is
// not in the insert's column list (columns.ts): see the checklist in src/store/README.md.

export interface OrganisationsTable {
  organisation_id: Generated<number>;
  organisation_name: string;
  created_at: number;
  closed_at: number | null;
}

export interface UsersTable {
  user_id: string;
  organisation_id: number;
  user_name: string;
  user_status: UserStatus;
  created_at: number;
}

export type WalletsTable = Omit<
  Wallet,
  'legacy_signatures' | 'previous_api_key' | 'previous_key_expires_at' | 'wallet_status'
> & {
  wallet_status: ColumnType<Wallet['wallet_status'], Wallet['wallet_status'] | undefined, Wallet['wallet_status']>;
  legacy_signatures: ColumnType<0 | 1, 0 | 1 | undefined, 0 | 1>;
  previous_api_key: ColumnType<string | null, string | null | undefined, string | null>;
  previous_key_expires_at: ColumnType<number | null, number | null | undefined, number | null>;
};

export interface RatesTable {
  currency_from: string;
  currency_to: string;
  rate_micros: number;
  updated_at: number;
}

export type TransactionsTable = Transaction;
export type NoncesTable = Nonce;
export type RefundsTable = Refund;
export type OutboxTable = OutboxRow;
export type NotificationAttemptsTable = Omit<NotificationAttempt, 'attempt_id'> & { attempt_id: Generated<number> };

export type ChannelAccountsTable = StoredChannelAccount;
export type ChannelPaymentsTable = Omit<ChannelPayment, 'state'> & {
  state: ColumnType<ChannelPaymentState, ChannelPaymentState | undefined, ChannelPaymentState>;
};

export type ConsoleUsersTable = Omit<ConsoleUser, 'status'> & {
  status: ColumnType<ConsoleUser['status'], ConsoleUser['status'] | undefined, ConsoleUser['status']>;
};
export type ConsoleSessionsTable = ConsoleSession;
export type ConsoleTokensTable = ConsoleToken;
export type ConsoleThrottleTable = ThrottleRow;
export interface ConsoleRecoveryCodesTable {
  console_user_id: string;
  code_hash: string;
  created_at: number;
  used_at: number | null;
}
export interface ConsoleSettingsTable {
  name: string;
  value: string;
}
export type AuditLogTable = Omit<AuditEntry, 'audit_id'> & { audit_id: Generated<number> };

/** An entry's row: its lines are rows of their own. */
export type LedgerEntriesTable = Omit<JournalEntry, 'lines'>;
export interface LedgerLinesTable {
  entry_key: string;
  line_no: number;
  account: string;
  currency: string;
  amount: number;
  created_at: number;
}
export interface LedgerBalancesTable {
  account: string;
  currency: string;
  balance: number;
  updated_at: number;
}

/** A wallet account's movement on one day (UTC): the sum of its lines posted that day. */
export interface LedgerDaysTable {
  account: string;
  currency: string;
  day: number;
  amount: number;
}
export type FeePlansTable = FeePlan;
export interface WalletSettlementTable {
  wallet_id: string;
  delay_days: number;
  updated_at: number;
  updated_by: string;
}
export type BankAccountsTable = BankAccount;
export type PayoutsTable = Payout;
export type PayoutBatchesTable = PayoutBatch;
export type WalletAutoPayoutsTable = AutoPayoutSetting;
export type ProviderStatementsTable = ProviderStatement & { raw: Uint8Array };
export type StatementLinesTable = StoredStatementLine;
export type MoneyExceptionsTable = MoneyException;
export type StatementDaysTable = StatementDay;
export type AutoPayoutDaysTable = AutoPayoutDay;
export type WalletLimitsTable = WalletLimits;

export interface SequencesTable {
  name: string;
  next_value: number;
}

export interface Database {
  organisations: OrganisationsTable;
  users: UsersTable;
  wallets: WalletsTable;
  rates: RatesTable;
  transactions: TransactionsTable;
  nonces: NoncesTable;
  refunds: RefundsTable;
  outbox: OutboxTable;
  notification_attempts: NotificationAttemptsTable;
  sequences: SequencesTable;
  channel_accounts: ChannelAccountsTable;
  channel_payments: ChannelPaymentsTable;
  ledger_entries: LedgerEntriesTable;
  ledger_lines: LedgerLinesTable;
  ledger_balances: LedgerBalancesTable;
  ledger_days: LedgerDaysTable;
  wallet_settlement: WalletSettlementTable;
  wallet_limits: WalletLimitsTable;
  bank_accounts: BankAccountsTable;
  payouts: PayoutsTable;
  payout_batches: PayoutBatchesTable;
  wallet_auto_payouts: WalletAutoPayoutsTable;
  auto_payout_days: AutoPayoutDaysTable;
  provider_statements: ProviderStatementsTable;
  statement_lines: StatementLinesTable;
  statement_days: StatementDaysTable;
  money_exceptions: MoneyExceptionsTable;
  fee_plans: FeePlansTable;
  console_users: ConsoleUsersTable;
  console_sessions: ConsoleSessionsTable;
  console_tokens: ConsoleTokensTable;
  console_throttle: ConsoleThrottleTable;
  console_settings: ConsoleSettingsTable;
  console_recovery_codes: ConsoleRecoveryCodesTable;
  audit_log: AuditLogTable;
}
