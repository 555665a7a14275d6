import type { Kysely } from 'kysely';
import { refundedFee } from '../../domain/fees.js';
import type { RefundBooks } from '../../ports/refunds.js';
import {
  FEE_REVENUE,
  providerAccount,
  shownBalance,
  WALLET_BALANCES,
  walletAccount,
  type JournalEntry,
  type WalletBalances,
} from '../../domain/ledger.js';
import { refundFailedEntry, refundMadeEntry, refundReservedEntry, takeForRefund } from '../../domain/ledger-refund.js';
import { proRata } from '../../domain/money.js';
import type { Database } from '../schema.js';
import { postingStatements } from './ledger-write.js';

// A refund's entries, posted by the refunds repository inside the atomic unit of the state change
// each records (domain/ledger-refund.ts has their rules). On PostgreSQL the wallet's balance rows
// are locked (account order, as every posting takes them: ledger-write.ts) before they are read,
// so concurrent refunds and payouts of one wallet take turns and never overdraw it.

/** The wallet's balance could not cover the refund: how much it needed and what it had. */
export interface WalletShort {
  need: number;
  pending: number;
  available: number;
}

/** Posts the entry in the unit `trx` is; false when its key was posted before. */
export async function postIn(
  trx: Kysely<Database>,
  entry: JournalEntry,
  opts: { days?: boolean } = {},
): Promise<boolean> {
  const posting = postingStatements(trx, entry, opts);
  const inserted = await trx.executeQuery(posting.entry);
  if (inserted.numAffectedRows !== 1n) return false;
  for (const q of posting.then) await trx.executeQuery(q);
  return true;
}

/** The wallet's balances as kept, their rows locked until the unit ends when `lock` (PostgreSQL). */
export async function walletBalancesIn(
  trx: Kysely<Database>,
  wallet_id: string,
  currency: string,
  lock: boolean,
): Promise<WalletBalances> {
  let q = trx
    .selectFrom('ledger_balances')
    .select(['account', 'balance'])
    .where(
      'account',
      'in',
      WALLET_BALANCES.map((b) => walletAccount(wallet_id, b)),
    )
    .where('currency', '=', currency)
    .orderBy('account');
  if (lock) q = q.forUpdate();
  const rows = await q.execute();
  const out = { currency } as WalletBalances;
  for (const b of WALLET_BALANCES) {
    const account = walletAccount(wallet_id, b);
    out[b] = shownBalance(account, Number(rows.find((r) => r.account === account)?.balance ?? 0));
  }
  return out;
}

/** The order as its refunds' entries need it, with what its entries so far say. */
async function orderOnBooks(trx: Kysely<Database>, order_id: string) {
  const order = await trx
    .selectFrom('transactions')
    .select(['order_id', 'wallet_id', 'currency', 'amount', 'refunded_amount', 'channel'])
    .where('order_id', '=', order_id)
    .executeTakeFirstOrThrow();
  const lines = await trx
    .selectFrom('ledger_lines as l')
    .innerJoin('ledger_entries as e', 'e.entry_key', 'l.entry_key')
    .select(['e.kind', 'l.account', 'l.currency', 'l.amount'])
    .where('e.order_id', '=', order_id)
    .execute();
  let fee = 0;
  let feeBack = 0;
  let provider: { account: string; currency: string; amount: number } | undefined;
  for (const l of lines) {
    const amount = Number(l.amount);
    if (l.kind === 'payment' && l.account === FEE_REVENUE) fee -= amount;
    if ((l.kind === 'refund_reserved' || l.kind === 'refund_failed') && l.account === FEE_REVENUE) feeBack += amount;
    if (l.kind === 'payment' && l.account.startsWith('provider:'))
      provider = { account: l.account, currency: l.currency, amount };
  }
  return {
    ...order,
    amount: Number(order.amount),
    refunded_amount: Number(order.refunded_amount),
    fee,
    feeBack,
    // An order paid before the ledger without its entry (ledger check reports it): its own currency.
    provider: provider ?? {
      account: providerAccount(order.channel, order.wallet_id),
      currency: order.currency,
      amount: Number(order.amount),
    },
  };
}

/**
 * After the refund's amount was added to its order's refunded total (in the same unit): takes it
 * from the wallet and holds it in `reserved`, or says the wallet cannot cover it (the caller rolls
 * the unit back).
 */
export async function bookRefundReserved(
  trx: Kysely<Database>,
  refund: { refund_id: string; order_id: string; refund_amount: number; created_at: number },
  books: RefundBooks,
  lock: boolean,
): Promise<WalletShort | undefined> {
  const order = await orderOnBooks(trx, refund.order_id);
  const fee_back = refundedFee(books.refund_fee, order, order.refunded_amount, order.feeBack);
  const need = refund.refund_amount - fee_back;
  const balances = await walletBalancesIn(trx, order.wallet_id, order.currency, lock);
  const take = takeForRefund(need, balances);
  if (!take) return { need, pending: balances.pending, available: balances.available };
  await postIn(
    trx,
    refundReservedEntry({
      refund_id: refund.refund_id,
      order_id: refund.order_id,
      wallet_id: order.wallet_id,
      currency: order.currency,
      amount: refund.refund_amount,
      fee_back,
      take,
      created_at: refund.created_at,
    }),
  );
  return undefined;
}

/** The provider made the refund: what it held in `reserved` leaves the provider's clearing account. */
export async function bookRefundMade(
  trx: Kysely<Database>,
  refund: { refund_id: string; order_id: string; refund_amount: number; channel_amount: number | null },
  now: number,
): Promise<void> {
  const order = await orderOnBooks(trx, refund.order_id);
  const { provider } = order;
  const charged =
    provider.currency === order.currency
      ? refund.refund_amount
      : (refund.channel_amount ?? proRata(refund.refund_amount, order.amount, provider.amount));
  await postIn(
    trx,
    refundMadeEntry({
      refund_id: refund.refund_id,
      order_id: refund.order_id,
      wallet_id: order.wallet_id,
      currency: order.currency,
      amount: refund.refund_amount,
      provider_account: provider.account,
      charged: { amount: charged, currency: provider.currency },
      created_at: now,
    }),
  );
}

/** The provider refused the refund: its reservation goes back where it came from. */
export async function bookRefundFailed(trx: Kysely<Database>, refund_id: string, now: number): Promise<void> {
  const key = `refund_reserved:${refund_id}`;
  const entry = await trx.selectFrom('ledger_entries').selectAll().where('entry_key', '=', key).executeTakeFirst();
  // Nothing was taken, so nothing goes back (migration 0017 posted the reservations of refunds
  // pending before the ledger held refunds; one reserved by an older instance since has none).
  if (!entry) return;
  const lines = await trx
    .selectFrom('ledger_lines')
    .select(['account', 'currency', 'amount'])
    .where('entry_key', '=', key)
    .orderBy('line_no')
    .execute();
  await postIn(
    trx,
    refundFailedEntry({ ...entry, lines: lines.map((l) => ({ ...l, amount: Number(l.amount) })) }, now),
  );
}
