// The store's statements compiled once (src/store/prepared.ts, src/store/transactions/):
// their column lists cover the tables, and they read and write exactly what the same queries
// built by Kysely on every call do, with the same row shapes and value types on both engines.
// (Over 300 lines: every request path's statement side by side with its ad hoc twin.)
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { sql, type CompiledQuery } from 'kysely';
import { createMerchant, type MerchantCredentials } from '../../src/cli/admin.js';
import {
  NEW_PAYMENT_COLUMNS,
  NONCE_COLUMNS,
  OUTBOX_COLUMNS,
  RESULT_COLUMNS,
  TRANSACTION_COLUMNS,
} from '../../src/store/columns.js';
import type { SqlStore } from '../../src/store/sql-store.js';
import type { Transaction as NewTransaction } from '../../src/domain/transaction.js';
import type { Nonce } from '../../src/ports/transactions.js';
import { ENGINES, storeFor, uniqueRef } from '../support/gateway.js';

describe.each(ENGINES)('prepared store statements on %s', (engine) => {
  let store: SqlStore;
  let cleanup: () => void;
  let merchant: MerchantCredentials;
  let seq = 0;
  beforeAll(async () => {
    ({ store, cleanup } = await storeFor(engine));
    merchant = await createMerchant(store, { name: 'Prepared', currency: 'NZD' });
    await store.accounts.setRate('NZD', 'CNY', 4_644_300, 1);
  });
  afterAll(async () => {
    await store?.close();
    cleanup?.();
  });

  async function tableColumns(table: string): Promise<string[]> {
    if (engine === 'sqlite') {
      const { rows } = await sql<{ name: string }>`select name from pragma_table_info(${table})`.execute(store.db);
      return rows.map((r) => r.name);
    }
    const { rows } = await sql<{ name: string }>`select column_name as name from information_schema.columns
      where table_schema = current_schema() and table_name = ${table}`.execute(store.db);
    return rows.map((r) => r.name);
  }

  it('the insert column lists name every column of their tables', async () => {
    expect([...TRANSACTION_COLUMNS].sort()).toEqual((await tableColumns('transactions')).sort());
    expect([...NONCE_COLUMNS].sort()).toEqual((await tableColumns('nonces')).sort());
    expect([...OUTBOX_COLUMNS].sort()).toEqual((await tableColumns('outbox')).sort());
    // A new provider payment leaves its state, payload, provider_ref and claim to their DEFAULTs.
    const defaulted = ['state', 'payload', 'provider_ref', 'check_claimed_until'];
    expect([...NEW_PAYMENT_COLUMNS, ...defaulted].sort()).toEqual((await tableColumns('channel_payments')).sort());
  });

  /** An order with every column set, its keys in an order of their own (reversed). */
  function newOrder(over: Partial<NewTransaction> = {}): NewTransaction {
    const now = 1_700_000_000_000 + ++seq;
    const tx: NewTransaction = {
      order_id: `P${process.pid}${now}`,
      user_id: merchant.user_id,
      wallet_id: merchant.wallet_id,
      merchant_reference: uniqueRef('prep'),
      payment_method: 'alipay',
      host_type: 1,
      amount: 12_345,
      currency: 'NZD',
      amount_cny: 57_331,
      currency_rate: 4_644_300,
      product_name: 'Pinot',
      return_url: 'https://m.example/return',
      callback_url: 'https://m.example/cb',
      backPage_url: 'https://m.example/back',
      ip: '10.0.0.1',
      present_qr: '1',
      status: 'pending',
      status_message: null,
      msgId: null,
      channel: 'sandbox',
      channel_ref: 'sandbox-x',
      qr_code_url: 'https://g.example/qr',
      channel_state: null,
      refunded_amount: 0,
      cancel_locked_until: 99,
      status_seq: 0,
      created_at: now,
      updated_at: now + 1,
      pay_time: null,
      ...over,
    };
    return Object.fromEntries(Object.entries(tx).reverse()) as NewTransaction;
  }
  const nonceFor = (order_id: string, over: Partial<Nonce> = {}): Nonce => ({
    page_token_hash: null,
    created_at: 5,
    used_at: null,
    expires_at: Date.now() + 60_000,
    order_id,
    nonce: uniqueRef('n'),
    ...over,
  });

  const adHoc = (order_id: string) =>
    store.db.selectFrom('transactions').selectAll().where('order_id', '=', order_id).executeTakeFirstOrThrow();

  it('inserts an order column by column, whatever the order of the caller keys, and reads it back as Kysely does', async () => {
    const tx = newOrder();
    const nonce = nonceFor(tx.order_id);
    expect(await store.transactions.insert(tx, nonce).durable).toEqual({ created: true });
    const expected = await adHoc(tx.order_id);
    expect(expected).toEqual(tx);
    expect(typeof expected.amount).toBe('number');
    expect(typeof expected.created_at).toBe('number');
    expect(await store.transactions.find(tx.order_id)).toStrictEqual(expected);
    expect(await store.transactions.findByReference(tx.user_id, tx.merchant_reference)).toStrictEqual(expected);
    expect(await store.transactions.find('no-such-order')).toBeUndefined();
    expect(await store.transactions.findByReference(tx.user_id, 'no-such-reference')).toBeUndefined();
    // A query's read: exactly the result columns, with the same values and types as the whole row.
    const result = await store.transactions.findResult(tx.user_id, tx.merchant_reference);
    expect(Object.keys(result!).sort()).toEqual([...RESULT_COLUMNS].sort());
    expect(result).toStrictEqual(Object.fromEntries(RESULT_COLUMNS.map((c) => [c, expected[c]])));
    expect(await store.transactions.findResult(tx.user_id, 'no-such-reference')).toBeUndefined();
    const nonceRow = await store.db
      .selectFrom('nonces')
      .selectAll()
      .where('nonce', '=', nonce.nonce)
      .executeTakeFirstOrThrow();
    expect(nonceRow).toEqual({ ...nonce, used_at: null, page_token_hash: null });
  });

  it('query reads made in the same turn (one batched statement on postgres) each get their own order or nothing', async () => {
    const other = await createMerchant(store, { name: 'Prepared other', currency: 'NZD' });
    const mine = Array.from({ length: 12 }, () => newOrder());
    // The other merchant's orders reuse some of this merchant's references: the pair must match, not the reference.
    const theirs = mine.slice(0, 4).map((t) =>
      newOrder({
        order_id: `${t.order_id}x`,
        user_id: other.user_id,
        wallet_id: other.wallet_id,
        merchant_reference: t.merchant_reference,
      }),
    );
    const onlyTheirs = newOrder({ user_id: other.user_id, wallet_id: other.wallet_id });
    for (const tx of [...mine, ...theirs, onlyTheirs])
      expect(await store.transactions.insert(tx, nonceFor(tx.order_id)).durable).toEqual({ created: true });
    const asks: Array<[string, string]> = [
      ...mine.map((t): [string, string] => [t.user_id, t.merchant_reference]),
      ...theirs.map((t): [string, string] => [t.user_id, t.merchant_reference]),
      [merchant.user_id, onlyTheirs.merchant_reference],
      [merchant.user_id, 'no-such-reference'],
      [merchant.user_id, mine[0].merchant_reference], // the same key twice in one batch
    ];
    const got = await Promise.all(asks.map(([u, r]) => store.transactions.findResult(u, r)));
    const want = await Promise.all(
      asks.map(async ([u, r]) => {
        const row = await store.db
          .selectFrom('transactions')
          .select(RESULT_COLUMNS)
          .where('user_id', '=', u)
          .where('merchant_reference', '=', r)
          .executeTakeFirst();
        return row;
      }),
    );
    expect(got).toStrictEqual(want);
    expect(got.filter((g) => g === undefined)).toHaveLength(2);
    expect(got.slice(12, 16).map((g) => g!.order_id)).toEqual(theirs.map((t) => t.order_id));
  });

  /** The statements the store runs while `work` runs (spied on its Kysely instance). */
  async function statementsDuring<T>(work: () => Promise<T>): Promise<{ out: T; sql: string[] }> {
    const spy = vi.spyOn(store.db, 'executeQuery');
    try {
      const out = await work();
      return { out, sql: spy.mock.calls.map((c) => (c[0] as CompiledQuery).sql) };
    } finally {
      spy.mockRestore();
    }
  }

  it('creates made in the same turn (one statement on postgres): each created once, a duplicate reference gets the existing order', async () => {
    const before = newOrder();
    expect(await store.transactions.insert(before, nonceFor(before.order_id)).durable).toEqual({ created: true });
    const fresh = Array.from({ length: 8 }, () => newOrder());
    // Text the JSON rows of a batch must carry exactly: quotes, backslashes, non-ASCII, emoji.
    fresh[1] = newOrder({
      product_name: 'Pinot "Noir" \\ 黑皮诺 🍷 \u2028 line',
      return_url: 'https://m.example/r?a=1&b="x"',
    });
    const sameTurn = newOrder({ merchant_reference: fresh[0].merchant_reference }); // a retry racing its own first attempt
    const later = newOrder({ merchant_reference: before.merchant_reference }); // a retry of an order made before
    const all = [...fresh, sameTurn, later];
    const nonces = all.map((t) => nonceFor(t.order_id));
    const { out: got, sql: ran } = await statementsDuring(() =>
      Promise.all(all.map((t, i) => store.transactions.insert(t, nonces[i]).durable)),
    );
    if (engine === 'postgres') expect(ran.filter((q) => q.includes('json_populate_recordset'))).toHaveLength(1);
    for (let i = 1; i < fresh.length; i++) expect(got[i]).toEqual({ created: true });
    // Of the two with fresh[0]'s reference exactly one was created; the other got it as existing.
    const pair = [got[0], got[fresh.length]];
    expect(pair.filter((r) => r.created)).toHaveLength(1);
    const winner = pair[0].created ? fresh[0] : sameTurn;
    expect(pair.find((r) => !r.created)).toMatchObject({ existing: { order_id: winner.order_id } });
    expect(got[fresh.length + 1]).toMatchObject({ created: false, existing: { order_id: before.order_id } });
    // Nonces exist exactly for the orders created, and the orders are stored as given.
    const created = [...fresh.slice(1), winner];
    const stored = await store.db
      .selectFrom('nonces')
      .select(['nonce', 'order_id'])
      .where(
        'nonce',
        'in',
        nonces.map((n) => n.nonce),
      )
      .execute();
    expect(stored.map((n) => n.order_id).sort()).toEqual(created.map((t) => t.order_id).sort());
    for (const t of created) expect(await adHoc(t.order_id)).toEqual(t);
  });

  it('a create the database refuses fails alone, not the others of its turn', async () => {
    const good = [newOrder(), newOrder(), newOrder()];
    const noWallet = newOrder({ wallet_id: 'W-no-such-wallet' }); // refused by the foreign key
    const all = [good[0], noWallet, good[1], good[2]];
    const got = await Promise.allSettled(all.map((t) => store.transactions.insert(t, nonceFor(t.order_id)).durable));
    expect(got.map((g) => g.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    for (const t of good) expect(await adHoc(t.order_id)).toEqual(t);
    expect(await store.transactions.find(noWallet.order_id)).toBeUndefined();
  });

  it('query reads made in the same turn run as one statement', async () => {
    // A reference of digits with leading zeros must stay text all the way (JSON and array parameters).
    const orders = [newOrder(), newOrder({ merchant_reference: `000${process.pid}${seq}` }), newOrder()];
    for (const t of orders) await store.transactions.insert(t, nonceFor(t.order_id)).durable;
    const { out, sql: ran } = await statementsDuring(() =>
      Promise.all(orders.map((t) => store.transactions.findResult(t.user_id, t.merchant_reference))),
    );
    expect(out.map((o) => o!.order_id)).toEqual(orders.map((t) => t.order_id));
    expect(ran).toHaveLength(1);
  });

  it('a column left undefined is refused, alone or with others in its turn, never stored as NULL', async () => {
    const lacking = (k: 'amount_cny' | 'backPage_url' | 'cancel_locked_until') => {
      const tx = newOrder() as Partial<NewTransaction>;
      delete tx[k];
      return tx as NewTransaction;
    };
    const alone = lacking('amount_cny');
    await expect(store.transactions.insert(alone, nonceFor(alone.order_id)).durable).rejects.toThrow(
      /amount_cny is undefined; pass null/,
    );
    const nonce = nonceFor(newOrder().order_id) as Partial<Nonce>;
    delete nonce.page_token_hash;
    const good = newOrder();
    await expect(
      store.transactions.insert(good, { ...(nonce as Nonce), order_id: good.order_id }).durable,
    ).rejects.toThrow(/page_token_hash is undefined/);
    // With others of its turn (on PostgreSQL, one statement of JSON rows): it fails alone.
    const turn = [newOrder(), lacking('backPage_url'), newOrder(), lacking('cancel_locked_until')];
    const got = await Promise.allSettled(turn.map((t) => store.transactions.insert(t, nonceFor(t.order_id)).durable));
    expect(got.map((g) => g.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected']);
    for (const t of [alone, good, turn[1], turn[3]]) expect(await store.transactions.find(t.order_id)).toBeUndefined();
  });

  it('a conflicting reference inserts nothing and returns the existing order', async () => {
    const first = newOrder();
    await store.transactions.insert(first, nonceFor(first.order_id)).durable;
    const second = newOrder({ merchant_reference: first.merchant_reference, amount: 1 });
    const nonce = nonceFor(second.order_id);
    const result = await store.transactions.insert(second, nonce).durable;
    expect(result).toEqual({ created: false, existing: await adHoc(first.order_id) });
    expect(await store.transactions.find(second.order_id)).toBeUndefined();
    expect(
      await store.db.selectFrom('nonces').select('nonce').where('nonce', '=', nonce.nonce).executeTakeFirst(),
    ).toBeUndefined();
  });

  it('credentials read as Kysely reads them', async () => {
    const user = await store.db
      .selectFrom('users')
      .innerJoin('organisations', 'organisations.organisation_id', 'users.organisation_id')
      .select([
        'users.user_id',
        'users.user_name',
        'users.user_status',
        'users.organisation_id',
        'organisations.organisation_name',
      ])
      .where('users.user_id', '=', merchant.user_id)
      .executeTakeFirstOrThrow();
    expect(await store.accounts.findUser(merchant.user_id)).toStrictEqual(user);
    const wallet = await store.db
      .selectFrom('wallets')
      .selectAll()
      .where('wallet_id', '=', merchant.wallet_id)
      .executeTakeFirstOrThrow();
    expect(await store.accounts.findWallet(merchant.wallet_id)).toStrictEqual(wallet);
    expect(await store.accounts.findRate('NZD', 'CNY')).toBe(4_644_300);
    expect(await store.accounts.findUser('nobody')).toBeUndefined();
    expect(await store.accounts.findWallet('none')).toBeUndefined();
    expect(await store.accounts.findRate('CNY', 'NZD')).toBeUndefined();
  });

  it('useNonce: claims once, with or without a page token, and says why it refuses', async () => {
    const tx = newOrder({ host_type: 0 });
    const nonce = nonceFor(tx.order_id);
    await store.transactions.insert(tx, nonce).durable;
    expect(await store.transactions.useNonce(nonce.nonce, 10, 1)).toEqual({ ok: false, reason: 'unknown' });
    const used = await store.transactions.useNonce(nonce.nonce, 10, 0, 'hash-1');
    expect(used).toEqual({ ok: true, transaction: await adHoc(tx.order_id) });
    expect(await store.transactions.useNonce(nonce.nonce, 11, 0)).toEqual({ ok: false, reason: 'used' });
    expect(await store.transactions.findCheckoutVisit(nonce.nonce, 'hash-1')).toEqual({
      transaction: await adHoc(tx.order_id),
      used_at: 10,
    });
    expect(await store.transactions.findCheckoutVisit(nonce.nonce, 'hash-2')).toBeUndefined();

    const plain = newOrder({ host_type: 1 });
    const second = nonceFor(plain.order_id, { expires_at: 50 });
    await store.transactions.insert(plain, second).durable;
    expect(await store.transactions.useNonce(second.nonce, 50, 1)).toEqual({ ok: false, reason: 'expired' });
    expect(await store.transactions.useNonce(second.nonce, 49, 1)).toEqual({
      ok: true,
      transaction: await adHoc(plain.order_id),
    });
    const row = await store.db
      .selectFrom('nonces')
      .select(['used_at', 'page_token_hash'])
      .where('nonce', '=', second.nonce)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ used_at: 49, page_token_hash: null });
    expect(await store.transactions.useNonce('no-such-nonce', 1, 1)).toEqual({ ok: false, reason: 'unknown' });
  });

  /** A settle's outbox row, every column set, its keys in an order of their own. */
  const outbox = (t: Pick<NewTransaction, 'order_id' | 'status_seq' | 'callback_url' | 'status'>) => ({
    attempts_pruned_until: 776,
    attempts_pruned: 2,
    delivered_at: null,
    claimed_until: null,
    claimed_by: null,
    created_at: 777,
    next_attempt_at: 778,
    attempts: 0,
    delivery_status: 'pending' as const,
    payload: JSON.stringify({ status: t.status, quote: 'a "b" \\ 黑' }),
    callback_host: 'm.example',
    callback_url: t.callback_url,
    seq: t.status_seq,
    order_id: t.order_id,
    event_id: `evt_${t.order_id}`,
  });

  it('settle: the order once, and its outbox row column by column', async () => {
    const tx = newOrder();
    await store.transactions.insert(tx, nonceFor(tx.order_id)).durable;
    const read = (await store.transactions.find(tx.order_id))!;
    const settled = await store.transactions.settle({
      read,
      to: 'paid',
      now: 777,
      msgId: 'm-1',
      status_message: null,
      outbox,
    });
    expect(settled).toStrictEqual(await adHoc(tx.order_id));
    expect(settled).toMatchObject({
      status: 'paid',
      status_seq: 1,
      pay_time: 777,
      updated_at: 777,
      msgId: 'm-1',
      status_message: null,
    });
    expect(
      await store.transactions.settle({ read, to: 'failed', now: 778, msgId: null, status_message: null, outbox }),
    ).toBeUndefined();
    expect(
      await store.transactions.settle({
        read: settled!,
        to: 'failed',
        now: 778,
        msgId: null,
        status_message: null,
        outbox,
      }),
    ).toBeUndefined();
    const rows = await store.outbox.listByOrder(tx.order_id);
    expect(rows).toEqual([outbox(settled!)]);
  });

  it('settle from the row as the caller read it: one statement on postgres, the same order and outbox row', async () => {
    const tx = newOrder();
    await store.transactions.insert(tx, nonceFor(tx.order_id)).durable;
    const read = (await store.transactions.find(tx.order_id))!;
    const settle = () =>
      store.transactions.settle({ read, to: 'paid', now: 777, msgId: 'm-1', status_message: null, outbox });
    const { out: settled, sql: ran } = await statementsDuring(settle);
    if (engine === 'postgres') expect(ran).toHaveLength(1);
    expect(settled).toStrictEqual(await adHoc(tx.order_id));
    expect(settled).toMatchObject({
      status: 'paid',
      status_seq: 1,
      pay_time: 777,
      updated_at: 777,
      msgId: 'm-1',
      status_message: null,
    });
    expect(await store.outbox.listByOrder(tx.order_id)).toEqual([outbox(settled!)]);
    // The same read once more: the order is no longer pending, nothing changes.
    expect(await settle()).toBeUndefined();
    expect(await adHoc(tx.order_id)).toStrictEqual(settled);
    expect(await store.outbox.listByOrder(tx.order_id)).toHaveLength(1);
  });

  it('settle from a read made before the order was renewed with another callback_url: the outbox row has the new one', async () => {
    const tx = newOrder();
    await store.transactions.insert(tx, nonceFor(tx.order_id)).durable;
    const read = (await store.transactions.find(tx.order_id))!;
    const changes = {
      return_url: tx.return_url,
      callback_url: 'https://m.example/cb-renewed',
      backPage_url: tx.backPage_url,
      ip: tx.ip,
      product_name: tx.product_name,
      present_qr: tx.present_qr,
      updated_at: tx.updated_at + 1,
    };
    expect(await store.transactions.renewPending(tx.order_id, changes, nonceFor(tx.order_id))).toMatchObject({
      callback_url: 'https://m.example/cb-renewed',
    });
    const settled = await store.transactions.settle({
      read,
      to: 'failed',
      now: 779,
      msgId: null,
      status_message: null,
      outbox,
    });
    expect(settled).toMatchObject({ status: 'failed', status_seq: 1, callback_url: 'https://m.example/cb-renewed' });
    expect(await store.outbox.listByOrder(tx.order_id)).toEqual([outbox(settled!)]);
  });
});
