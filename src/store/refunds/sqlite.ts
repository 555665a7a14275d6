import type { NewRefund, RefundBooks, RefundReservation } from '../../ports/refunds.js';
import { bookRefundReserved } from '../ledger/refund-books.js';
import { refusal, reserveOnOrder, SqlRefunds, WalletCannotCover, walletRefusal } from './base.js';

/** A concurrent identical request won the unique dedupe_key: the reservation rolls back. */
class DuplicateRefund extends Error {}

/** SQLite: a unit of several statements is a transaction, a SAVEPOINT in the group-commit batch. */
export class SqliteRefunds extends SqlRefunds {
  reserve(refund: NewRefund, books: RefundBooks): Promise<RefundReservation> {
    return this.db
      .transaction()
      .execute(async (trx) => {
        if (refund.dedupe_key !== null) {
          const dup = await trx
            .selectFrom('refunds')
            .select('refund_id')
            .where('dedupe_key', '=', refund.dedupe_key)
            .executeTakeFirst();
          if (dup) return { ok: false as const, reason: 'duplicate' as const };
        }
        const updated = await reserveOnOrder(trx, refund).returning('order_id').executeTakeFirst();
        if (!updated) {
          const tx = await trx
            .selectFrom('transactions')
            .select('status')
            .where('order_id', '=', refund.order_id)
            .executeTakeFirst();
          return refusal(tx);
        }
        // The unique dedupe_key makes a concurrent identical request fail here, rolling back the total.
        const inserted = await trx
          .insertInto('refunds')
          .values({ ...refund, refund_status: 'pending', updated_at: refund.created_at })
          .onConflict((oc) => oc.column('dedupe_key').doNothing())
          .returning('refund_id')
          .executeTakeFirst();
        if (!inserted) throw new DuplicateRefund();
        const short = await bookRefundReserved(trx, refund, books, false);
        if (short) throw new WalletCannotCover(short);
        return { ok: true as const };
      })
      .catch((e: unknown): RefundReservation => {
        if (e instanceof DuplicateRefund) return { ok: false as const, reason: 'duplicate' as const };
        if (e instanceof WalletCannotCover) return walletRefusal(e);
        throw e;
      });
  }

  async fail(refund_id: string, now: number): Promise<void> {
    await this.db.transaction().execute((trx) => this.failIn(trx, refund_id, now));
  }
}
