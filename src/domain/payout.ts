// Payouts: a merchant's available money paid to its bank account. A payout is requested (its
// amount and fee move from `available` to `reserved`), approved by an operator, put in a bank file
// (`in_batch`: out of `reserved`, the amount in transit, the fee earned), then confirmed `paid` or
// `returned` by the bank (a returned payout's amount and fee go back to `available`). Before the
// file it may be `canceled` (back to `available`).
import {
  FEE_REVENUE,
  OPERATOR_BANK,
  PAYOUTS_IN_TRANSIT,
  walletAccount,
  type EntryKind,
  type JournalEntry,
  type LedgerLine,
} from './ledger.js';

export const PAYOUT_STATUSES = ['requested', 'approved', 'in_batch', 'paid', 'returned', 'canceled'] as const;
export type PayoutStatus = (typeof PAYOUT_STATUSES)[number];

/** The states a payout may move to from each. */
const NEXT: Record<PayoutStatus, readonly PayoutStatus[]> = {
  requested: ['approved', 'canceled'],
  approved: ['in_batch', 'canceled'],
  in_batch: ['paid', 'returned'],
  paid: [],
  returned: [],
  canceled: [],
};

export function canMove(from: PayoutStatus, to: PayoutStatus): boolean {
  return NEXT[from].includes(to);
}

/** The states a payout must be in to move to `to`. */
export function fromStates(to: PayoutStatus): PayoutStatus[] {
  return PAYOUT_STATUSES.filter((s) => NEXT[s].includes(to));
}

export interface Payout {
  payout_id: string;
  wallet_id: string;
  bank_account_id: string;
  currency: string;
  /** What the merchant's bank account receives, minor units. */
  amount: number;
  /** The operator's payout fee (the wallet's `payout` plan), taken from available beside the amount. */
  fee: number;
  payout_status: PayoutStatus;
  batch_id: string | null;
  /** Why the bank returned it. */
  return_reason: string | null;
  requested_at: number;
  requested_by: string;
  updated_at: number;
  updated_by: string;
}

type PayoutRef = Pick<Payout, 'payout_id' | 'wallet_id' | 'currency' | 'amount' | 'fee'>;

function entryOf(kind: EntryKind, p: PayoutRef, lines: LedgerLine[], created_at: number, memo: string | null = null) {
  const entry: JournalEntry = {
    entry_key: `${kind}:${p.payout_id}`,
    kind,
    wallet_id: p.wallet_id,
    order_id: null,
    refund_id: null,
    payout_id: p.payout_id,
    memo,
    created_at,
    lines: lines.filter((l) => l.amount !== 0),
  };
  return entry;
}

/** Requested: its amount and fee held back from available. */
export function payoutRequestedEntry(p: PayoutRef, at: number): JournalEntry {
  const c = p.currency;
  const total = p.amount + p.fee;
  return entryOf(
    'payout_requested',
    p,
    [
      { account: walletAccount(p.wallet_id, 'available'), currency: c, amount: total },
      { account: walletAccount(p.wallet_id, 'reserved'), currency: c, amount: -total },
    ],
    at,
  );
}

/** Canceled before its file: back to available. */
export function payoutCanceledEntry(p: PayoutRef, at: number): JournalEntry {
  const c = p.currency;
  const total = p.amount + p.fee;
  return entryOf(
    'payout_canceled',
    p,
    [
      { account: walletAccount(p.wallet_id, 'reserved'), currency: c, amount: total },
      { account: walletAccount(p.wallet_id, 'available'), currency: c, amount: -total },
    ],
    at,
  );
}

/** In a bank file: the amount on its way to the merchant, the fee the operator's. */
export function payoutSentEntry(p: PayoutRef, batch_id: string, at: number): JournalEntry {
  const c = p.currency;
  return entryOf(
    'payout_sent',
    p,
    [
      { account: walletAccount(p.wallet_id, 'reserved'), currency: c, amount: p.amount + p.fee },
      { account: PAYOUTS_IN_TRANSIT, currency: c, amount: -p.amount },
      { account: FEE_REVENUE, currency: c, amount: -p.fee },
    ],
    at,
    `batch ${batch_id}`,
  );
}

/** The bank paid it: out of the operator's bank account. */
export function payoutPaidEntry(p: PayoutRef, at: number): JournalEntry {
  const c = p.currency;
  return entryOf(
    'payout_paid',
    p,
    [
      { account: PAYOUTS_IN_TRANSIT, currency: c, amount: p.amount },
      { account: OPERATOR_BANK, currency: c, amount: -p.amount },
    ],
    at,
  );
}

/** The bank returned it: the amount and the fee back to the merchant's available balance. */
export function payoutReturnedEntry(p: PayoutRef, reason: string, at: number): JournalEntry {
  const c = p.currency;
  return entryOf(
    'payout_returned',
    p,
    [
      { account: PAYOUTS_IN_TRANSIT, currency: c, amount: p.amount },
      { account: FEE_REVENUE, currency: c, amount: p.fee },
      { account: walletAccount(p.wallet_id, 'available'), currency: c, amount: -(p.amount + p.fee) },
    ],
    at,
    reason,
  );
}
