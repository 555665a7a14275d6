// A column added later with a DEFAULT, which the code does not set, gets its DEFAULT on every
// insert path of the request paths (src/store/README.md, "Adding a column"): a single create and
// the creates of one turn (one JSON statement on PostgreSQL), a renewal's nonce, a settle's
// notification row in one statement and on the general path, a refund, an attempt.
import { paymentEntry } from '../../src/domain/ledger.js';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMerchant, type MerchantCredentials } from '../../src/cli/admin.js';
import type { Transaction } from '../../src/domain/transaction.js';
import type { NewOutboxRow } from '../../src/ports/outbox.js';
import type { SqlStore } from '../../src/store/sql-store.js';
import { ENGINES, storeFor } from '../support/gateway.js';
import { nonceOf, pendingOrder } from '../support/rows.js';

const TABLES = ['transactions', 'nonces', 'outbox', 'refunds', 'notification_attempts'] as const;

describe.each(ENGINES)('a new column with a DEFAULT on %s', (engine) => {
  let store: SqlStore;
  let cleanup: () => void;
  let merchant: MerchantCredentials;
  beforeAll(async () => {
    ({ store, cleanup } = await storeFor(engine));
    // Nullable: a path that named the column would store NULL rather than fail, and be seen here.
    for (const table of TABLES)
      await sql.raw(`alter table ${table} add column added_later integer default 7`).execute(store.db);
    merchant = await createMerchant(store, { name: 'Defaults', currency: 'NZD' });
  });
  afterAll(async () => {
    await store?.close();
    cleanup?.();
  });

  const addedLater = async (table: (typeof TABLES)[number], column: string, value: string) => {
    const { rows } = await sql<{
      added_later: number | null;
    }>`select added_later from ${sql.table(table)} where ${sql.ref(column)} = ${value}`.execute(store.db);
    return rows.map((r) => r.added_later);
  };

  const order = () => pendingOrder(merchant, { amount: 1000 });
  const outbox = (t: Transaction): NewOutboxRow => ({
    event_id: `evt_${t.order_id}_${t.status_seq}`,
    order_id: t.order_id,
    seq: t.status_seq,
    callback_url: t.callback_url,
    callback_host: 'm.example',
    payload: '{}',
    delivery_status: 'pending',
    attempts: 0,
    next_attempt_at: 1,
    claimed_by: null,
    claimed_until: null,
    created_at: 1,
    delivered_at: null,
    attempts_pruned: 0,
    attempts_pruned_until: null,
  });

  it('a create alone, and the creates of one turn: the order and its nonce', async () => {
    const alone = order();
    await store.transactions.insert(alone, nonceOf(alone)).durable;
    const turn = [order(), order(), order()];
    await Promise.all(turn.map((t) => store.transactions.insert(t, nonceOf(t)).durable));
    for (const t of [alone, ...turn]) {
      expect(await addedLater('transactions', 'order_id', t.order_id)).toEqual([7]);
      expect(await addedLater('nonces', 'order_id', t.order_id)).toEqual([7]);
    }
  });

  it("a renewal's nonce", async () => {
    const t = order();
    await store.transactions.insert(t, nonceOf(t)).durable;
    const renewal = {
      return_url: t.return_url,
      callback_url: t.callback_url,
      backPage_url: null,
      ip: t.ip,
      product_name: t.product_name,
      present_qr: null,
      updated_at: t.updated_at + 1,
    };
    await store.transactions.renewPending(t.order_id, renewal, nonceOf(t));
    expect(await addedLater('nonces', 'order_id', t.order_id)).toEqual([7, 7]);
  });

  it("a settle's notification row, from the row as read and on the general path", async () => {
    const read = order();
    await store.transactions.insert(read, nonceOf(read)).durable;
    await store.transactions.settle({ read, to: 'paid', now: 5, status_message: null, msgId: null, outbox });
    expect(await addedLater('outbox', 'order_id', read.order_id)).toEqual([7]);
    // A read from before a renewal with another callback_url: PostgreSQL's one statement does not apply.
    const stale = order();
    await store.transactions.insert(stale, nonceOf(stale)).durable;
    await store.transactions.renewPending(
      stale.order_id,
      { ...stale, callback_url: 'https://m.example/other' },
      nonceOf(stale),
    );
    const settled = await store.transactions.settle({
      read: stale,
      to: 'failed',
      now: 5,
      status_message: null,
      msgId: null,
      outbox,
    });
    expect(settled?.callback_url).toBe('https://m.example/other');
    expect(await addedLater('outbox', 'order_id', stale.order_id)).toEqual([7]);
  });

  it('a refund and a notification attempt', async () => {
    const read = order();
    await store.transactions.insert(read, nonceOf(read)).durable;
    // Paid with its entry: the refund is taken from the wallet's balance.
    const { order_id, wallet_id, amount, currency } = read;
    const entry = paymentEntry({
      order_id,
      wallet_id,
      amount,
      currency,
      charged: { amount, currency },
      provider: 'sandbox',
      fee: 0,
      created_at: 5,
    });
    await store.transactions.settle({ read, to: 'paid', now: 5, status_message: null, msgId: null, outbox, entry });
    const refund_id = `R${read.order_id}`;
    expect(
      await store.refunds.reserve(
        {
          refund_id,
          order_id: read.order_id,
          refund_amount: 100,
          reference: 'r',
          dedupe_key: `${read.order_id}|100|r`,
          created_at: 5,
        },
        { refund_fee: 'none' },
      ),
    ).toEqual({ ok: true });
    expect(await addedLater('refunds', 'refund_id', refund_id)).toEqual([7]);
    const [claimed] = await store.outbox.claimDue({
      claimed_by: 'me',
      now: 10,
      lease_ms: 1000,
      limit: 10,
      per_host: 10,
    });
    expect(claimed?.order_id).toBeDefined();
    await store.outbox.recordAttempt({
      event_id: claimed.event_id,
      claimed_by: 'me',
      claimed_until: claimed.claimed_until!,
      attempt: { attempted_at: 10, http_status: 200, response_excerpt: 'sent', latency_ms: 1, error: null },
      delivered: true,
      next_attempt_at: 10,
      now: 10,
    });
    expect(await addedLater('notification_attempts', 'event_id', claimed.event_id)).toEqual([7]);
  });
});
