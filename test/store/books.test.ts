// A wallet's books beyond its entries (issue 40), on both engines, through the CLI an operator
// uses: the settlement delay and run (pending becomes available once due, idempotent, never more
// than is pending when refunds took from it, once when two instances run at once), limits (454
// naming the limit), `gateway balance` and `gateway statement`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY_MS } from '../../src/domain/ledger-settlement.js';
import type { MerchantCredentials } from '../../src/usecases/administration.js';
import { runSettlement } from '../../src/usecases/books.js';
import { refundBody } from '../support/api.js';
import { gatewayCli } from '../support/cli.js';
import { databaseFor, ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';

describe.each(ENGINES)('the books on %s', (engine) => {
  let gw: TestGateway;
  let database: string;
  beforeAll(async () => {
    database = (await databaseFor(engine)).database;
    gw = await startTestGateway(engine, { database });
  });
  afterAll(async () => gw?.close());

  const cli = (...args: string[]) => gatewayCli([...args, '--database', database]);
  const json = async (...args: string[]) => {
    const r = await cli(...args, '--json');
    expect(r.code, r.stderr).toBe(0);
    return JSON.parse(r.stdout) as Record<string, unknown>;
  };
  async function paid(m: MerchantCredentials, amount: string, payment_method = 'alipay'): Promise<string> {
    const { order_id, reply } = await gw.create({ amount, payment_method }, m);
    expect(reply.code, JSON.stringify(reply)).toBe(0);
    expect((await gw.pay(order_id, 'paid')).status).toBe('paid');
    return order_id;
  }
  const balances = (m: MerchantCredentials) => gw.store.ledger.walletBalances(m.wallet_id, 'NZD');

  it('`gateway balance`: decimal strings; `settlement run` makes nothing available before the delay, all of it with 0 days, once', async () => {
    const m = await gw.newMerchant();
    await paid(m, '100.00');
    expect(await json('balance', '--wallet-id', m.wallet_id)).toEqual({
      currency: 'NZD',
      pending: '100.00',
      available: '0.00',
      reserved: '0.00',
      settlement_delay_days: 2,
    });
    const first = await json('settlement', 'run');
    expect(first.moves).not.toContainEqual(expect.objectContaining({ wallet_id: m.wallet_id }));
    expect(await json('settlement', 'set', '--wallet-id', m.wallet_id, '--delay-days', '0')).toEqual({
      wallet_id: m.wallet_id,
      delay_days: 0,
    });
    const second = await json('settlement', 'run');
    expect(second.moves).toContainEqual({ wallet_id: m.wallet_id, currency: 'NZD', amount: '100.00' });
    expect(await json('balance', '--wallet-id', m.wallet_id)).toMatchObject({ pending: '0.00', available: '100.00' });
    const third = await json('settlement', 'run');
    expect(third.moves).not.toContainEqual(expect.objectContaining({ wallet_id: m.wallet_id }));
    expect((await gw.store.ledger.check()).problems).toEqual([]);
  });

  it('money becomes available once its delay has passed, less what refunds took from pending', async () => {
    const m = await gw.newMerchant();
    const t0 = Date.now();
    const a = await paid(m, '100.00');
    expect(await gw.post('/refund', refundBody(gw, a, '100.00', 'all', m))).toMatchObject({ code: 0 });
    const c = await paid(m, '50.00');
    const mine = async (at: number) =>
      (await runSettlement(gw.store, at)).moves.filter((x) => x.wallet_id === m.wallet_id).map((x) => x.amount);
    // Due after two days: the refund spent the first order's 100.00, the second's 50.00 is due then.
    expect(await mine(t0 + DAY_MS)).toEqual([]);
    expect(await mine(Date.now() + 2 * DAY_MS + 1000)).toEqual([5000]);
    expect(await balances(m)).toEqual({ currency: 'NZD', pending: 0, available: 5000, reserved: 0 });
    // With nothing pending, a refund takes from available; with some pending, from there first.
    expect(await gw.post('/refund', refundBody(gw, c, '10.00', 'c', m))).toMatchObject({ code: 0 });
    expect(await balances(m)).toEqual({ currency: 'NZD', pending: 0, available: 4000, reserved: 0 });
    const b = await paid(m, '20.00');
    expect(await gw.post('/refund', refundBody(gw, b, '15.00', 'b', m))).toMatchObject({ code: 0 });
    expect(await balances(m)).toEqual({ currency: 'NZD', pending: 500, available: 4000, reserved: 0 });
    expect(await gw.post('/refund', refundBody(gw, c, '10.00', 'c2', m))).toMatchObject({ code: 0 });
    expect(await balances(m)).toEqual({ currency: 'NZD', pending: 0, available: 3500, reserved: 0 });
    expect((await gw.store.ledger.check()).problems).toEqual([]);
  });

  it('two runs at once (two instances) make the same money available once', async () => {
    const m = await gw.newMerchant();
    await paid(m, '70.00');
    const later = Date.now() + 3 * DAY_MS;
    const runs = await Promise.all([runSettlement(gw.store, later), runSettlement(gw.store, later + 1)]);
    const moved = runs.flatMap((r) => r.moves).filter((x) => x.wallet_id === m.wallet_id);
    expect(moved.reduce((s, x) => s + x.amount, 0)).toBe(7000);
    expect(await balances(m)).toMatchObject({ pending: 0, available: 7000 });
    expect((await gw.store.ledger.check()).problems).toEqual([]);
  });

  it('limits: a create below the minimum, above the maximum or past the daily total is refused with 454 naming it', async () => {
    const m = await gw.newMerchant();
    const set = await json(
      'limits',
      'set',
      '--wallet-id',
      m.wallet_id,
      '--single-min',
      '1.00',
      '--single-max',
      '100',
      '--daily-max',
      '150',
    );
    expect(set).toMatchObject({ method: '*', single_min: '1.00', single_max: '100.00', daily_max: '150.00' });
    const create = async (amount: string, payment_method = 'alipay') =>
      (await gw.post('/v2/transaction', gw.createBody({ amount, payment_method }, m))) as {
        code: number;
        message: string;
        detail?: string;
      };
    expect(await create('0.50')).toMatchObject({
      code: 454,
      message: 'Exceed the single payment limit of the merchant',
      detail: expect.stringMatching(/below the single payment minimum of wallet .* \(1\.00 NZD\)/),
    });
    expect(await create('100.01')).toMatchObject({
      code: 454,
      detail: expect.stringMatching(/above the single payment maximum .* \(100\.00 NZD\)/),
    });
    await paid(m, '100.00');
    expect(await create('60.00')).toMatchObject({
      code: 454,
      detail: expect.stringMatching(/daily total .* \(150\.00 NZD; 100\.00 NZD paid today, UTC\)/),
    });
    expect(await create('50.00')).toMatchObject({ code: 0 });
    // A method's own limit applies beside the wallet's.
    await json('limits', 'set', '--wallet-id', m.wallet_id, '--method', 'wechat', '--single-max', '10');
    expect(await create('20.00', 'wechat')).toMatchObject({ code: 454, detail: expect.stringMatching(/for wechat/) });
    expect(await create('20.00', 'alipay')).toMatchObject({ code: 0 });
    const list = await cli('limits', 'list', '--wallet-id', m.wallet_id, '--json');
    expect(JSON.parse(list.stdout).map((l: { method: string }) => l.method)).toEqual(['*', 'wechat']);
    // Bad input names the flag.
    const bad = await cli('limits', 'set', '--wallet-id', m.wallet_id, '--single-max', '1.001');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/--single-max/);
    const reversed = await cli('limits', 'set', '--wallet-id', m.wallet_id, '--single-min', '5', '--single-max', '1');
    expect(reversed.stderr).toMatch(/--single-min is above --single-max/);
  });

  it('`gateway statement`: opening balances, each movement with its order, closing balances; CSV too', async () => {
    const m = await gw.newMerchant();
    const a = await paid(m, '30.00');
    expect(await gw.post('/refund', refundBody(gw, a, '5.00', 'part', m))).toMatchObject({ code: 0 });
    const today = new Date().toISOString().slice(0, 10);
    const s = await json('statement', '--wallet-id', m.wallet_id, '--from', today, '--to', today);
    expect(s.opening).toEqual({ currency: 'NZD', pending: '0.00', available: '0.00', reserved: '0.00' });
    expect(s.closing).toEqual({ currency: 'NZD', pending: '25.00', available: '0.00', reserved: '0.00' });
    expect(
      (s.lines as { kind: string; order_id: string; pending: string; reserved: string }[]).map((l) => [
        l.kind,
        l.order_id,
        l.pending,
        l.reserved,
      ]),
    ).toEqual([
      ['payment', a, '30.00', '0.00'],
      ['refund_reserved', a, '-5.00', '5.00'],
      ['refund_made', a, '0.00', '-5.00'],
    ]);
    const csv = await cli('statement', '--wallet-id', m.wallet_id, '--from', today, '--to', today, '--csv');
    const rows = csv.stdout.trim().split('\n');
    expect(rows[0]).toBe('date,kind,order_id,refund_id,payout_id,pending,available,reserved,memo');
    expect(rows.map((r) => r.split(',')[1])).toEqual([
      'kind',
      'opening',
      'payment',
      'refund_reserved',
      'refund_made',
      'closing',
    ]);
    expect(rows[5].split(',').slice(5, 8)).toEqual(['25.00', '0.00', '0.00']);
    // The day before: nothing, and the balances as they were.
    const yesterday = new Date(Date.now() - DAY_MS).toISOString().slice(0, 10);
    const before = await json('statement', '--wallet-id', m.wallet_id, '--from', yesterday, '--to', yesterday);
    expect(before.lines).toEqual([]);
    const bad = await cli('statement', '--wallet-id', m.wallet_id, '--from', '2026-02-30', '--to', today);
    expect(bad.stderr).toMatch(/--from must be a date/);
  });

  it('`gateway ledger adjust`: a credit, a debit, never more than available; on the statement with its reason', async () => {
    const m = await gw.newMerchant();
    const credit = await json(
      'ledger',
      'adjust',
      '--wallet-id',
      m.wallet_id,
      '--amount',
      '12.50',
      '--reason',
      'fee charged twice',
    );
    expect(credit).toMatchObject({ id: expect.stringMatching(/^A/), amount: '12.50', currency: 'NZD' });
    expect(
      await json('ledger', 'adjust', '--wallet-id', m.wallet_id, '--amount=-5.00', '--reason', 'chargeback 4411'),
    ).toMatchObject({
      amount: '-5.00',
    });
    expect(await balances(m)).toEqual({ currency: 'NZD', pending: 0, available: 750, reserved: 0 });
    const tooMuch = await cli('ledger', 'adjust', '--wallet-id', m.wallet_id, '--amount=-7.51', '--reason', 'x');
    expect(tooMuch.stderr).toMatch(/has 7\.50 NZD available/);
    const noReason = await cli('ledger', 'adjust', '--wallet-id', m.wallet_id, '--amount', '1', '--reason', ' ');
    expect(noReason.stderr).toMatch(/--reason/);
    const today = new Date().toISOString().slice(0, 10);
    const s = await json('statement', '--wallet-id', m.wallet_id, '--from', today, '--to', today);
    expect(
      (s.lines as { kind: string; memo: string; available: string }[]).map((l) => [l.kind, l.memo, l.available]),
    ).toEqual([
      ['adjustment', 'fee charged twice', '12.50'],
      ['adjustment', 'chargeback 4411', '-5.00'],
    ]);
    expect((await gw.store.ledger.check()).problems).toEqual([]);
  });

  it('a statement read a page at a time: every movement once, in order, the same balances as read whole', async () => {
    const m = await gw.newMerchant();
    const orders = [];
    for (const amount of ['1.00', '2.00', '3.00', '4.00', '5.00']) orders.push(await paid(m, amount));
    expect(await gw.post('/refund', refundBody(gw, orders[4], '5.00', 'all', m))).toMatchObject({ code: 0 });
    await json('settlement', 'set', '--wallet-id', m.wallet_id, '--delay-days', '0');
    await runSettlement(gw.store, Date.now() + 1);
    const from = Date.now() - DAY_MS;
    const to = Date.now() + DAY_MS;
    const whole = await gw.store.ledger.statement(m.wallet_id, 'NZD', from, to);
    expect(whole.lines.map((l) => l.kind)).toEqual([
      ...Array(5).fill('payment'),
      'refund_reserved',
      'refund_made',
      'available',
    ]);
    expect(whole.next).toBeUndefined();
    const paged = [];
    let after;
    for (let pages = 0; pages < 10; pages++) {
      const page = await gw.store.ledger.statement(m.wallet_id, 'NZD', from, to, { limit: 3, ...(after && { after }) });
      expect(page.opening).toEqual(whole.opening);
      expect(page.closing).toEqual(whole.closing);
      paged.push(...page.lines);
      if (!page.next) break;
      after = page.next;
    }
    expect(paged).toEqual(whole.lines);
    expect(whole.closing).toEqual({ currency: 'NZD', pending: 0, available: 1000, reserved: 0 });
    // Opening balances from the days before: a statement of tomorrow opens with today's closing.
    const tomorrow = await gw.store.ledger.statement(m.wallet_id, 'NZD', to, to + DAY_MS);
    expect(tomorrow.opening).toEqual(whole.closing);
    expect(tomorrow.lines).toEqual([]);
  });
});
