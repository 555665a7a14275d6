import { sql, type Kysely, type QueryCreator } from 'kysely';
import type { Refund } from '../../domain/refund.js';
import { isPaid, type Status } from '../../domain/transaction.js';
import type {
  NewRefund,
  RefundBooks,
  RefundListRow,
  RefundReservation,
  RefundSearch,
  RefundsRepo,
} from '../../ports/refunds.js';
import { bookRefundFailed, bookRefundMade, type WalletShort } from '../ledger/refund-books.js';
import type { SettlementFilter, SettlementRow } from '../../ports/transactions.js';
import { organisationUsers } from '../organisation-scope.js';
import type { Database } from '../schema.js';

/**
 * The reservation's rule, for both engines: the order's refunded total grows by the refund's
 * amount only if the order is paid and the total stays within its amount. (The database checks
 * the bound too: transactions_refund_bound.)
 */
export function reserveOnOrder<DB extends Database>(
  qc: QueryCreator<DB>,
  p: Pick<NewRefund, 'order_id' | 'refund_amount' | 'created_at'>,
) {
  // Typed on the gateway's tables alone, also inside a CTE that adds its own.
  return (qc as unknown as QueryCreator<Database>)
    .updateTable('transactions')
    .set({ refunded_amount: sql`refunded_amount + ${p.refund_amount}`, updated_at: p.created_at })
    .where('order_id', '=', p.order_id)
    .where('status', '=', sql.lit('paid'))
    .where(sql<boolean>`refunded_amount + ${p.refund_amount} <= amount`);
}

/** Why a reservation did not happen, when no refund with its dedupe_key stands. */
export const refusal = (order: { status: Status } | undefined): RefundReservation => ({
  ok: false,
  reason: order && isPaid(order) ? 'insufficient' : 'not_paid',
});

/** What both engines do alike. */
export abstract class SqlRefunds implements RefundsRepo {
  constructor(protected readonly db: Kysely<Database>) {}

  abstract reserve(refund: NewRefund, books: RefundBooks): Promise<RefundReservation>;
  abstract fail(refund_id: string, now: number): Promise<void>;

  async setChannelAmount(refund_id: string, channel_amount: number, now: number): Promise<void> {
    await this.db
      .updateTable('refunds')
      .set({ channel_amount, updated_at: now })
      .where('refund_id', '=', refund_id)
      .execute();
  }

  async touch(refund_id: string, now: number): Promise<void> {
    await this.db
      .updateTable('refunds')
      .set({ updated_at: now })
      .where('refund_id', '=', refund_id)
      .where('refund_status', '=', 'pending')
      .execute();
  }

  async complete(refund_id: string, now: number): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const made = await trx
        .updateTable('refunds')
        .set({ refund_status: 'succeeded', updated_at: now })
        .where('refund_id', '=', refund_id)
        .where('refund_status', '=', 'pending')
        .returning(['refund_id', 'order_id', 'refund_amount', 'channel_amount'])
        .executeTakeFirst();
      if (made) await bookRefundMade(trx, made, now);
    });
  }

  listByOrder(order_id: string): Promise<Refund[]> {
    return this.db.selectFrom('refunds').selectAll().where('order_id', '=', order_id).orderBy('created_at').execute();
  }

  async listByOrders(order_ids: readonly string[]): Promise<Refund[]> {
    if (order_ids.length === 0) return [];
    return this.db
      .selectFrom('refunds')
      .selectAll()
      .where('order_id', 'in', order_ids)
      .orderBy('order_id')
      .orderBy('created_at')
      .execute();
  }

  async succeededByDay(f: SettlementFilter): Promise<SettlementRow[]> {
    const day = sql<number | string>`(refunds.updated_at / 86400000) * 86400000`;
    let q = this.db
      .selectFrom('refunds')
      .innerJoin('transactions', 'transactions.order_id', 'refunds.order_id')
      .select((eb) => [
        day.as('day'),
        'transactions.wallet_id',
        'transactions.currency',
        'transactions.payment_method',
        eb.fn.countAll<number | string>().as('count'),
        eb.fn.sum<number | string>('refunds.refund_amount').as('amount'),
      ])
      .where('refunds.refund_status', '=', 'succeeded')
      .where('refunds.updated_at', '>=', f.from)
      .where('refunds.updated_at', '<', f.to);
    if (f.organisation_id !== undefined)
      q = q.where('transactions.user_id', 'in', organisationUsers(this.db, f.organisation_id));
    if (f.wallet_id !== undefined) q = q.where('transactions.wallet_id', '=', f.wallet_id);
    const rows = await q
      .groupBy([day, 'transactions.wallet_id', 'transactions.currency', 'transactions.payment_method'])
      .execute();
    return rows.map((r) => ({
      day: Number(r.day),
      wallet_id: r.wallet_id,
      currency: r.currency,
      payment_method: r.payment_method,
      count: Number(r.count),
      amount: Number(r.amount),
    }));
  }

  async countPending(): Promise<number> {
    const row = await this.db
      .selectFrom('refunds')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('refund_status', '=', 'pending')
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async search(f: RefundSearch): Promise<{ rows: RefundListRow[]; next?: { created_at: number; refund_id: string } }> {
    let q = this.db
      .selectFrom('refunds as r')
      .innerJoin('transactions as t', 't.order_id', 'r.order_id')
      .selectAll('r')
      .select(['t.currency', 't.payment_method', 't.wallet_id', 't.user_id', 't.merchant_reference']);
    if (f.organisation_id !== undefined) q = q.where('t.user_id', 'in', organisationUsers(this.db, f.organisation_id));
    if (f.refund_status !== undefined) q = q.where('r.refund_status', '=', f.refund_status);
    if (f.from !== undefined) q = q.where('r.created_at', '>=', f.from);
    if (f.to !== undefined) q = q.where('r.created_at', '<', f.to);
    const after = f.after;
    if (after)
      q = q.where((eb) =>
        eb.or([
          eb('r.created_at', '<', after.created_at),
          eb.and([eb('r.created_at', '=', after.created_at), eb('r.refund_id', '<', after.refund_id)]),
        ]),
      );
    const rows = (await q
      .orderBy('r.created_at', 'desc')
      .orderBy('r.refund_id', 'desc')
      .limit(f.limit + 1)
      .execute()) as RefundListRow[];
    const more = rows.length > f.limit;
    if (more) rows.length = f.limit;
    const last = rows[rows.length - 1];
    return { rows, ...(more && last && { next: { created_at: last.created_at, refund_id: last.refund_id } }) };
  }

  listPendingSince(createdBefore: number, limit: number): Promise<Refund[]> {
    return this.db
      .selectFrom('refunds')
      .selectAll()
      .where('refund_status', '=', 'pending')
      .where('created_at', '<', createdBefore)
      .orderBy('created_at')
      .orderBy('refund_id')
      .limit(limit)
      .execute();
  }

  listPending(updatedBefore: number, limit: number): Promise<Refund[]> {
    return this.db
      .selectFrom('refunds')
      .selectAll()
      .where('refund_status', '=', 'pending')
      .where('updated_at', '<', updatedBefore)
      .orderBy('updated_at')
      .limit(limit)
      .execute();
  }

  /** Marks a pending refund failed (its dedupe_key freed) and gives its amount back to the order. */
  protected async failIn(trx: Kysely<Database>, refund_id: string, now: number): Promise<void> {
    const failed = await trx
      .updateTable('refunds')
      .set({ refund_status: 'failed', dedupe_key: null, updated_at: now })
      .where('refund_id', '=', refund_id)
      .where('refund_status', '=', 'pending')
      .returning(['order_id', 'refund_amount'])
      .executeTakeFirst();
    if (!failed) return;
    await trx
      .updateTable('transactions')
      .set({ refunded_amount: sql`refunded_amount - ${failed.refund_amount}`, updated_at: now })
      .where('order_id', '=', failed.order_id)
      .execute();
    await bookRefundFailed(trx, refund_id, now);
  }
}

/** Thrown inside a reservation's unit the wallet cannot cover, to roll it back. */
export class WalletCannotCover extends Error {
  constructor(readonly short: WalletShort) {
    super('the wallet cannot cover the refund');
  }
}

export const walletRefusal = (e: WalletCannotCover): RefundReservation => ({ ok: false, reason: 'wallet', ...e.short });
