// Reconciliation with WeChat Pay's trade bill, end to end on both engines: the fake serves the
// day's bill (gzipped, its SHA1 in the signed answer, the file itself unsigned) of its own orders
// in WeChat Pay's format; the gateway imports it, matches every line, raises what disagrees once,
// and refuses a file that is not the one the hash names. A day without trades is an empty statement.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importStatement } from '../../src/usecases/reconciliation.js';
import { refundBody } from '../support/api.js';
import { useAccount, wechatpayAccount } from '../support/channels.js';
import { FakeWechatPay } from '../support/fake-wechatpay.js';
import { wechatBillCsv } from '../support/fake-wechatpay-bill.js';
import { ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';

const beijingDay = (ms = Date.now()) => new Date(ms + 8 * 3600_000).toISOString().slice(0, 10);

describe.each(ENGINES)("reconciliation with WeChat Pay's bill on %s", (engine) => {
  let fake: FakeWechatPay;
  let gw: TestGateway;
  beforeAll(async () => {
    fake = await FakeWechatPay.start();
    gw = await startTestGateway(engine, { mode: 'live', providerTimeoutMs: 1000, refundWaitMs: 300 });
    await useAccount(gw, wechatpayAccount(gw.merchant.wallet_id, fake));
  });
  afterAll(async () => {
    expect(fake?.refused).toEqual([]);
    await gw?.close();
    await fake?.close();
  });

  async function paid(amount: string, notify = true) {
    const { order_id } = await gw.create({ amount, host_type: '1', payment_method: 'wechat' });
    await fake.pay(order_id, { notify });
    return order_id;
  }
  const run = (date: string) =>
    importStatement(gw.ctx, { wallet_id: gw.merchant.wallet_id, method: 'wechat', date, by: 'test' });

  it('matches payments and refunds; a missing payment, another amount and an unknown refund are exceptions; fees posted once', async () => {
    const a = await paid('100.00');
    expect((await gw.post('/refund', refundBody(gw, a, '30.00', 'part'))).code).toBe(0);
    const b = await paid('20.00');
    const c = await paid('10.00', false);
    const d = await paid('70.00');
    fake.billEdits = {
      omit: new Set([b]),
      amounts: new Map([[d, fake.orders.get(d)!.total + 1]]),
      extra: [
        {
          state: 'REFUND',
          transaction_id: fake.orders.get(d)!.transaction_id,
          out_trade_no: d,
          total: 500,
          out_refund_no: 'R-NOT-OURS',
          at: Date.now(),
        },
      ],
    };
    const date = beijingDay();
    const done = await run(date);
    if (done.kind === 'not_ready') throw new Error(done.reason);
    expect(done.kind).toBe('imported');
    expect(done.statement).toMatchObject({
      provider: 'wechatpay',
      merchant_id: fake.mchid,
      line_count: 5,
      matched_count: 3,
    });
    expect(done.exceptions.map((x) => [x.kind, x.out_trade_no]).sort()).toEqual(
      [
        ['amount_mismatch', d],
        ['missing_payment', b],
        ['unknown_refund', d],
      ].sort(),
    );
    expect(done).toMatchObject({ asked: 1, settled: 1 });
    expect((await gw.store.transactions.find(c))!.status).toBe('paid');
    // Fees: 0.6 % of each payment listed, less the refund's share given back, rounded per line.
    const fees = JSON.parse(done.statement.fees) as Record<string, number>;
    const totals = [a, c].map((id) => fake.orders.get(id)!.total).concat([fake.orders.get(d)!.total + 1]);
    const expected =
      totals.reduce((s, t) => s + Math.round(t * 0.006), 0) -
      Math.round([...fake.orders.get(a)!.refunds.values()][0].refund * 0.006) -
      Math.round(500 * 0.006);
    expect(fees).toEqual({ CNY: expected });
    expect((await run(date)).kind).toBe('imported_before');
    expect((await gw.store.reconciliation.listExceptions({ status: 'open' })).length).toBe(3);
  });

  it('a file that is not the one its hash names is refused; STATEMENT_CREATING is later; NO_STATEMENT_EXIST is an empty day', async () => {
    const date = '2026-02-02';
    fake.billReady = false;
    expect(await run(date)).toMatchObject({ kind: 'not_ready', reason: expect.stringMatching(/STATEMENT_CREATING/) });
    fake.billReady = true;
    // Nothing that day: an empty statement, recorded.
    const empty = await run(date);
    expect(empty).toMatchObject({ kind: 'imported', statement: { line_count: 0, exception_count: 0 } });
    // The file changed on its way: its SHA1 is not the signed one.
    const today = beijingDay(Date.now() + 86_400_000 * 400);
    fake.billEdits = {
      extra: [
        {
          state: 'SUCCESS',
          transaction_id: '4200000000000000000001',
          out_trade_no: 'X1',
          total: 100,
          at: Date.parse(`${today}T10:00:00+08:00`),
        },
      ],
    };
    fake.tamperBill = true;
    expect(await run(today)).toMatchObject({
      kind: 'not_ready',
      reason: expect.stringMatching(/not the one its hash_value names/),
    });
    fake.tamperBill = false;
    expect(await gw.store.reconciliation.findStatement('wechatpay', fake.mchid, today)).toBeUndefined();
  });

  it('a statement is written in parts: one that turns out not to be the format at its end leaves nothing; one left importing is taken over, unless it is recent', async () => {
    const date = '2026-03-03';
    const at = Date.parse(`${date}T12:00:00+08:00`);
    // More lines than a part, none the gateway's: each an exception, written before the count at the end is read.
    const extra = Array.from({ length: 2100 }, (_, i) => ({
      state: 'SUCCESS' as const,
      transaction_id: `42000000000000000${String(i).padStart(5, '0')}`,
      out_trade_no: `NOTOURS${i}`,
      total: 100,
      at,
    }));
    const good = wechatBillCsv(fake.appid, fake.mchid, date, [], { extra });
    const bad = good.replace(/`2100,/, '`2101,');
    const file = (csv: string) => ({
      wallet_id: gw.merchant.wallet_id,
      method: 'wechat',
      date,
      by: 'test',
      file: Buffer.from(csv),
    });
    const open = async () => (await gw.store.reconciliation.listExceptions({ status: 'open', limit: 10_000 })).length;
    const before = await open();
    await expect(importStatement(gw.ctx, file(bad))).rejects.toThrow(/counts 2101 lines; the file has 2100/);
    expect(await gw.store.reconciliation.findStatement('wechatpay', fake.mchid, date)).toBeUndefined();
    expect(await open()).toBe(before);

    // An import that stopped halfway a moment ago is still running as far as anyone knows: later.
    const left = {
      statement_id: 'SLEFTBEHIND01',
      provider: 'wechatpay' as const,
      merchant_id: fake.mchid,
      statement_date: date,
      wallet_id: gw.merchant.wallet_id,
      payment_method: 'wechat',
      format: 'wechatpay-trade-bill-csv',
      raw_sha256: '-',
      line_count: 0,
      matched_count: 0,
      exception_count: 0,
      fees: '{}',
      source: 'file' as const,
      status: 'importing' as const,
      imported_at: Date.now(),
      imported_by: 'test',
    };
    expect(await gw.store.reconciliation.beginStatement(left, new Uint8Array(), 0)).toEqual({ kind: 'begun' });
    expect(await importStatement(gw.ctx, file(good))).toMatchObject({
      kind: 'not_ready',
      reason: expect.stringMatching(/being imported since .* \(SLEFTBEHIND01\)/),
    });
    // Stopped long enough ago: discarded, and the day imported whole.
    await gw.store.reconciliation.discardStatement(left.statement_id);
    await gw.store.reconciliation.beginStatement(
      { ...left, imported_at: Date.now() - 16 * 60_000 },
      new Uint8Array(),
      0,
    );
    const done = await importStatement(gw.ctx, file(good));
    expect(done).toMatchObject({
      kind: 'imported',
      statement: { line_count: 2100, exception_count: 2100, status: 'imported' },
    });
    expect(await open()).toBe(before + 2100);
    expect(
      (await gw.store.reconciliation.statementLines(done.kind === 'imported' ? done.statement.statement_id : '', 5000))
        .length,
    ).toBe(2100);
  });
});
