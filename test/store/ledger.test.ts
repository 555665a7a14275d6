// The ledger's payment entries (issue 40), on both engines: a paid order posts one entry, in the
// same unit as its settle, balanced, moving the merchant's pending balance; an entry whose key was
// posted before posts nothing again; `gateway ledger check` finds what is wrong and exits 1; and
// migration 0016 posts the entries of orders paid before the ledger.
import { Migrator, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONVERSION, providerAccount, walletAccount } from '../../src/domain/ledger.js';
import { migrationProvider } from '../../src/store/migrations.js';
import { createMerchant } from '../../src/usecases/administration.js';
import { settle } from '../../src/usecases/settle-payment.js';
import { refundBody } from '../support/api.js';
import { gatewayCli } from '../support/cli.js';
import { databaseFor, ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';
import { nonceOf, pendingOrder } from '../support/rows.js';
import { unmigratedStore } from '../support/unmigrated.js';

/** `gateway ledger check --json` on a database: its exit code and report. */
async function ledgerCheck(database: string): Promise<{ code: number; report: { problems: { kind: string }[] } }> {
  const { code, stdout } = await gatewayCli(['ledger', 'check', '--json', '--database', database]);
  return { code, report: JSON.parse(stdout || '{"problems":[]}') as { problems: { kind: string }[] } };
}

describe.each(ENGINES)('the ledger on %s', (engine) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(engine);
  });
  afterAll(async () => gw?.close());

  it('a paid order posts its payment: the provider owes the amount, the merchant is owed it, pending', async () => {
    const { order_id } = await gw.create({ amount: '120.00' });
    await gw.pay(order_id, 'paid');
    const entries = await gw.store.ledger.entriesOfOrder(order_id);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ entry_key: `payment:${order_id}`, kind: 'payment', order_id });
    expect(entries[0].lines).toEqual([
      { account: providerAccount('sandbox', gw.merchant.wallet_id), currency: 'NZD', amount: 12000 },
      { account: walletAccount(gw.merchant.wallet_id, 'pending'), currency: 'NZD', amount: -12000 },
    ]);
    // Paid again (a duplicated report): nothing more.
    await gw.pay(order_id, 'paid');
    expect(await gw.store.ledger.entriesOfOrder(order_id)).toHaveLength(1);
  });

  it("the wallet's pending balance is the sum of its payments; failed orders post nothing", async () => {
    const before = await gw.store.ledger.walletBalances(gw.merchant.wallet_id, 'NZD');
    const a = await gw.create({ amount: '10.00' });
    const b = await gw.create({ amount: '2.50' });
    const c = await gw.create({ amount: '99.00' });
    await gw.pay(a.order_id, 'paid');
    await gw.pay(b.order_id, 'paid');
    await gw.pay(c.order_id, 'failed');
    expect(await gw.store.ledger.entriesOfOrder(c.order_id)).toEqual([]);
    const after = await gw.store.ledger.walletBalances(gw.merchant.wallet_id, 'NZD');
    expect(after).toEqual({ ...before, pending: before.pending + 1250 });
  });

  it('a domestic charge records the CNY at the provider and the NZD owed, through the conversion account', async () => {
    const { order_id } = await gw.create({ amount: '120.00' });
    const read = (await gw.store.transactions.find(order_id))!;
    expect(await settle(gw.ctx, read, 'paid', { charged: { amount: 55732, currency: 'CNY' } })).toBeDefined();
    const [entry] = await gw.store.ledger.entriesOfOrder(order_id);
    expect(entry.lines).toEqual(
      expect.arrayContaining([
        { account: providerAccount('sandbox', gw.merchant.wallet_id), currency: 'CNY', amount: 55732 },
        { account: CONVERSION, currency: 'CNY', amount: -55732 },
        { account: CONVERSION, currency: 'NZD', amount: 12000 },
      ]),
    );
  });

  it('an order whose callback_url changed since it was read is settled with its entry all the same', async () => {
    const { order_id } = await gw.create({ amount: '8.00' });
    const read = (await gw.store.transactions.find(order_id))!;
    // A re-create renewed the URL meanwhile (PostgreSQL then settles in a transaction of its own).
    await gw.store.db
      .updateTable('transactions')
      .set({ callback_url: 'https://shop.example/notify-again' })
      .where('order_id', '=', order_id)
      .execute();
    expect(await settle(gw.ctx, read, 'paid')).toMatchObject({ status: 'paid' });
    const [entry] = await gw.store.ledger.entriesOfOrder(order_id);
    expect(entry?.lines).toContainEqual({
      account: walletAccount(gw.merchant.wallet_id, 'pending'),
      currency: 'NZD',
      amount: -800,
    });
    expect((await gw.store.ledger.check()).problems).toEqual([]);
  });

  it('an entry whose key was posted before posts no lines and moves no balance', async () => {
    const first = await gw.create({ amount: '5.00' });
    await gw.pay(first.order_id, 'paid');
    const [posted] = await gw.store.ledger.entriesOfOrder(first.order_id);
    const before = await gw.store.ledger.walletBalances(gw.merchant.wallet_id, 'NZD');
    // Another order's settle carrying the same entry (as a replayed event would): settled, entry not posted again.
    const other = await gw.create({ amount: '7.00' });
    const read = (await gw.store.transactions.find(other.order_id))!;
    const settled = await gw.store.transactions.settle({
      read,
      to: 'paid',
      now: Date.now(),
      status_message: null,
      msgId: null,
      entry: posted,
      outbox: (t) => ({
        event_id: `evt_replay_${t.order_id}`,
        order_id: t.order_id,
        seq: t.status_seq,
        callback_url: t.callback_url,
        callback_host: new URL(t.callback_url).host,
        payload: '{}',
        delivery_status: 'pending',
        attempts: 0,
        next_attempt_at: Date.now(),
        claimed_by: null,
        claimed_until: null,
        created_at: Date.now(),
        delivered_at: null,
        attempts_pruned: 0,
        attempts_pruned_until: null,
      }),
    });
    expect(settled?.status).toBe('paid');
    expect(await gw.store.ledger.entriesOfOrder(first.order_id)).toEqual([posted]);
    expect(await gw.store.ledger.walletBalances(gw.merchant.wallet_id, 'NZD')).toEqual(before);
    // ...which leaves that order paid without an entry of its own: the check names it.
    const check = await gw.store.ledger.check();
    expect(check.problems).toContainEqual(
      expect.objectContaining({ kind: 'paid_order_without_entry', subject: other.order_id }),
    );
    await gw.store.db.deleteFrom('outbox').where('order_id', '=', other.order_id).execute();
    await gw.store.db
      .updateTable('transactions')
      .set({ status: 'failed' })
      .where('order_id', '=', other.order_id)
      .execute();
  });
});

describe.each(ENGINES)('ledger check on %s', (engine) => {
  let gw: TestGateway;
  let database: string;
  beforeAll(async () => {
    const db = await databaseFor(engine);
    database = db.database;
    gw = await startTestGateway(engine, { database, checkLedgerOnClose: false }); // it breaks the books on purpose
  });
  afterAll(async () => gw?.close());

  it('is clean after payments, and names an unbalanced entry, a balance that differs and a paid order without its entry', async () => {
    const a = await gw.create({ amount: '30.00' });
    const b = await gw.create({ amount: '40.00' });
    await gw.pay(a.order_id, 'paid');
    await gw.pay(b.order_id, 'paid');
    const c = await gw.create({ amount: '50.00' });
    await gw.pay(c.order_id, 'paid');
    expect(await gw.post('/refund', refundBody(gw, c.order_id, '10.00', 'checked'))).toMatchObject({ code: 0 });
    const clean = await ledgerCheck(database);
    expect(clean).toMatchObject({ code: 0, report: { problems: [] } });
    // A line changed behind the ledger's back: its entry no longer balances, nor does the balance kept.
    await gw.store.db
      .updateTable('ledger_lines')
      .set({ amount: -2999 })
      .where('entry_key', '=', `payment:${a.order_id}`)
      .where('line_no', '=', 2)
      .execute();
    // An entry gone: a paid order without one.
    await gw.store.db.deleteFrom('ledger_lines').where('entry_key', '=', `payment:${b.order_id}`).execute();
    await gw.store.db.deleteFrom('ledger_entries').where('entry_key', '=', `payment:${b.order_id}`).execute();
    // A made refund's entry gone (its lines moved to another entry's key would unbalance it: both go).
    const made = (await gw.store.refunds.listByOrder(c.order_id))[0].refund_id;
    await gw.store.db.deleteFrom('ledger_lines').where('entry_key', '=', `refund_made:${made}`).execute();
    await gw.store.db.deleteFrom('ledger_entries').where('entry_key', '=', `refund_made:${made}`).execute();
    const broken = await ledgerCheck(database);
    expect(broken.code).toBe(1);
    expect(broken.report.problems.map((p) => p.kind).sort()).toEqual([
      'balance_differs',
      'balance_differs',
      'paid_order_without_entry',
      'refund_without_entry',
      'unbalanced_entry',
    ]);
  });
});

describe.each(ENGINES)('migration 0016 (the ledger) on %s', (engine) => {
  const opened = unmigratedStore(engine);

  it('posts the entry of every order paid before it, and the pending balance they make', async () => {
    const store = opened();
    const migrator = new Migrator({ db: store.db, provider: migrationProvider(engine) });
    expect((await migrator.migrateTo('0015_payment_attempts')).error).toBeUndefined();
    const merchant = await createMerchant(store, { name: 'Before 0016', currency: 'NZD' });
    const paid = [pendingOrder(merchant, { amount: 12000 }), pendingOrder(merchant, { amount: 350 })];
    const pending = pendingOrder(merchant, { amount: 999 });
    for (const t of [...paid, pending])
      expect(await store.transactions.insert(t, nonceOf(t)).durable).toEqual({ created: true });
    // Paid as the code before the ledger left them (its settle had no entry to write).
    for (const t of paid)
      await sql`update transactions set status = 'paid', pay_time = ${1_700_000_000_000} where order_id = ${t.order_id}`.execute(
        store.db,
      );
    expect((await migrator.migrateToLatest()).error).toBeUndefined();
    expect(await store.ledger.entriesOfOrder(pending.order_id)).toEqual([]);
    const [entry] = await store.ledger.entriesOfOrder(paid[0].order_id);
    expect(entry).toMatchObject({ kind: 'payment', created_at: 1_700_000_000_000, wallet_id: merchant.wallet_id });
    expect(entry.lines).toEqual([
      { account: providerAccount(paid[0].channel, merchant.wallet_id), currency: 'NZD', amount: 12000 },
      { account: walletAccount(merchant.wallet_id, 'pending'), currency: 'NZD', amount: -12000 },
    ]);
    expect(await store.ledger.walletBalances(merchant.wallet_id, 'NZD')).toEqual({
      currency: 'NZD',
      pending: 12350,
      available: 0,
      reserved: 0,
    });
    expect((await store.ledger.check()).problems).toEqual([]);
  });
});

describe.each(ENGINES)('migration 0017 (refunds on the books) on %s', (engine) => {
  const opened = unmigratedStore(engine);

  it('posts the refunds made or pending before it: taken from pending, made ones out to the provider', async () => {
    const store = opened();
    const migrator = new Migrator({ db: store.db, provider: migrationProvider(engine) });
    expect((await migrator.migrateTo('0016_ledger')).error).toBeUndefined();
    const merchant = await createMerchant(store, { name: 'Before 0017', currency: 'NZD' });
    const order = pendingOrder(merchant, { amount: 10000 });
    expect(await store.transactions.insert(order, nonceOf(order)).durable).toEqual({ created: true });
    await sql`update transactions set status = 'paid', pay_time = ${1_700_000_000_000}, refunded_amount = 7000 where order_id = ${order.order_id}`.execute(
      store.db,
    );
    // Paid after 0016 (its entry posted), refunded before 0017 (its refunds not).
    await sql`insert into ledger_entries (entry_key, kind, wallet_id, order_id, created_at)
      values (${'payment:' + order.order_id}, 'payment', ${merchant.wallet_id}, ${order.order_id}, 1700000000000)`.execute(
      store.db,
    );
    const account = providerAccount(order.channel, merchant.wallet_id);
    await sql`insert into ledger_lines (entry_key, line_no, account, currency, amount, created_at) values
      (${'payment:' + order.order_id}, 1, ${account}, 'NZD', 10000, 1700000000000),
      (${'payment:' + order.order_id}, 2, ${walletAccount(merchant.wallet_id, 'pending')}, 'NZD', -10000, 1700000000000)`.execute(
      store.db,
    );
    await sql`insert into ledger_balances (account, currency, balance, updated_at)
      values (${walletAccount(merchant.wallet_id, 'pending')}, 'NZD', -10000, 1700000000000)`.execute(store.db);
    const refund = (refund_id: string, amount: number, status: string) =>
      sql`insert into refunds (refund_id, order_id, refund_amount, reference, refund_status, dedupe_key, created_at, updated_at)
        values (${refund_id}, ${order.order_id}, ${amount}, ${refund_id}, ${status}, ${status === 'failed' ? null : refund_id}, 1700000001000, 1700000002000)`.execute(
        store.db,
      );
    await refund('Rmade', 5000, 'succeeded');
    await refund('Rwaiting', 2000, 'pending');
    await refund('Rrefused', 1000, 'failed');
    expect((await migrator.migrateToLatest()).error).toBeUndefined();
    const entries = await store.ledger.entriesOfOrder(order.order_id);
    expect(entries.map((e) => e.entry_key).sort()).toEqual(
      ['payment:', 'refund_made:Rmade', 'refund_reserved:Rmade', 'refund_reserved:Rwaiting'].map((k) =>
        k === 'payment:' ? k + order.order_id : k,
      ),
    );
    expect(entries.find((e) => e.entry_key === 'refund_made:Rmade')).toMatchObject({
      created_at: 1700000002000,
      memo: expect.stringMatching(/migration 0017/),
      lines: [
        { account: walletAccount(merchant.wallet_id, 'reserved'), currency: 'NZD', amount: 5000 },
        { account, currency: 'NZD', amount: -5000 },
      ],
    });
    expect(await store.ledger.walletBalances(merchant.wallet_id, 'NZD')).toEqual({
      currency: 'NZD',
      pending: 3000,
      available: 0,
      reserved: 2000,
    });
    expect((await store.ledger.check()).problems).toEqual([]);
    // The waiting refund ends after the migration as any other: made, out of reserved.
    await store.refunds.complete('Rwaiting', 1700000003000);
    expect(await store.ledger.walletBalances(merchant.wallet_id, 'NZD')).toMatchObject({ pending: 3000, reserved: 0 });
  });
});
