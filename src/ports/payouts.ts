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

export type PayoutRequestResult = { ok: true } | { ok: false; available: number };

/** A move refused: the payout is not there, or not in a state it may move from. */
export type PayoutMoveResult = { ok: true; payout: Payout } | { ok: false; status: PayoutStatus | undefined };

export interface PayoutsRepo {
  addBankAccount(a: BankAccount): Promise<void>;
  findBankAccount(bank_account_id: string): Promise<BankAccount | undefined>;
  listBankAccounts(wallet_id?: string): Promise<BankAccount[]>;
  /** Marks it verified (once: a verified account stays as it was verified); undefined when there is none. */
  verifyBankAccount(bank_account_id: string, by: string, now: number): Promise<BankAccount | undefined>;
  /** Records a requested payout and holds its amount and fee back from available, or says what is available. */
  request(payout: Payout): Promise<PayoutRequestResult>;
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
}
