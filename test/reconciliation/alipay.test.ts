// Reconciliation with Alipay's trade bill, end to end on both engines: the fake Alipay serves the
// day's bill of its own trades in Alipay's format (a zip of GBK CSV files), with the disagreements
// reconciliation must find written in on purpose; the gateway imports it (fetched, and again from
// the CLI), matches every line, raises each exception once with its evidence, settles the payment
// it had pending after asking Alipay, posts Alipay's fees, and changes nothing the second time.
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { providerFeesAccount } from '../../src/domain/ledger.js';
import { importStatement } from '../../src/usecases/reconciliation.js';
import { refundBody } from '../support/api.js';
import { alipayAccount, TEST_MASTER_KEY_TEXT, useAccount } from '../support/channels.js';
import { alipayBillZip, serviceFee } from '../support/fake-alipay-bill.js';
import { FakeAlipay } from '../support/fake-alipay.js';
import { gatewayCli } from '../support/cli.js';
import { databaseFor, ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';

const beijingDay = (ms = Date.now()) => new Date(ms + 8 * 3600_000).toISOString().slice(0, 10);

describe.each(ENGINES)("reconciliation with Alipay's bill on %s", (engine) => {
  let fake: FakeAlipay;
  let gw: TestGateway;
  let database: string;
  beforeAll(async () => {
    fake = await FakeAlipay.start();
    database = (await databaseFor(engine)).database;
    gw = await startTestGateway(engine, { database, mode: 'live', providerTimeoutMs: 1000, refundWaitMs: 300 });
    await useAccount(gw, alipayAccount(gw.merchant.wallet_id, fake));
  });
  afterAll(async () => {
    expect(fake?.refused).toEqual([]);
    await gw?.close();
    await fake?.close();
  });
  const cli = (...args: string[]) =>
    gatewayCli([...args, '--database', database], { GATEWAY_MASTER_KEY: TEST_MASTER_KEY_TEXT });

  async function paid(amount: string, notify = true) {
    const { order_id } = await gw.create({ amount, host_type: '1' });
    await fake.pay(order_id, { notify });
    return order_id;
  }

  it('every kind of disagreement once, with its evidence; the pending payment settled; fees posted; a second import changes nothing', async () => {
    const a = await paid('120.00');
    const refundA = await gw.post('/refund', refundBody(gw, a, '20.00', 'part'));
    expect(refundA.code).toBe(0);
    const b = await paid('50.00', false); // paid at Alipay, its notification lost
    const c = await paid('30.00');
    const d = await paid('40.00');
    const e = await paid('60.00');
    fake.fail('alipay.trade.refund', { business: 'ACQ.SELLER_BALANCE_NOT_ENOUGH' });
    expect((await gw.post('/refund', refundBody(gw, e, '10.00', 'failed'))).code).not.toBe(0);
    const [failed] = await gw.store.refunds.listByOrder(e);
    expect(failed.refund_status).toBe('failed');
    const order = async (id: string) => (await gw.store.transactions.find(id))!;
    expect((await order(b)).status).toBe('pending');
    const tradeD = fake.trades.get(d)!;
    fake.billEdits = {
      omit: new Set([c]),
      amounts: new Map([[d, (Number(tradeD.total_amount) + 1).toFixed(2)]]),
      extra: [
        // Made at Alipay, failed in the gateway: the money left twice.
        {
          kind: '退款',
          trade_no: fake.trades.get(e)!.trade_no,
          out_trade_no: e,
          amount: '46.44',
          out_request_no: failed.refund_id,
          at: Date.now(),
        },
        {
          kind: '交易',
          trade_no: '2026112922001999999999',
          out_trade_no: 'NOT-OURS-1',
          amount: '9.99',
          at: Date.now(),
        },
      ],
    };

    const date = beijingDay();
    const done = await importStatement(gw.ctx, {
      wallet_id: gw.merchant.wallet_id,
      method: 'alipay',
      date,
      by: 'test',
    });
    if (done.kind === 'not_ready') throw new Error(done.reason);
    expect(done.kind).toBe('imported');
    expect(done.statement).toMatchObject({
      provider: 'alipay',
      merchant_id: fake.app_id,
      statement_date: date,
      line_count: 7,
    });
    const kinds = done.exceptions.map((x) => [x.kind, x.severity, x.out_trade_no]).sort();
    expect(kinds).toEqual(
      [
        ['amount_mismatch', 'high', d],
        ['missing_payment', 'high', c],
        ['refund_status_mismatch', 'urgent', e],
        ['unknown_payment', 'high', 'NOT-OURS-1'],
      ].sort(),
    );
    const mismatch = done.exceptions.find((x) => x.kind === 'amount_mismatch')!;
    expect(JSON.parse(mismatch.evidence)).toMatchObject({
      line: { out_trade_no: d, amount: Math.round(Number(tradeD.total_amount) * 100) + 100, currency: 'CNY' },
      gateway: { order_id: d, charged_amount: Math.round(Number(tradeD.total_amount) * 100) },
    });
    // The payment the gateway had pending: Alipay asked, the order settled the usual way, recorded.
    expect(done).toMatchObject({ asked: 1, settled: 1 });
    expect((await order(b)).status).toBe('paid');
    const [fromStatement] = await gw.store.reconciliation.listExceptions({ kind: 'pending_payment' });
    expect(fromStatement).toMatchObject({ exception_status: 'resolved', resolution: 'auto', order_id: b });
    expect(fromStatement.note).toMatch(/settled from alipay's statement/);

    // Alipay's fees on the day's trades it listed, posted once as the method's cost.
    const listed = [a, b, e]
      .map((id) => fake.trades.get(id)!.total_amount)
      .concat([(Number(tradeD.total_amount) + 1).toFixed(2), '9.99']);
    const fees = listed.reduce((sum, amount) => sum + Math.round(Number(serviceFee(amount)) * 100), 0);
    const cost = await gw.store.db
      .selectFrom('ledger_lines')
      .select((eb) => eb.fn.sum<string>('amount').as('sum'))
      .where('account', '=', providerFeesAccount('alipay'))
      .executeTakeFirst();
    expect(Number(cost?.sum)).toBe(fees);
    // The margin report: fees earned less fees paid, per currency and method.
    const margin = await gw.store.ledger.margin(Date.now() - 86_400_000, Date.now() + 86_400_000);
    expect(margin.find((r) => r.currency === 'CNY' && r.payment_method === 'alipay')).toMatchObject({
      provider_fees: fees,
    });

    // Again, from the CLI: nothing changes.
    const again = await cli(
      'statements',
      'import',
      '--wallet-id',
      gw.merchant.wallet_id,
      '--method',
      'alipay',
      '--date',
      date,
      '--json',
    );
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({
      imported: false,
      statement_id: done.statement.statement_id,
      exceptions: 4,
    });
    const open = await cli('exceptions', 'list', '--open', '--json');
    const listedOpen = JSON.parse(open.stdout) as Array<{ id: string; kind: string; evidence: unknown }>;
    expect(listedOpen.map((x) => x.kind).sort()).toEqual([
      'amount_mismatch',
      'missing_payment',
      'refund_status_mismatch',
      'unknown_payment',
    ]);
    expect(Number(cost?.sum)).toBe(
      Number(
        (
          await gw.store.db
            .selectFrom('ledger_lines')
            .select((eb) => eb.fn.sum<string>('amount').as('sum'))
            .where('account', '=', providerFeesAccount('alipay'))
            .executeTakeFirst()
        )?.sum,
      ),
    );

    // Resolved with a note: audited, the evidence kept; a note is required.
    const unknown = listedOpen.find((x) => x.kind === 'unknown_payment')!;
    expect((await cli('exceptions', 'resolve', '--id', unknown.id, '--note', ' ')).stderr).toMatch(/needs a note/);
    const resolved = await cli(
      'exceptions',
      'resolve',
      '--id',
      unknown.id,
      '--note',
      'another shop of the same app',
      '--json',
    );
    expect(JSON.parse(resolved.stdout)).toMatchObject({
      status: 'resolved',
      resolution: 'resolve',
      note: 'another shop of the same app',
      evidence: unknown.evidence,
    });
    expect((await cli('exceptions', 'resolve', '--id', unknown.id, '--note', 'again')).stderr).toMatch(
      /resolved already/,
    );
  });

  it('a day Alipay has not published is not imported, and says so (CLI exit 3); a file an operator downloaded is imported', async () => {
    fake.billReady = false;
    const wallet = await gw.newMerchant('NZD');
    await useAccount(gw, alipayAccount(wallet.wallet_id, fake));
    const date = '2026-01-15';
    const notYet = await importStatement(gw.ctx, { wallet_id: wallet.wallet_id, method: 'alipay', date, by: 'test' });
    expect(notYet).toMatchObject({ kind: 'not_ready', reason: expect.stringMatching(/bill_not_exist/) });
    const cliNotYet = await cli(
      'statements',
      'import',
      '--wallet-id',
      wallet.wallet_id,
      '--method',
      'alipay',
      '--date',
      date,
    );
    expect(cliNotYet.code).toBe(3);
    fake.billReady = true;
    expect(await gw.store.reconciliation.findStatement('alipay', fake.app_id, date)).toBeUndefined();
    // The operator downloads it from Alipay's site and imports the file.
    const file = join(mkdtempSync(join(tmpdir(), 'bill-')), 'bill.csv.zip');
    const at = Date.parse(`${date}T12:00:00+08:00`);
    writeFileSync(
      file,
      alipayBillZip('2088102177649450', date, [], {
        extra: [{ kind: '交易', trade_no: '2026011522001000000001', out_trade_no: 'NOT-OURS-2', amount: '5.00', at }],
      }),
    );
    const imported = await cli(
      'statements',
      'import',
      '--wallet-id',
      wallet.wallet_id,
      '--method',
      'alipay',
      '--date',
      date,
      '--file',
      file,
      '--json',
    );
    expect(imported.code, imported.stderr).toBe(0);
    expect(JSON.parse(imported.stdout)).toMatchObject({
      imported: true,
      lines: 1,
      matched: 0,
      exceptions: 1,
      fees: { CNY: '0.03' },
    });
    const stored = (await gw.store.reconciliation.findStatement('alipay', fake.app_id, date))!;
    expect(stored).toMatchObject({
      source: 'file',
      raw_sha256: createHash('sha256').update(readFileSync(file)).digest('hex'),
    });
    expect(Buffer.from((await gw.store.reconciliation.statementRaw(stored.statement_id))!)).toEqual(readFileSync(file));
    // Not a bill: refused with why, nothing written.
    writeFileSync(file, 'not a zip');
    const bad = await cli(
      'statements',
      'import',
      '--wallet-id',
      wallet.wallet_id,
      '--method',
      'alipay',
      '--date',
      '2026-01-16',
      '--file',
      file,
    );
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/not a alipay-trade-bill-zip statement: not a zip file/);
    expect(await gw.store.reconciliation.findStatement('alipay', fake.app_id, '2026-01-16')).toBeUndefined();
  });

  it("a payment on an earlier day's statement is not missing from a later one; one a later statement names is resolved by it", async () => {
    // Another app (another account): days of its own. Both orders paid in the gateway today; at
    // Alipay, Y two days ago and X yesterday (a payment at 23:59:59 settled a moment later).
    const other = await FakeAlipay.start({ appId: '2021000000000002' });
    try {
      const wallet = await gw.newMerchant('NZD');
      await useAccount(gw, alipayAccount(wallet.wallet_id, other));
      const day = 86_400_000;
      const pay = async () => {
        const { order_id } = await gw.create({ amount: '15.00', host_type: '1' }, wallet);
        await other.pay(order_id);
        return order_id;
      };
      const [x, y] = [await pay(), await pay()];
      other.trades.get(x)!.paid_at = Date.now() - day;
      other.trades.get(y)!.paid_at = Date.now() - 2 * day;
      const run = (date: string) =>
        importStatement(gw.ctx, { wallet_id: wallet.wallet_id, method: 'alipay', date, by: 'test' });
      expect(await run(beijingDay(Date.now() - 2 * day))).toMatchObject({ kind: 'imported', exceptions: [] });
      const today = await run(beijingDay());
      expect(today.kind === 'imported' && today.exceptions.map((e) => [e.kind, e.order_id])).toEqual([
        ['missing_payment', x],
      ]);
      // Yesterday's bill cut short (its totals count a trade it lacks), past a part (200 lines) with X
      // in the first: refused whole, and X's exception stays open, not "found in" a statement gone.
      const yesterday = Date.now() - day;
      other.billEdits = {
        wrongTotals: true,
        extra: Array.from({ length: 250 }, (_, i) => ({
          kind: '交易' as const,
          trade_no: `20260101220010${String(i).padStart(8, '0')}`,
          out_trade_no: `NOT-OURS-CUT-${i}`,
          amount: '1.00',
          at: yesterday,
        })),
      };
      await expect(run(beijingDay(yesterday))).rejects.toThrow(/the totals say 252 trades/);
      other.billEdits = {};
      const stillOpen = (await gw.store.reconciliation.listExceptions({ kind: 'missing_payment' })).filter(
        (e) => e.order_id === x,
      );
      expect(stillOpen.map((e) => e.exception_status)).toEqual(['open']);
      expect(
        await gw.store.reconciliation.findStatement('alipay', other.app_id, beijingDay(yesterday)),
      ).toBeUndefined();
      expect(await run(beijingDay(Date.now() - day))).toMatchObject({ kind: 'imported', exceptions: [] });
      const [missing] = (await gw.store.reconciliation.listExceptions({ kind: 'missing_payment' })).filter(
        (e) => e.order_id === x,
      );
      expect(missing).toMatchObject({ exception_status: 'resolved', resolution: 'auto' });
      expect(missing.note).toMatch(/^found in alipay's statement of /);
    } finally {
      await other.close();
    }
  });
});
