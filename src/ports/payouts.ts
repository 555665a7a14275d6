import type { AutoPayoutDay, AutoPayoutSetting } from '../domain/auto-payout.js';
import type { BankAccount } from '../domain/bank-account.js';
import type { Payout, PayoutStatus } from '../domain/payout.js';

// Payouts and the bank accounts they are paid to. Each state change of a payout writes its ledger
// entry (domain/payout.ts) in the same atomic unit; a request is refused when the wallet's
// available balance cannot cover its amount and fee (concurrent requests and refunds take turns on
// the wallet's balance rows).

export interface PayoutBatch {
  batch_id: string;
  currency: string;
  payout_count: number;
  total: number;
  created_at: number;
  created_by: string;
}

/** Refused: available cannot cover it, or (an automatic payout) the wallet's day already has one. */
export type PayoutRequestResult = { ok: true } | { ok: false; available: number } | { ok: false; already: true };

/** A move refused: the payout is not there, or not in a state it may move from. */
export type PayoutMoveResult = { ok: true; payout: Payout } | { ok: false; status: PayoutStatus | undefined };

export interface PayoutsRepo {
  addBankAccount(a: BankAccount): Promise<void>;
  findBankAccount(bank_account_id: string): Promise<BankAccount | undefined>;
  listBankAccounts(wallet_id?: string): Promise<BankAccount[]>;
  /** Marks it verified (once: a verified account stays as it was verified); undefined when there is none. */
  verifyBankAccount(bank_account_id: string, by: string, now: number): Promise<BankAccount | undefined>;
  /**
   * Records a requested payout and holds its amount and fee back from available, or says what is
   * available. With `auto_day`, it is that day's automatic payout of the wallet, recorded with it:
   * a second one for the day is refused (`already`).
   */
  request(payout: Payout, auto_day?: number): Promise<PayoutRequestResult>;
  /** approved, canceled, paid or returned: from the states that may move there, with the move's entry. */
  move(
    payout_id: string,
    to: 'approved' | 'canceled' | 'paid' | 'returned',
    by: string,
    now: number,
    reason?: string,
  ): Promise<PayoutMoveResult>;
  /** Every approved payout of the currency into a new batch (in_batch, with their entries); none: undefined. */
  batch(
    currency: string,
    batch_id: string,
    by: string,
    now: number,
  ): Promise<{ batch: PayoutBatch; payouts: Payout[] } | undefined>;
  find(payout_id: string): Promise<Payout | undefined>;
  list(filter?: { wallet_id?: string; status?: PayoutStatus; batch_id?: string; limit?: number }): Promise<Payout[]>;
  listBatches(limit?: number): Promise<PayoutBatch[]>;
  findBatch(batch_id: string): Promise<PayoutBatch | undefined>;
  /** A wallet's automatic payout: set (replacing what it was), or off with null. */
  setAutoPayout(setting: AutoPayoutSetting | { wallet_id: string; off: true }): Promise<void>;
  autoPayout(wallet_id: string): Promise<AutoPayoutSetting | undefined>;
  /** The settings of wallets whose day has no automatic payout (nor a recorded reason for none) yet. */
  dueAutoPayouts(day: number): Promise<AutoPayoutSetting[]>;
  /** Records why the wallet's day has no automatic payout (once: false when the day has its record). */
  skipAutoPayout(skip: AutoPayoutDay): Promise<boolean>;
  /** The wallet's latest days with an automatic payout or a reason for none, newest first. */
  autoPayoutDays(wallet_id: string, limit: number): Promise<AutoPayoutDay[]>;
}
