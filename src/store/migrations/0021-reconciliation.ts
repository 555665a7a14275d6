import { sql, type Kysely, type Migration } from 'kysely';
import type { Engine } from '../../ports/store.js';

// Reconciliation (issue 41): each provider statement imported (its raw file kept compressed, with
// its hash), its lines and what each matched, each account's day of the import job, and the
// queue of money exceptions from the statements and from the live path alike.
export function reconciliation(engine: Engine): Migration {
  const bytes = engine === 'postgres' ? 'bytea' : 'blob';
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('provider_statements')
        .addColumn('statement_id', 'text', (c) => c.primaryKey())
        .addColumn('provider', 'text', (c) => c.notNull())
        .addColumn('merchant_id', 'text', (c) => c.notNull())
        .addColumn('statement_date', 'text', (c) => c.notNull())
        .addColumn('wallet_id', 'text', (c) => c.notNull())
        .addColumn('payment_method', 'text', (c) => c.notNull())
        .addColumn('format', 'text', (c) => c.notNull())
        .addColumn('raw', sql.raw(bytes), (c) => c.notNull())
        .addColumn('raw_sha256', 'text', (c) => c.notNull())
        .addColumn('line_count', 'integer', (c) => c.notNull())
        .addColumn('matched_count', 'integer', (c) => c.notNull())
        .addColumn('exception_count', 'integer', (c) => c.notNull())
        .addColumn('fees', 'text', (c) => c.notNull())
        .addColumn('source', 'text', (c) => c.notNull())
        .addColumn('imported_at', 'bigint', (c) => c.notNull())
        .addColumn('imported_by', 'text', (c) => c.notNull())
        .addUniqueConstraint('provider_statements_day', ['provider', 'merchant_id', 'statement_date'])
        .execute();
      await db.schema
        .createTable('statement_lines')
        .addColumn('statement_id', 'text', (c) => c.notNull().references('provider_statements.statement_id'))
        .addColumn('line_no', 'integer', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('provider_ref', 'text', (c) => c.notNull())
        .addColumn('out_trade_no', 'text', (c) => c.notNull())
        .addColumn('refund_id', 'text')
        .addColumn('amount', 'bigint', (c) => c.notNull())
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('fee', 'bigint', (c) => c.notNull())
        .addColumn('occurred_at', 'bigint', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('verdict', 'text', (c) => c.notNull())
        .addColumn('order_id', 'text')
        .addColumn('exception_id', 'text')
        .addPrimaryKeyConstraint('statement_lines_pk', ['statement_id', 'line_no'])
        .execute();
      await db.schema.createIndex('statement_lines_payment').on('statement_lines').column('out_trade_no').execute();
      await db.schema.createIndex('statement_lines_refund').on('statement_lines').column('refund_id').execute();
      await db.schema
        .createTable('statement_days')
        .addColumn('provider', 'text', (c) => c.notNull())
        .addColumn('merchant_id', 'text', (c) => c.notNull())
        .addColumn('statement_date', 'text', (c) => c.notNull())
        .addColumn('wallet_id', 'text', (c) => c.notNull())
        .addColumn('payment_method', 'text', (c) => c.notNull())
        .addColumn('statement_id', 'text')
        .addColumn('attempts', 'integer', (c) => c.notNull())
        .addColumn('next_try_at', 'bigint', (c) => c.notNull())
        .addColumn('claimed_until', 'bigint')
        .addColumn('last_error', 'text')
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('statement_days_pk', ['provider', 'merchant_id', 'statement_date'])
        .execute();
      await db.schema
        .createTable('money_exceptions')
        .addColumn('exception_id', 'text', (c) => c.primaryKey())
        .addColumn('dedupe_key', 'text', (c) => c.notNull().unique())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('severity', 'text', (c) => c.notNull())
        .addColumn('exception_status', 'text', (c) => c.notNull().check(sql`exception_status in ('open', 'resolved')`))
        .addColumn('source', 'text', (c) => c.notNull())
        .addColumn('provider', 'text')
        .addColumn('wallet_id', 'text')
        .addColumn('order_id', 'text')
        .addColumn('out_trade_no', 'text')
        .addColumn('refund_id', 'text')
        .addColumn('statement_id', 'text')
        .addColumn('line_no', 'integer')
        .addColumn('detail', 'text', (c) => c.notNull())
        .addColumn('evidence', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('resolved_at', 'bigint')
        .addColumn('resolved_by', 'text')
        .addColumn('resolution', 'text')
        .addColumn('note', 'text')
        .execute();
      await db.schema
        .createIndex('money_exceptions_open')
        .on('money_exceptions')
        .columns(['exception_status', 'kind', 'created_at'])
        .execute();
      await db.schema.createIndex('money_exceptions_order').on('money_exceptions').column('order_id').execute();
    },
  };
}
