import { sql, type Kysely } from 'kysely';
import type { Engine } from './migrations.js';
import { prepared } from './prepared.js';
import type { Database } from './schema.js';
import type { NewRefund, Refund, RefundReservation } from './store.js';

// Refunds: reserving an amount against an order, recording the channel's answer, and the look-ups
// of recovery and the tests. KyselyStore delegates here.

/** A concurrent identical request won the unique dedupe_key: the reservation rolls back. */
class DuplicateRefund extends Error {}

/** PostgreSQL's unique_violation, as a concurrent identical refund raises it on dedupe_key. */
const isUniqueViolation = (e: unknown): boolean => typeof e === 'object' && e !== null && (e as { code?: unknown }).code === '23505';

export function refundStatements(db: Kysely<Database>) {
  return {
    /**
     * PostgreSQL: the whole reservation in one statement (one round trip instead of BEGIN, a
     * look-up, an UPDATE, an INSERT and COMMIT). The order's total grows only if no refund with
     * this dedupe_key exists, the order is paid and the total stays within its amount; the refund
     * row is inserted from the RETURNING row of that update. Concurrent refunds of one order queue
     * on its row lock and re-check the total; a concurrent identical one fails on the unique
     * dedupe_key, which rolls the whole statement back.
     */
    reservePg: prepared((p: NewRefund) =>
      db
        .with('dup', (qc) => qc.selectFrom('refunds').select('refund_id').where('dedupe_key', '=', p.dedupe_key))
        .with('upd', (qc) =>
          qc
            .updateTable('transactions')
            .set({ refunded_amount: sql`refunded_amount + ${p.refund_amount}`, updated_at: p.created_at })
            .where('order_id', '=', p.order_id)
            .where('status', '=', 'paid')
            .where(sql<boolean>`refunded_amount + ${p.refund_amount} <= amount`)
            .where((eb) => eb.not(eb.exists(eb.selectFrom('dup').select('refund_id'))))
            .returning('order_id'),
        )
        .with('ins', (qc) =>
          qc
            .insertInto('refunds')
            .columns(['refund_id', 'order_id', 'refund_amount', 'reference', 'dedupe_key', 'created_at', 'refund_status', 'updated_at'])
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
                  sql<string>`'pending'`.as('refund_status'),
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
    ),
  };
}

export type RefundStatements = ReturnType<typeof refundStatements>;

export async function reserveRefund(db: Kysely<Database>, engine: Engine, q: RefundStatements, refund: NewRefund): Promise<RefundReservation> {
  if (engine === 'postgres') {
    try {
      const r = await q.reservePg.first(db, refund);
      if (r?.reserved) return { ok: true };
      if (r?.duplicate) return { ok: false, reason: 'duplicate' };
      return { ok: false, reason: r?.status === 'paid' ? 'insufficient' : 'not_paid' };
    } catch (e) {
      if (isUniqueViolation(e)) return { ok: false, reason: 'duplicate' };
      throw e;
    }
  }
  // SQLite has no data-modifying CTEs; its transaction is a SAVEPOINT in the group-commit batch.
  return db
    .transaction()
    .execute(async (trx) => {
      if (refund.dedupe_key !== null) {
        const dup = await trx.selectFrom('refunds').select('refund_id').where('dedupe_key', '=', refund.dedupe_key).executeTakeFirst();
        if (dup) return { ok: false as const, reason: 'duplicate' as const };
      }
      const updated = await trx
        .updateTable('transactions')
        .set({ refunded_amount: sql`refunded_amount + ${refund.refund_amount}`, updated_at: refund.created_at })
        .where('order_id', '=', refund.order_id)
        .where('status', '=', 'paid')
        .where(sql<boolean>`refunded_amount + ${refund.refund_amount} <= amount`)
        .returning('order_id')
        .executeTakeFirst();
      if (!updated) {
        const tx = await trx.selectFrom('transactions').select('status').where('order_id', '=', refund.order_id).executeTakeFirst();
        return { ok: false as const, reason: tx?.status === 'paid' ? ('insufficient' as const) : ('not_paid' as const) };
      }
      // The unique dedupe_key makes a concurrent identical request fail here, rolling back the total.
      const inserted = await trx
        .insertInto('refunds')
        .values({ ...refund, refund_status: 'pending', updated_at: refund.created_at })
        .onConflict((oc) => oc.column('dedupe_key').doNothing())
        .returning('refund_id')
        .executeTakeFirst();
      if (!inserted) throw new DuplicateRefund();
      return { ok: true as const };
    })
    .catch((e: unknown) => {
      if (e instanceof DuplicateRefund) return { ok: false as const, reason: 'duplicate' as const };
      throw e;
    });
}

export async function completeRefund(db: Kysely<Database>, refund_id: string, now: number): Promise<void> {
  await db
    .updateTable('refunds')
    .set({ refund_status: 'succeeded', updated_at: now })
    .where('refund_id', '=', refund_id)
    .where('refund_status', '=', 'pending')
    .execute();
}

export async function failRefund(db: Kysely<Database>, engine: Engine, refund_id: string, now: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    if (engine === 'postgres') {
      // The order's row is locked first, as a reservation locks it (reservePg) before it inserts
      // into refunds. Taken the other way round, a reservation of the same dedupe_key, waiting on
      // this refund's row for its unique check while holding the order, made a deadlock.
      await trx
        .selectFrom('transactions')
        .select('order_id')
        .where('order_id', '=', (eb) => eb.selectFrom('refunds').select('order_id').where('refund_id', '=', refund_id))
        .forUpdate()
        .execute();
    }
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
  });
}

export async function listPendingRefunds(db: Kysely<Database>, updatedBefore: number, limit: number): Promise<Refund[]> {
  return db
    .selectFrom('refunds')
    .selectAll()
    .where('refund_status', '=', 'pending')
    .where('updated_at', '<', updatedBefore)
    .orderBy('updated_at')
    .limit(limit)
    .execute();
}

export async function listRefunds(db: Kysely<Database>, order_id: string): Promise<Refund[]> {
  return db.selectFrom('refunds').selectAll().where('order_id', '=', order_id).orderBy('created_at').execute();
}
