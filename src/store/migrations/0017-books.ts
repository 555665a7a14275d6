import { sql, type Kysely, type Migration } from 'kysely';
import { providerAccount } from '../../domain/ledger.js';
import { refundMadeEntry, refundReservedEntry } from '../../domain/ledger-refund.js';
import { proRata } from '../../domain/money.js';
import { postIn } from '../ledger/refund-books.js';
import type { Database } from '../schema.js';

// The books' second step (issue 40): refunds on the ledger, with the entries of refunds made or
// pending before it; each wallet's settlement delay and limits.

const MEMO = 'posted by migration 0017: refunded before the ledger held refunds';

export const books: Migration = {
  async up(db: Kysely<any>) {
    // A wallet's settlement delay in whole days (no row: the default, 2).
    await db.schema
      .createTable('wallet_settlement')
      .addColumn('wallet_id', 'text', (c) => c.primaryKey().references('wallets.wallet_id'))
      .addColumn('delay_days', 'integer', (c) => c.notNull().check(sql`delay_days between 0 and 365`))
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_by', 'text', (c) => c.notNull())
      .execute();
    // A wallet's limits, for every method ('') or one; a null is no limit.
    await db.schema
      .createTable('wallet_limits')
      .addColumn('wallet_id', 'text', (c) => c.notNull().references('wallets.wallet_id'))
      .addColumn('payment_method', 'text', (c) => c.notNull())
      .addColumn('single_min', 'bigint', (c) => c.check(sql`single_min >= 0`))
      .addColumn('single_max', 'bigint', (c) => c.check(sql`single_max >= 0`))
      .addColumn('daily_max', 'bigint', (c) => c.check(sql`daily_max >= 0`))
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_by', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('wallet_limits_pk', ['wallet_id', 'payment_method'])
      .execute();
    // The daily total of a wallet's paid orders (limits) and its settlement's reads by time.
    await db.schema
      .createIndex('transactions_wallet_paid')
      .on('transactions')
      .columns(['wallet_id', 'pay_time'])
      .where(sql.ref('status'), '=', 'paid')
      .execute();

    // Refunds standing before: each one's amount taken from its wallet's pending balance (where
    // every payment before was posted) without a fee back (no plan gave one back), and those the
    // provider made, made. Dated when they were asked for and when they ended.
    const trx = db as Kysely<Database>;
    const refunds = await trx
      .selectFrom('refunds as r')
      .innerJoin('transactions as t', 't.order_id', 'r.order_id')
      .select([
        'r.refund_id',
        'r.order_id',
        'r.refund_amount',
        'r.channel_amount',
        'r.refund_status',
        'r.created_at',
        'r.updated_at',
        't.wallet_id',
        't.currency',
        't.amount',
        't.channel',
      ])
      .where('r.refund_status', 'in', ['pending', 'succeeded'])
      .orderBy('r.created_at')
      .execute();
    for (const r of refunds) {
      const base = {
        refund_id: r.refund_id,
        order_id: r.order_id,
        wallet_id: r.wallet_id,
        currency: r.currency,
        amount: Number(r.refund_amount),
      };
      const reserved = refundReservedEntry({
        ...base,
        fee_back: 0,
        take: { pending: base.amount, available: 0 },
        created_at: Number(r.created_at),
      });
      await postIn(trx, { ...reserved, memo: MEMO }, { days: false });
      if (r.refund_status !== 'succeeded') continue;
      const provider = await trx
        .selectFrom('ledger_lines')
        .select(['account', 'currency', 'amount'])
        .where('entry_key', '=', `payment:${r.order_id}`)
        .where('account', 'like', 'provider:%')
        .executeTakeFirst();
      const account = provider?.account ?? providerAccount(r.channel, r.wallet_id);
      const currency = provider?.currency ?? r.currency;
      const charged =
        currency === r.currency
          ? base.amount
          : (r.channel_amount ?? proRata(base.amount, Number(r.amount), Number(provider!.amount)));
      const made = refundMadeEntry({
        ...base,
        provider_account: account,
        charged: { amount: Number(charged), currency },
        created_at: Number(r.updated_at),
      });
      await postIn(trx, { ...made, memo: MEMO }, { days: false });
    }
  },
};
