import type { Kysely, Migration } from 'kysely';

// Automatic payouts (issue 40): a wallet's sweep setting, and each day's outcome, whose key makes
// a day's automatic payout one, on every instance and after any crash.
export const autoPayouts: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('wallet_auto_payouts')
      .addColumn('wallet_id', 'text', (c) => c.primaryKey().references('wallets.wallet_id'))
      .addColumn('above', 'bigint', (c) => c.notNull())
      .addColumn('keep', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_by', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('auto_payout_days')
      .addColumn('wallet_id', 'text', (c) => c.notNull().references('wallets.wallet_id'))
      .addColumn('day', 'bigint', (c) => c.notNull())
      .addColumn('payout_id', 'text', (c) => c.references('payouts.payout_id'))
      .addColumn('note', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('auto_payout_days_pk', ['wallet_id', 'day'])
      .execute();
  },
};
