// A refund on the books, in three entries. Reserved: before its provider is asked, its amount is
// taken from the merchant's balance (pending first, then available) and held in `reserved`, with
// the fee it gives back (a plan's refund_fee) taken from the operator's fee revenue. Made: the
// provider paid the customer back, so it owes the operator that much less. Failed: the reservation
// is undone, line by line, to where it came from.
import {
  CONVERSION,
  FEE_REVENUE,
  walletAccount,
  type JournalEntry,
  type LedgerLine,
  type WalletBalances,
} from './ledger.js';

/** Where a refund's share from the merchant comes from: what `pending` and then `available` can give. */
export function takeForRefund(
  need: number,
  balances: Pick<WalletBalances, 'pending' | 'available'>,
): { pending: number; available: number } | undefined {
  const pending = Math.min(need, Math.max(0, balances.pending));
  const available = need - pending;
  if (available > Math.max(0, balances.available)) return undefined;
  return { pending, available };
}

export interface RefundReservation {
  refund_id: string;
  order_id: string;
  wallet_id: string;
  currency: string;
  /** The refund's amount, what the customer gets back. */
  amount: number;
  /** The part of the order's fee the refund gives back (0 unless its plan says pro_rata). */
  fee_back: number;
  /** Where the rest (amount less fee_back) comes from (takeForRefund). */
  take: { pending: number; available: number };
  created_at: number;
}

const entryOf = (
  kind: 'refund_reserved' | 'refund_made' | 'refund_failed',
  r: { refund_id: string; order_id: string; wallet_id: string },
  lines: LedgerLine[],
  created_at: number,
  memo: string | null = null,
): JournalEntry => ({
  entry_key: `${kind}:${r.refund_id}`,
  kind,
  wallet_id: r.wallet_id,
  order_id: r.order_id,
  refund_id: r.refund_id,
  payout_id: null,
  memo,
  created_at,
  lines: lines.filter((l) => l.amount !== 0),
});

export function refundReservedEntry(r: RefundReservation): JournalEntry {
  if (
    r.fee_back < 0 ||
    r.take.pending < 0 ||
    r.take.available < 0 ||
    r.take.pending + r.take.available + r.fee_back !== r.amount
  )
    throw new Error(`refund ${r.refund_id}: the shares taken do not add up to its amount ${r.amount}`);
  const c = r.currency;
  return entryOf(
    'refund_reserved',
    r,
    [
      { account: walletAccount(r.wallet_id, 'pending'), currency: c, amount: r.take.pending },
      { account: walletAccount(r.wallet_id, 'available'), currency: c, amount: r.take.available },
      { account: FEE_REVENUE, currency: c, amount: r.fee_back },
      { account: walletAccount(r.wallet_id, 'reserved'), currency: c, amount: -r.amount },
    ],
    r.created_at,
  );
}

export interface RefundMade {
  refund_id: string;
  order_id: string;
  wallet_id: string;
  currency: string;
  amount: number;
  /** The provider's clearing account its payment was posted to, and what the refund gave back there (CNY for a domestic account). */
  provider_account: string;
  charged: { amount: number; currency: string };
  created_at: number;
}

export function refundMadeEntry(r: RefundMade): JournalEntry {
  const lines: LedgerLine[] = [
    { account: walletAccount(r.wallet_id, 'reserved'), currency: r.currency, amount: r.amount },
  ];
  if (r.charged.currency !== r.currency) {
    lines.push({ account: CONVERSION, currency: r.currency, amount: -r.amount });
    lines.push({ account: CONVERSION, currency: r.charged.currency, amount: r.charged.amount });
  } else if (r.charged.amount !== r.amount) {
    throw new Error(`refund ${r.refund_id} gave back ${r.charged.amount} of ${r.amount} in one currency`);
  }
  lines.push({ account: r.provider_account, currency: r.charged.currency, amount: -r.charged.amount });
  return entryOf('refund_made', r, lines, r.created_at);
}

/** A refund the provider refused: its reservation's lines reversed, each back where it came from. */
export function refundFailedEntry(reserved: JournalEntry, created_at: number): JournalEntry {
  if (reserved.kind !== 'refund_reserved' || !reserved.refund_id || !reserved.order_id || !reserved.wallet_id)
    throw new Error(`entry ${reserved.entry_key} is not a refund's reservation`);
  return entryOf(
    'refund_failed',
    { refund_id: reserved.refund_id, order_id: reserved.order_id, wallet_id: reserved.wallet_id },
    reserved.lines.map((l) => ({ ...l, amount: -l.amount })),
    created_at,
  );
}
