import type { Kysely, Migration, MigrationProvider } from 'kysely';
import { sql } from 'kysely';
import type { Engine } from '../ports/store.js';
import { books } from './migrations/0017-books.js';
import { payouts } from './migrations/0018-payouts.js';
import { ledgerDays } from './migrations/0019-ledger-days.js';
import { autoPayouts } from './migrations/0020-auto-payouts.js';
import { reconciliation } from './migrations/0021-reconciliation.js';
import { statementStatus } from './migrations/0022-statement-status.js';
import { consoleLists } from './migrations/0023-console-lists.js';
import { recoveryCodes } from './migrations/0024-two-factor.js';

// One set of migrations for both engines. Append new migrations; never edit a released one.

function serialPk(engine: Engine) {
  return engine === 'postgres' ? ('serial' as const) : ('integer' as const);
}

function initial(engine: Engine): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('organisations')
        .addColumn('organisation_id', serialPk(engine), (c) =>
          engine === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey(),
        )
        .addColumn('organisation_name', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('users')
        .addColumn('user_id', 'text', (c) => c.primaryKey())
        .addColumn('organisation_id', 'integer', (c) => c.notNull().references('organisations.organisation_id'))
        .addColumn('user_name', 'text', (c) => c.notNull())
        .addColumn('user_status', 'text', (c) => c.notNull().check(sql`user_status in ('active', 'disabled')`))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('wallets')
        .addColumn('wallet_id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.user_id'))
        .addColumn('wallet_name', 'text', (c) => c.notNull())
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('api_key', 'text', (c) => c.notNull())
        .addColumn('payment_methods', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('wallets_user_id').on('wallets').column('user_id').execute();

      await db.schema
        .createTable('rates')
        .addColumn('currency_from', 'text', (c) => c.notNull())
        .addColumn('currency_to', 'text', (c) => c.notNull())
        .addColumn('rate_micros', 'bigint', (c) => c.notNull().check(sql`rate_micros > 0`))
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('rates_pk', ['currency_from', 'currency_to'])
        .execute();

      await db.schema
        .createTable('transactions')
        .addColumn('order_id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.user_id'))
        .addColumn('wallet_id', 'text', (c) => c.notNull().references('wallets.wallet_id'))
        .addColumn('merchant_reference', 'text', (c) => c.notNull())
        .addColumn('payment_method', 'text', (c) => c.notNull())
        .addColumn('host_type', 'integer', (c) => c.notNull())
        .addColumn('amount', 'bigint', (c) => c.notNull().check(sql`amount > 0`))
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('amount_cny', 'bigint')
        .addColumn('currency_rate', 'bigint')
        .addColumn('product_name', 'text', (c) => c.notNull())
        .addColumn('return_url', 'text', (c) => c.notNull())
        .addColumn('callback_url', 'text', (c) => c.notNull())
        .addColumn('backPage_url', 'text')
        .addColumn('ip', 'text', (c) => c.notNull())
        .addColumn('present_qr', 'text')
        .addColumn('status', 'text', (c) =>
          c.notNull().check(sql`status in ('pending', 'paid', 'failed', 'rejected', 'canceled')`),
        )
        .addColumn('status_message', 'text')
        .addColumn('msgId', 'text')
        .addColumn('channel', 'text', (c) => c.notNull())
        .addColumn('channel_ref', 'text')
        .addColumn('qr_code_url', 'text')
        .addColumn('channel_state', 'text')
        .addColumn('refunded_amount', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('cancel_locked_until', 'bigint')
        .addColumn('status_seq', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addColumn('pay_time', 'bigint')
        // The refunded total can never pass the paid amount, whatever the code above does.
        .addCheckConstraint('transactions_refund_bound', sql`refunded_amount >= 0 and refunded_amount <= amount`)
        .execute();
      await db.schema
        .createIndex('transactions_user_reference')
        .on('transactions')
        .columns(['user_id', 'merchant_reference'])
        .unique()
        .execute();

      await db.schema
        .createTable('nonces')
        .addColumn('nonce', 'text', (c) => c.primaryKey())
        .addColumn('order_id', 'text', (c) => c.notNull().references('transactions.order_id'))
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('used_at', 'bigint')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('nonces_order_id').on('nonces').column('order_id').execute();

      await db.schema
        .createTable('refunds')
        .addColumn('refund_id', 'text', (c) => c.primaryKey())
        .addColumn('order_id', 'text', (c) => c.notNull().references('transactions.order_id'))
        .addColumn('refund_amount', 'bigint', (c) => c.notNull().check(sql`refund_amount > 0`))
        .addColumn('reference', 'text', (c) => c.notNull())
        .addColumn('refund_status', 'text', (c) =>
          c.notNull().check(sql`refund_status in ('pending', 'succeeded', 'failed')`),
        )
        .addColumn('dedupe_key', 'text', (c) => c.unique())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('refunds_order_id').on('refunds').column('order_id').execute();

      await db.schema
        .createTable('outbox')
        .addColumn('event_id', 'text', (c) => c.primaryKey())
        .addColumn('order_id', 'text', (c) => c.notNull().references('transactions.order_id'))
        .addColumn('seq', 'integer', (c) => c.notNull())
        .addColumn('callback_url', 'text', (c) => c.notNull())
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('delivery_status', 'text', (c) =>
          c.notNull().check(sql`delivery_status in ('pending', 'delivered')`),
        )
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
        .addColumn('claimed_by', 'text')
        .addColumn('claimed_until', 'bigint')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('delivered_at', 'bigint')
        .execute();
      await db.schema.createIndex('outbox_order_seq').on('outbox').columns(['order_id', 'seq']).unique().execute();
      await db.schema.createIndex('outbox_due').on('outbox').columns(['delivery_status', 'next_attempt_at']).execute();

      await db.schema
        .createTable('notification_attempts')
        .addColumn('attempt_id', serialPk(engine), (c) =>
          engine === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey(),
        )
        .addColumn('event_id', 'text', (c) => c.notNull().references('outbox.event_id'))
        .addColumn('attempted_at', 'bigint', (c) => c.notNull())
        .addColumn('http_status', 'integer')
        .addColumn('response_excerpt', 'text')
        .addColumn('latency_ms', 'integer', (c) => c.notNull())
        .addColumn('error', 'text')
        .execute();
      await db.schema
        .createIndex('notification_attempts_event')
        .on('notification_attempts')
        .column('event_id')
        .execute();

      await db.schema
        .createTable('sequences')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('next_value', 'bigint', (c) => c.notNull())
        .execute();
      await db.insertInto('sequences').values({ name: 'order_id', next_value: 1 }).execute();
    },
  };
}

// The hosted checkout page's visit: the first GET of a nonce stores the hash of a random page
// token (sent to the browser as a cookie), so that reloads of that visit keep working.
const checkoutSessions: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable('nonces').addColumn('page_token_hash', 'text').execute();
  },
};

// Notification delivery limits concurrency per merchant server, so the claim query needs the host
// of each row's callback_url as a column. The host is computed here as it was when this migration
// was written, not by live code that may change later (a migration never changes).
function callbackHostOf0002(url: string): string {
  try {
    return new URL(url).host.toLowerCase();
  } catch {
    return '';
  }
}

const outboxCallbackHost: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .alterTable('outbox')
      .addColumn('callback_host', 'text', (c) => c.notNull().defaultTo(''))
      .execute();
    const rows = await db.selectFrom('outbox').select(['event_id', 'callback_url']).execute();
    for (const r of rows) {
      await db
        .updateTable('outbox')
        .set({ callback_host: callbackHostOf0002(r.callback_url) })
        .where('event_id', '=', r.event_id)
        .execute();
    }
  },
};

// Refunds left 'pending' by a crash between reserving and confirming are found again by status.
const pendingRefunds: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createIndex('refunds_status_updated')
      .on('refunds')
      .columns(['refund_status', 'updated_at'])
      .execute();
  },
};

// A wallet may accept the original service's legacy create signature (a concatenation of six
// fields); on by default, so that existing wallets keep accepting the integrations they serve.
const walletLegacySignatures: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .alterTable('wallets')
      .addColumn('legacy_signatures', 'integer', (c) =>
        c
          .notNull()
          .defaultTo(1)
          .check(sql`legacy_signatures in (0, 1)`),
      )
      .execute();
  },
};

// Payment providers: a wallet's account with a provider for a method (its secrets sealed with the
// master key), and the payments opened at a provider for an order, one per flow (QR, redirect,
// JSAPI), each under an out_trade_no of its own.
const channels: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('channel_accounts')
      .addColumn('wallet_id', 'text', (c) => c.notNull().references('wallets.wallet_id'))
      .addColumn('payment_method', 'text', (c) => c.notNull())
      .addColumn('provider', 'text', (c) => c.notNull().check(sql`provider in ('sandbox', 'alipay', 'wechatpay')`))
      .addColumn('config', 'text', (c) => c.notNull())
      .addColumn('sealed_secrets', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('channel_accounts_pk', ['wallet_id', 'payment_method'])
      .execute();
    await db.schema.createIndex('channel_accounts_provider').on('channel_accounts').column('provider').execute();
    await db.schema
      .createTable('channel_payments')
      .addColumn('out_trade_no', 'text', (c) => c.primaryKey())
      .addColumn('order_id', 'text', (c) => c.notNull().references('transactions.order_id'))
      .addColumn('provider', 'text', (c) => c.notNull())
      .addColumn('flow', 'text', (c) => c.notNull().check(sql`flow in ('qr', 'redirect', 'jsapi')`))
      .addColumn('charged_amount', 'bigint', (c) => c.notNull().check(sql`charged_amount > 0`))
      .addColumn('charged_currency', 'text', (c) => c.notNull())
      .addColumn('payload', 'text')
      .addColumn('state', 'text', (c) =>
        c
          .notNull()
          .defaultTo('open')
          .check(sql`state in ('open', 'paid', 'closed')`),
      )
      .addColumn('provider_ref', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('next_check_at', 'bigint', (c) => c.notNull())
      .addColumn('check_claimed_until', 'bigint')
      .execute();
    await db.schema
      .createIndex('channel_payments_order_flow')
      .on('channel_payments')
      .columns(['order_id', 'flow'])
      .unique()
      .execute();
    await db.schema
      .createIndex('channel_payments_due')
      .on('channel_payments')
      .columns(['state', 'next_check_at'])
      .execute();
    // Expiry looks for pending orders by age.
    await db.schema
      .createIndex('transactions_status_created')
      .on('transactions')
      .columns(['status', 'created_at'])
      .execute();
    // What a refund gives back in the currency its provider payment charged (CNY for a domestic account).
    await db.schema.alterTable('refunds').addColumn('channel_amount', 'bigint').execute();
  },
};

// What a provider payment was opened with besides its charge (the description, the customer's IP,
// JSAPI's payer): a re-create of the order may change the first two, but asking the provider again
// must ask for the same payment, or it refuses the out_trade_no as used for another.
const paymentRequest: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable('channel_payments').addColumn('description', 'text').execute();
    await db.schema.alterTable('channel_payments').addColumn('client_ip', 'text').execute();
    await db.schema.alterTable('channel_payments').addColumn('payer', 'text').execute();
  },
};

// The console: its users (operators and merchants' users, apart from the API's users), their
// sessions and one-time links (only hashes stored), login throttling, and the audit log, which
// refuses any change to a row it holds (a trigger on each engine).
function consoleTables(engine: Engine): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('console_users')
        .addColumn('console_user_id', 'text', (c) => c.primaryKey())
        .addColumn('email', 'text', (c) => c.notNull().unique())
        .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('operator', 'merchant')`))
        .addColumn('role', 'text', (c) => c.notNull().check(sql`role in ('admin', 'support', 'owner', 'staff')`))
        .addColumn('organisation_id', 'integer', (c) => c.references('organisations.organisation_id'))
        .addColumn('password_hash', 'text')
        .addColumn('totp_sealed', 'text')
        .addColumn('status', 'text', (c) =>
          c
            .notNull()
            .defaultTo('active')
            .check(sql`status in ('active', 'disabled')`),
        )
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addCheckConstraint(
          'console_users_scope',
          sql`(kind = 'operator' and organisation_id is null and role in ('admin', 'support')) or (kind = 'merchant' and organisation_id is not null and role in ('owner', 'staff'))`,
        )
        .execute();
      await db.schema
        .createTable('console_sessions')
        .addColumn('session_hash', 'text', (c) => c.primaryKey())
        .addColumn('console_user_id', 'text', (c) => c.notNull().references('console_users.console_user_id'))
        .addColumn('data', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('last_seen_at', 'bigint', (c) => c.notNull())
        .addColumn('ip', 'text')
        .execute();
      await db.schema.createIndex('console_sessions_user').on('console_sessions').column('console_user_id').execute();
      await db.schema
        .createTable('console_tokens')
        .addColumn('token_hash', 'text', (c) => c.primaryKey())
        .addColumn('console_user_id', 'text', (c) => c.notNull().references('console_users.console_user_id'))
        .addColumn('purpose', 'text', (c) => c.notNull().check(sql`purpose in ('set_password')`))
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('used_at', 'bigint')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('console_throttle')
        .addColumn('throttle_key', 'text', (c) => c.primaryKey())
        .addColumn('failures', 'integer', (c) => c.notNull())
        .addColumn('window_start', 'bigint', (c) => c.notNull())
        .addColumn('locked_until', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('console_settings')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('audit_log')
        .addColumn('audit_id', serialPk(engine), (c) =>
          engine === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey(),
        )
        .addColumn('at', 'bigint', (c) => c.notNull())
        .addColumn('actor', 'text', (c) => c.notNull())
        .addColumn('actor_kind', 'text', (c) =>
          c.notNull().check(sql`actor_kind in ('operator', 'merchant', 'cli', 'anonymous')`),
        )
        .addColumn('organisation_id', 'integer')
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('object', 'text')
        .addColumn('ip', 'text')
        .addColumn('before', 'text')
        .addColumn('after', 'text')
        .execute();
      await db.schema.createIndex('audit_log_at').on('audit_log').column('at').execute();
      // The console's lists: newest first, all orders (operators) or one organisation's users' (merchants).
      await db.schema
        .createIndex('transactions_created')
        .on('transactions')
        .columns(['created_at', 'order_id'])
        .execute();
      await db.schema
        .createIndex('transactions_user_created')
        .on('transactions')
        .columns(['user_id', 'created_at', 'order_id'])
        .execute();
      if (engine === 'sqlite') {
        await sql`create trigger audit_log_no_update before update on audit_log begin select raise(abort, 'the audit log is append-only'); end`.execute(
          db,
        );
        await sql`create trigger audit_log_no_delete before delete on audit_log begin select raise(abort, 'the audit log is append-only'); end`.execute(
          db,
        );
      } else {
        await sql`create function audit_log_append_only() returns trigger language plpgsql as $$ begin raise exception 'the audit log is append-only'; end $$`.execute(
          db,
        );
        await sql`create trigger audit_log_append_only before update or delete on audit_log for each row execute function audit_log_append_only()`.execute(
          db,
        );
        await sql`create trigger audit_log_no_truncate before truncate on audit_log for each statement execute function audit_log_append_only()`.execute(
          db,
        );
      }
    },
  };
}

// A wallet's key rotated from the console keeps verifying requests until previous_key_expires_at
// (the overlap window); a console user's last accepted TOTP step, so that a code is used once.
const keyOverlapAndTotpStep: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable('wallets').addColumn('previous_api_key', 'text').execute();
    await db.schema.alterTable('wallets').addColumn('previous_key_expires_at', 'bigint').execute();
    await db.schema.alterTable('console_users').addColumn('totp_last_step', 'bigint').execute();
    // The history of one kind of change (an exchange rate's), newest first.
    await db.schema.createIndex('audit_log_action').on('audit_log').columns(['action', 'audit_id']).execute();
  },
};

// Retention (usecases/retention.ts). A notification keeps how many of its attempts were removed and
// when the latest of them was made, so that its history shows the gap. A partial index finds the
// notifications delivered and still holding attempts without reading an outbox that grows with
// every order. The nonces have none: every create would pay for an entry; retention sweeps them by
// primary key instead (docs/design/retention.md).
const retention: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .alterTable('outbox')
      .addColumn('attempts_pruned', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.alterTable('outbox').addColumn('attempts_pruned_until', 'bigint').execute();
    await db.schema
      .createIndex('outbox_holding_attempts')
      .on('outbox')
      .columns(['delivery_status', 'delivered_at'])
      .where(sql<boolean>`attempts > attempts_pruned`)
      .execute();
  },
};

// A wallet disabled on its own (the console's operators; `gateway wallet disable`): no new orders.
const walletStatus: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .alterTable('wallets')
      .addColumn('wallet_status', 'text', (c) =>
        c
          .notNull()
          .defaultTo('active')
          .check(sql`wallet_status in ('active', 'disabled')`),
      )
      .execute();
  },
};

// The notification claim walks the pending rows host by host (store/outbox/base.ts claimStatement):
// the hosts with a pending row, then each one's first due rows. Partial: delivered rows, nearly all
// of the outbox, are not in it.
const outboxHostDue: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createIndex('outbox_host_due')
      .on('outbox')
      .columns(['callback_host', 'next_attempt_at', 'event_id'])
      .where(sql.ref('delivery_status'), '=', 'pending')
      .execute();
  },
};

// The console finds an order by the provider's own id of its payment (Alipay's trade_no, WeChat
// Pay's transaction_id: what a customer's receipt and the provider's support name). Partial: a
// payment nobody paid has none.
const providerRef: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createIndex('channel_payments_provider_ref')
      .on('channel_payments')
      .column('provider_ref')
      .where(sql.ref('provider_ref'), 'is not', null)
      .execute();
  },
};

// A provider is a connector's folder and a line in its registry (connectors/registry.ts), which
// validates the name: the table no longer lists them. SQLite cannot drop a constraint, so the table
// is made again without it, its rows copied.
function providersFromTheRegistry(engine: Engine): Migration {
  return {
    async up(db: Kysely<any>) {
      if (engine === 'postgres') {
        await sql`alter table channel_accounts drop constraint if exists channel_accounts_provider_check`.execute(db);
        return;
      }
      await db.schema
        .createTable('channel_accounts_0014')
        .addColumn('wallet_id', 'text', (c) => c.notNull().references('wallets.wallet_id'))
        .addColumn('payment_method', 'text', (c) => c.notNull())
        .addColumn('provider', 'text', (c) => c.notNull())
        .addColumn('config', 'text', (c) => c.notNull())
        .addColumn('sealed_secrets', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('channel_accounts_pk', ['wallet_id', 'payment_method'])
        .execute();
      await sql`insert into channel_accounts_0014 (wallet_id, payment_method, provider, config, sealed_secrets, created_at, updated_at)
        select wallet_id, payment_method, provider, config, sealed_secrets, created_at, updated_at from channel_accounts`.execute(
        db,
      );
      await db.schema.dropTable('channel_accounts').execute();
      await sql`alter table channel_accounts_0014 rename to channel_accounts`.execute(db);
      await db.schema.createIndex('channel_accounts_provider').on('channel_accounts').column('provider').execute();
    },
  };
}

// A customer who abandons a bank's payment (POLi's Cancelled, Failed, TimedOut) may try again on
// the same order: the next payment of the same flow is a new attempt, under an out_trade_no of its
// own (outTradeNo). And the flows of the bank-transfer providers: UnionPay's signed form and
// PayID's transfer. SQLite cannot change a CHECK, so the table is made again, its rows copied.
function paymentAttempts(engine: Engine): Migration {
  const FLOWS = sql`flow in ('qr', 'redirect', 'jsapi', 'form', 'transfer')`;
  return {
    async up(db: Kysely<any>) {
      if (engine === 'postgres') {
        await sql`alter table channel_payments drop constraint if exists channel_payments_flow_check`.execute(db);
        await sql`alter table channel_payments add constraint channel_payments_flow_check check (${FLOWS})`.execute(db);
        await sql`alter table channel_payments add column attempt integer not null default 1 check (attempt >= 1)`.execute(
          db,
        );
      } else {
        await db.schema
          .createTable('channel_payments_0015')
          .addColumn('out_trade_no', 'text', (c) => c.primaryKey())
          .addColumn('order_id', 'text', (c) => c.notNull().references('transactions.order_id'))
          .addColumn('provider', 'text', (c) => c.notNull())
          .addColumn('flow', 'text', (c) => c.notNull().check(FLOWS))
          .addColumn('attempt', 'integer', (c) =>
            c
              .notNull()
              .defaultTo(1)
              .check(sql`attempt >= 1`),
          )
          .addColumn('charged_amount', 'bigint', (c) => c.notNull().check(sql`charged_amount > 0`))
          .addColumn('charged_currency', 'text', (c) => c.notNull())
          .addColumn('payload', 'text')
          .addColumn('state', 'text', (c) =>
            c
              .notNull()
              .defaultTo('open')
              .check(sql`state in ('open', 'paid', 'closed')`),
          )
          .addColumn('provider_ref', 'text')
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addColumn('updated_at', 'bigint', (c) => c.notNull())
          .addColumn('next_check_at', 'bigint', (c) => c.notNull())
          .addColumn('check_claimed_until', 'bigint')
          .addColumn('description', 'text')
          .addColumn('client_ip', 'text')
          .addColumn('payer', 'text')
          .execute();
        const columns = sql.raw(
          'out_trade_no, order_id, provider, flow, charged_amount, charged_currency, payload, state, provider_ref, created_at, updated_at, next_check_at, check_claimed_until, description, client_ip, payer',
        );
        await sql`insert into channel_payments_0015 (${columns}) select ${columns} from channel_payments`.execute(db);
        await db.schema.dropTable('channel_payments').execute();
        await sql`alter table channel_payments_0015 rename to channel_payments`.execute(db);
        await db.schema
          .createIndex('channel_payments_due')
          .on('channel_payments')
          .columns(['state', 'next_check_at'])
          .execute();
        await db.schema
          .createIndex('channel_payments_provider_ref')
          .on('channel_payments')
          .column('provider_ref')
          .where(sql.ref('provider_ref'), 'is not', null)
          .execute();
      }
      await db.schema.dropIndex('channel_payments_order_flow').ifExists().execute();
      await db.schema
        .createIndex('channel_payments_order_flow_attempt')
        .on('channel_payments')
        .columns(['order_id', 'flow', 'attempt'])
        .unique()
        .execute();
    },
  };
}

// The books (issue 40): journal entries, appended and never changed, each with a key from the event
// that posted it (so that posting it again posts nothing); their lines, balanced per currency in
// the entry (domain/ledger.ts); and the running balance of each wallet account, kept in the same
// atomic unit as the lines it sums (the operator's accounts are summed from their lines when asked:
// a row every settle updated would make every settle wait for the one before it).
const ledger: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('ledger_entries')
      .addColumn('entry_key', 'text', (c) => c.primaryKey())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('wallet_id', 'text')
      .addColumn('order_id', 'text')
      .addColumn('refund_id', 'text')
      .addColumn('payout_id', 'text')
      .addColumn('memo', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('ledger_entries_order').on('ledger_entries').column('order_id').execute();
    await db.schema
      .createIndex('ledger_entries_wallet_time')
      .on('ledger_entries')
      .columns(['wallet_id', 'created_at'])
      .execute();
    await db.schema
      .createTable('ledger_lines')
      .addColumn('entry_key', 'text', (c) => c.notNull().references('ledger_entries.entry_key'))
      .addColumn('line_no', 'integer', (c) => c.notNull())
      .addColumn('account', 'text', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('amount', 'bigint', (c) => c.notNull().check(sql`amount <> 0`))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('ledger_lines_pk', ['entry_key', 'line_no'])
      .execute();
    await db.schema
      .createIndex('ledger_lines_account_time')
      .on('ledger_lines')
      .columns(['account', 'currency', 'created_at'])
      .execute();
    await db.schema
      .createTable('ledger_balances')
      .addColumn('account', 'text', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('balance', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('ledger_balances_pk', ['account', 'currency'])
      .execute();
    // Fee plans: a version per change, never rewritten (domain/fees.ts).
    await db.schema
      .createTable('fee_plans')
      .addColumn('wallet_id', 'text', (c) => c.notNull().references('wallets.wallet_id'))
      .addColumn('payment_method', 'text', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull().check(sql`version >= 1`))
      .addColumn('basis_points', 'integer', (c) => c.notNull().check(sql`basis_points between 0 and 10000`))
      .addColumn('fixed', 'bigint', (c) => c.notNull().check(sql`fixed >= 0`))
      .addColumn('minimum', 'bigint', (c) => c.check(sql`minimum >= 0`))
      .addColumn('maximum', 'bigint', (c) => c.check(sql`maximum >= 0`))
      .addColumn('refund_fee', 'text', (c) => c.notNull().check(sql`refund_fee in ('none', 'pro_rata')`))
      .addColumn('effective_from', 'bigint', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('created_by', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('fee_plans_pk', ['wallet_id', 'payment_method', 'version'])
      .execute();
    // Orders paid before the ledger: each payment's entry, as the settle posts it for an order
    // charged in its own currency, without a fee (there were no plans), dated when it was paid.
    const paid = sql`from transactions where status = 'paid'`;
    const at = sql`coalesce(pay_time, updated_at)`;
    await sql`insert into ledger_entries (entry_key, kind, wallet_id, order_id, memo, created_at)
      select 'payment:' || order_id, 'payment', wallet_id, order_id, 'posted by migration 0016: paid before the ledger', ${at} ${paid}`.execute(
      db,
    );
    await sql`insert into ledger_lines (entry_key, line_no, account, currency, amount, created_at)
      select 'payment:' || order_id, 1, 'provider:' || channel || ':' || wallet_id, currency, amount, ${at} ${paid}`.execute(
      db,
    );
    await sql`insert into ledger_lines (entry_key, line_no, account, currency, amount, created_at)
      select 'payment:' || order_id, 2, 'wallet:' || wallet_id || ':pending', currency, -amount, ${at} ${paid}`.execute(
      db,
    );
    await sql`insert into ledger_balances (account, currency, balance, updated_at)
      select 'wallet:' || wallet_id || ':pending', currency, -sum(amount), max(${at}) ${paid} group by wallet_id, currency`.execute(
      db,
    );
  },
};

export function migrationProvider(engine: Engine): MigrationProvider {
  return {
    async getMigrations() {
      return {
        '0001_initial': initial(engine),
        '0002_outbox_callback_host': outboxCallbackHost,
        '0003_checkout_sessions': checkoutSessions,
        '0004_pending_refunds': pendingRefunds,
        '0005_wallet_legacy_signatures': walletLegacySignatures,
        '0006_channels': channels,
        '0007_payment_request': paymentRequest,
        '0008_console': consoleTables(engine),
        '0009_key_overlap_totp_step': keyOverlapAndTotpStep,
        '0010_retention': retention,
        '0011_wallet_status': walletStatus,
        '0012_outbox_host_due': outboxHostDue,
        '0013_provider_ref': providerRef,
        '0014_providers_from_the_registry': providersFromTheRegistry(engine),
        '0015_payment_attempts': paymentAttempts(engine),
        '0016_ledger': ledger,
        '0017_books': books,
        '0018_payouts': payouts,
        '0019_ledger_days': ledgerDays,
        '0020_auto_payouts': autoPayouts,
        '0021_reconciliation': reconciliation(engine),
        '0022_statement_status': statementStatus,
        '0023_console_lists': consoleLists,
        '0024_recovery_codes_and_closing': recoveryCodes,
      };
    },
  };
}
