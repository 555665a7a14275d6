import { sql, type Kysely, type Migration } from 'kysely';

// Each wallet account's movement per day (UTC), kept beside its balance by every posting: a
// statement's opening balances are the days before it added up, not every line before it. And an
// account's lines indexed in a statement's order (time, then entry), so that a page of them is read
// in order from the index, also among many lines of one millisecond.
export const ledgerDays: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('ledger_days')
      .addColumn('account', 'text', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('day', 'bigint', (c) => c.notNull())
      .addColumn('amount', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('ledger_days_pk', ['account', 'currency', 'day'])
      .execute();
    await db.schema
      .createIndex('ledger_lines_account_order')
      .on('ledger_lines')
      .columns(['account', 'currency', 'created_at', 'entry_key'])
      .execute();
    await db.schema.dropIndex('ledger_lines_account_time').execute();
    await sql`insert into ledger_days (account, currency, day, amount)
      select account, currency, (created_at / 86400000) * 86400000, sum(amount)
      from ledger_lines where account like 'wallet:%'
      group by account, currency, (created_at / 86400000) * 86400000`.execute(db);
  },
};
