import { sql, type Kysely, type Migration } from 'kysely';

// Payouts (issue 40): merchants' bank accounts, payouts and the bank files they are batched into.
export const payouts: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('bank_accounts')
      .addColumn('bank_account_id', 'text', (c) => c.primaryKey())
      .addColumn('wallet_id', 'text', (c) => c.notNull().references('wallets.wallet_id'))
      .addColumn('currency', 'text', (c) => c.notNull().check(sql`currency in ('AUD', 'NZD')`))
      .addColumn('holder', 'text', (c) => c.notNull())
      .addColumn('bsb', 'text')
      .addColumn('account_number', 'text', (c) => c.notNull())
      .addColumn('verified_at', 'bigint')
      .addColumn('verified_by', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('created_by', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('bank_accounts_wallet').on('bank_accounts').column('wallet_id').execute();
    await db.schema
      .createTable('payout_batches')
      .addColumn('batch_id', 'text', (c) => c.primaryKey())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('payout_count', 'integer', (c) => c.notNull())
      .addColumn('total', 'bigint', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('created_by', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('payouts')
      .addColumn('payout_id', 'text', (c) => c.primaryKey())
      .addColumn('wallet_id', 'text', (c) => c.notNull().references('wallets.wallet_id'))
      .addColumn('bank_account_id', 'text', (c) => c.notNull().references('bank_accounts.bank_account_id'))
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('amount', 'bigint', (c) => c.notNull().check(sql`amount > 0`))
      .addColumn('fee', 'bigint', (c) => c.notNull().check(sql`fee >= 0`))
      .addColumn('payout_status', 'text', (c) =>
        c.notNull().check(sql`payout_status in ('requested', 'approved', 'in_batch', 'paid', 'returned', 'canceled')`),
      )
      .addColumn('batch_id', 'text', (c) => c.references('payout_batches.batch_id'))
      .addColumn('return_reason', 'text')
      .addColumn('requested_at', 'bigint', (c) => c.notNull())
      .addColumn('requested_by', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_by', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('payouts_wallet').on('payouts').columns(['wallet_id', 'requested_at']).execute();
    await db.schema.createIndex('payouts_status').on('payouts').columns(['payout_status', 'currency']).execute();
  },
};
