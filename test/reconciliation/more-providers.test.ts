// Reconciliation with the statements of POLi (its day's completed transactions), Azupay (its
// payment requests completed in the day, page by page), CoinPayments (its invoices confirmed in the
// day, by cursor) and UnionPay (the file transfer's zip of the day's ZM file), end to end on both
// engines against the fakes, which list their own payments in the providers' formats and leave one
// out, change an amount or add one on purpose. Each statement is imported once; a payment the gateway had pending
// is asked of the provider and settled; the rest are exceptions, each raised once.
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MerchantCredentials } from '../../src/cli/admin.js';
import { dateIn } from '../../src/domain/reconciliation.js';
import { importStatement } from '../../src/usecases/reconciliation.js';
import { resumePendingRefunds } from '../../src/usecases/resume-refunds.js';
import { refundBody } from '../support/api.js';
import { azupayAccount, coinpaymentsAccount, poliAccount, unionpayAccount, useAccount } from '../support/channels.js';
import { FakeAzupay } from '../support/fake-azupay.js';
import { FakeCoinPayments } from '../support/fake-coinpayments.js';
import { FakePoli } from '../support/fake-poli.js';
import { FakeUnionpay } from '../support/fake-unionpay.js';
import { unionpayFee } from '../support/fake-unionpay-zm.js';
import { ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';
import { Visitor } from '../support/visitor.js';

describe.each(ENGINES)("reconciliation with POLi's, Azupay's, CoinPayments' and UnionPay's days on %s", (engine) => {
  let poli: FakePoli;
  let azupay: FakeAzupay;
  let coin: FakeCoinPayments;
  let unionpay: FakeUnionpay;
  let gw: TestGateway;
  let aud: MerchantCredentials;
  beforeAll(async () => {
    [poli, azupay, coin, unionpay] = await Promise.all([
      FakePoli.start(),
      FakeAzupay.start(),
      FakeCoinPayments.start(),
      FakeUnionpay.start(),
    ]);
    gw = await startTestGateway(engine, { mode: 'live', providerTimeoutMs: 1000, refundWaitMs: 300 });
    aud = await gw.newMerchant('AUD');
    await useAccount(gw, poliAccount(gw.merchant.wallet_id, poli));
    await useAccount(gw, azupayAccount(aud.wallet_id, azupay));
    await useAccount(gw, coinpaymentsAccount(gw.merchant.wallet_id, coin));
    await useAccount(gw, unionpayAccount(gw.merchant.wallet_id, unionpay));
  });
  afterAll(async () => {
    for (const fake of [poli, azupay, coin, unionpay]) expect(fake?.refused).toEqual([]);
    // Settled from statements, refunded, fees posted: the books still balance.
    if (gw) expect((await gw.store.ledger.check()).problems).toEqual([]);
    await gw?.close();
    await Promise.all([poli?.close(), azupay?.close(), coin?.close(), unionpay?.close()]);
  });

  const exceptionsOf = (r: Awaited<ReturnType<typeof importStatement>>) => {
    if (r.kind === 'not_ready') throw new Error(r.reason);
    return r.exceptions.map((x) => [x.kind, x.out_trade_no]).sort();
  };

  it("POLi: the day's completed transactions are matched; one left out, one of another amount, one unknown; a pending one settled", async () => {
    const opened = async () => {
      const { reply, order_id } = await gw.create({ payment_method: 'polipay', amount: '45.50' });
      await new Visitor(gw, `/v2/checkout/${reply.nonce}`).payButton();
      return `${order_id}R`;
    };
    const [a, b, c, d] = [await opened(), await opened(), await opened(), await opened()];
    for (const ref of [a, b, c]) await poli.finish(ref, 'Completed');
    // Paid at the bank; the nudge never came.
    await poli.finish(d, 'Completed', { nudge: false });
    const failed = await opened();
    await poli.finish(failed, 'Failed');
    poli.dailyEdits = {
      omit: new Set([b]),
      amounts: new Map([[c, 45.49]]),
      extra: [{ ...poli.byReference(a)!, TransactionRefNo: '996464600001', MerchantReference: 'NOT-OURS' }],
    };
    const date = dateIn(Date.now(), 'Pacific/Auckland');
    const run = () =>
      importStatement(gw.ctx, { wallet_id: gw.merchant.wallet_id, method: 'polipay', date, by: 'test' });
    const done = await run();
    expect(exceptionsOf(done)).toEqual(
      [
        ['amount_mismatch', c],
        ['missing_payment', b],
        ['unknown_payment', 'NOT-OURS'],
      ].sort(),
    );
    expect(done).toMatchObject({
      kind: 'imported',
      asked: 1,
      settled: 1,
      statement: { provider: 'poli', merchant_id: poli.merchant_code, line_count: 4, matched_count: 2, fees: '{}' },
    });
    expect((await gw.store.transactions.find(d.slice(0, -1)))!.status).toBe('paid');
    expect(poli.calls).toContain('GetDailyTransactions');
    // Kept as POLi sent it: its JSON array.
    const raw = await gw.store.reconciliation.statementRaw(done.kind === 'imported' ? done.statement.statement_id : '');
    expect(JSON.parse(Buffer.from(raw!).toString('utf8'))).toHaveLength(4);
    expect((await run()).kind).toBe('imported_before');
  });

  it('Azupay: the requests completed in the Sydney day, read page by page; one left out, one of another amount; a pending one settled', async () => {
    const opened = async () => {
      const { reply, order_id } = await gw.create({ payment_method: 'payid', amount: '45.50' }, aud);
      await new Visitor(gw, `/v2/checkout/${reply.nonce}`).get();
      return `${order_id}T`;
    };
    const refs = [await opened(), await opened(), await opened(), await opened()];
    const [a, b, c, d] = refs;
    for (const ref of [a, b, c]) await azupay.pay(ref);
    await azupay.pay(d, { notify: false });
    // A payment of the wrong amount, returned by Azupay itself: never paid, not a line.
    const returned = await opened();
    await azupay.pay(returned, { amount: 40 });
    azupay.pageSize = 2;
    azupay.searchEdits = { omit: new Set([b]), amounts: new Map([[c, 45.51]]) };
    const date = dateIn(Date.now(), 'Australia/Sydney');
    const run = () => importStatement(gw.ctx, { wallet_id: aud.wallet_id, method: 'payid', date, by: 'test' });
    const searches = azupay.calls.filter((x) => x === 'search').length;
    const done = await run();
    expect(exceptionsOf(done)).toEqual(
      [
        ['amount_mismatch', c],
        ['missing_payment', b],
      ].sort(),
    );
    expect(done).toMatchObject({
      kind: 'imported',
      asked: 1,
      settled: 1,
      statement: { provider: 'azupay', merchant_id: azupay.client_id, line_count: 3, matched_count: 2 },
    });
    // Three lines, two to a page: two pages.
    expect(azupay.calls.filter((x) => x === 'search').length - searches).toBe(2);
    expect((await gw.store.transactions.find(d.slice(0, -1)))!.status).toBe('paid');
    expect((await run()).kind).toBe('imported_before');
  });

  it('CoinPayments: the invoices confirmed in the UTC day, read by cursor; one left out, one of another amount; a pending one settled', async () => {
    const opened = async () => {
      const { reply, order_id } = await gw.create({ payment_method: 'coin_payments', amount: '45.50' });
      await new Visitor(gw, `/v2/checkout/${reply.nonce}`).payButton();
      return `${order_id}R`;
    };
    const [a, b, c, d] = [await opened(), await opened(), await opened(), await opened()];
    for (const ref of [a, b, c]) await coin.settle(ref, 'paid');
    await coin.settle(d, 'completed', { notify: false });
    // Timed out: never paid, not a line.
    await coin.settle(await opened(), 'timedOut');
    coin.pageSize = 2;
    coin.listEdits = { omit: new Set([b]), values: new Map([[c, '4549']]) };
    const date = new Date().toISOString().slice(0, 10);
    const run = () =>
      importStatement(gw.ctx, { wallet_id: gw.merchant.wallet_id, method: 'coin_payments', date, by: 'test' });
    const lists = coin.calls.filter((x) => x === 'listInvoices').length;
    const done = await run();
    expect(exceptionsOf(done)).toEqual(
      [
        ['amount_mismatch', c],
        ['missing_payment', b],
      ].sort(),
    );
    expect(done).toMatchObject({
      kind: 'imported',
      asked: 1,
      settled: 1,
      statement: { provider: 'coinpayments', merchant_id: coin.client_id, line_count: 3, matched_count: 2 },
    });
    // Four invoices listed (the timed-out one too), two to a page.
    expect(coin.calls.filter((x) => x === 'listInvoices').length - lists).toBe(2);
    expect((await gw.store.transactions.find(d.slice(0, -1)))!.status).toBe('paid');
    expect((await run()).kind).toBe('imported_before');
  });

  it("UnionPay: the clearing day's ZM file (fixed-width GBK in a zip, deflated, base64) matched line by line; fees posted", async () => {
    const paidOrder = async (notify = true) => {
      const { reply, order_id } = await gw.create({ payment_method: 'upi_upop', amount: '100.00' });
      // The customer posts the page's signed form to UnionPay's cashier.
      const page = (await new Visitor(gw, `/v2/checkout/${reply.nonce}`).get()).body;
      expect(page).not.toContain('sandbox-banner');
      const form = /<form id="unionpay-form" method="post" action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/.exec(page)!;
      const fields = [...form[2].matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map(([, k, v]) => [
        k,
        v.replaceAll('&quot;', '"').replaceAll('&#39;', "'").replaceAll('&amp;', '&'),
      ]);
      await fetch(form[1].replaceAll('&amp;', '&'), { method: 'POST', body: new URLSearchParams(fields) });
      await unionpay.pay(`${order_id}F`, { notify });
      return order_id;
    };
    const [a, b, c] = [await paidOrder(), await paidOrder(), await paidOrder()];
    const d = await paidOrder(false);
    expect(await gw.post('/refund', refundBody(gw, a, '30.00', 'part'))).toEqual({ code: 0, message: '' });
    await resumePendingRefunds(gw.ctx, pino({ level: 'silent' }), 0);
    const [refund] = await gw.store.refunds.listByOrder(a);
    expect(refund.refund_status).toBe('succeeded');
    const paidA = unionpay.consumes.get(`${a}F`)!;
    unionpay.zmEdits = {
      omit: new Set([`${b}F`]),
      amounts: new Map([[`${c}F`, Number(unionpay.consumes.get(`${c}F`)!.txnAmt) + 1]]),
      extra: [
        {
          txnType: '04',
          orderId: 'R0000NOTOURS',
          queryId: '782209081322069999001',
          txnAmt: 500,
          origQryId: paidA.queryId,
          at: Date.now(),
        },
      ],
    };
    const date = dateIn(Date.now(), 'Etc/GMT-9');
    unionpay.fileReady = false;
    const run = () =>
      importStatement(gw.ctx, { wallet_id: gw.merchant.wallet_id, method: 'upi_upop', date, by: 'test' });
    expect(await run()).toMatchObject({ kind: 'not_ready', reason: expect.stringMatching(/98/) });
    unionpay.fileReady = true;
    const done = await run();
    expect(exceptionsOf(done)).toEqual(
      [
        ['amount_mismatch', `${c}F`],
        ['missing_payment', `${b}F`],
        ['unknown_refund', ''],
      ].sort(),
    );
    expect(done).toMatchObject({
      kind: 'imported',
      asked: 1,
      settled: 1,
      statement: { provider: 'unionpay', merchant_id: unionpay.mer_id, line_count: 5, matched_count: 3 },
    });
    expect((await gw.store.transactions.find(d))!.status).toBe('paid');
    // Fees: 0.5 % debited on each consume listed, each refund's share credited back.
    const consumed = [a, c, d].map((o) => Number(unionpay.consumes.get(`${o}F`)!.txnAmt));
    consumed[1] += 1;
    const refunded = [Number(unionpay.backs.get(refund.refund_id)!.txnAmt), 500];
    const fees = JSON.parse(done.kind === 'imported' ? done.statement.fees : '{}') as Record<string, number>;
    expect(fees).toEqual({
      CNY: consumed.reduce((s, x) => s + unionpayFee(x), 0) - refunded.reduce((s, x) => s + unionpayFee(x), 0),
    });
    expect(unionpay.calls.filter((x) => x === 'file')).toHaveLength(2);
    expect((await run()).kind).toBe('imported_before');
  });
});
