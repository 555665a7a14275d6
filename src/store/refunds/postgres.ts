import { sql, type Kysely } from 'kysely';
import type { NewRefund, RefundBooks, RefundReservation } from '../../ports/refunds.js';
import { bookRefundReserved } from '../ledger/refund-books.js';
import { prepared } from '../prepared.js';
import type { Database } from '../schema.js';
import { refusal, reserveOnOrder, SqlRefunds, WalletCannotCover, walletRefusal } from './base.js';

/** PostgreSQL's unique_violation, as a concurrent identical refund raises it on dedupe_key. */
const isUniqueViolation = (e: unknown): boolean =>
  typeof e === 'object' && e !== null && (e as { code?: unknown }).code === '23505';

export class PostgresRefunds extends SqlRefunds {
  /**
   * The order's reservation in one statement (instead of a look-up, an UPDATE and an INSERT): the order's update (reserveOnOrder) happens only if no refund with this
   * dedupe_key stands, and the refund row is inserted from its RETURNING row. Concurrent refunds of
   * one order queue on its row lock and re-check the total; a concurrent identical one fails on the
   * unique dedupe_key, which rolls the whole statement back.
   */
  private readonly reserveInOneStatement;

  constructor(db: Kysely<Database>) {
    super(db);
    this.reserveInOneStatement = prepared((p: NewRefund) =>
      db
        .with('dup', (qc) => qc.selectFrom('refunds').select('refund_id').where('dedupe_key', '=', p.dedupe_key))
        .with('upd', (qc) =>
          reserveOnOrder(qc, p)
            .where(sql<boolean>`not exists (select 1 from dup)`)
            .returning('order_id'),
        )
        .with('ins', (qc) =>
          qc
            .insertInto('refunds')
            .columns([
              'refund_id',
              'order_id',
              'refund_amount',
              'reference',
              'dedupe_key',
              'created_at',
              'refund_status',
              'updated_at',
            ])
            .expression((eb) =>
              eb
                .selectFrom('upd')
                .select([
                  eb.cast<string>(eb.val(p.refund_id), 'text').as('refund_id'),
                  'upd.order_id',
                  eb.cast<number>(eb.val(p.refund_amount), 'bigint').as('refund_amount'),
                  eb.cast<string>(eb.val(p.reference), 'text').as('reference'),
                  eb.cast<string | null>(eb.val(p.dedupe_key), 'text').as('dedupe_key'),
                  eb.cast<number>(eb.val(p.created_at), 'bigint').as('created_at'),
                  sql<'pending'>`'pending'`.as('refund_status'),
                  eb.cast<number>(eb.val(p.created_at), 'bigint').as('updated_at'),
                ]),
            )
            .returning('refund_id'),
        )
        .selectNoFrom((eb) => [
          eb.exists(eb.selectFrom('dup').select('refund_id')).as('duplicate'),
          eb.exists(eb.selectFrom('ins').select('refund_id')).as('reserved'),
          eb.selectFrom('transactions').select('status').where('order_id', '=', p.order_id).as('status'),
        ]),
    );
  }

  async reserve(refund: NewRefund, books: RefundBooks): Promise<RefundReservation> {
    try {
      return await this.db.transaction().execute(async (trx): Promise<RefundReservation> => {
        const r = await this.reserveInOneStatement.first(trx, refund);
        if (r?.reserved) {
          // The order's row is locked by the statement; the wallet's balance rows are locked next.
          const short = await bookRefundReserved(trx, refund, books, true);
          if (short) throw new WalletCannotCover(short);
          return { ok: true };
        }
        if (r?.duplicate) return { ok: false, reason: 'duplicate' };
        return refusal(r?.status ? { status: r.status } : undefined);
      });
    } catch (e) {
      if (e instanceof WalletCannotCover) return walletRefusal(e);
      if (isUniqueViolation(e)) return { ok: false, reason: 'duplicate' };
      throw e;
    }
  }

  async fail(refund_id: string, now: number): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      // The order's row is locked first, as a reservation locks it before it inserts into refunds.
      // Taken the other way round, a reservation of the same dedupe_key, waiting on this refund's
      // row for its unique check while holding the order, made a deadlock.
      await trx
        .selectFrom('transactions')
        .select('order_id')
        .where('order_id', '=', (eb) => eb.selectFrom('refunds').select('order_id').where('refund_id', '=', refund_id))
        .forUpdate()
        .execute();
      await this.failIn(trx, refund_id, now);
    });
  }
}
