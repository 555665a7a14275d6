// Reconciliation in the console over HTTP, on both engines: an operator sees the open exceptions
// counted on the dashboard and in the queue, opens one with its evidence and what to do, resolves
// it with a note (a note is required; audited); support looks but cannot resolve; a merchant's
// user finds none of it; the statements page lists the imported day and its lines.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exceptionRefundId } from '../../src/usecases/exception-actions.js';
import { raiseException } from '../../src/usecases/money-exceptions.js';
import { importStatement } from '../../src/usecases/reconciliation.js';
import { cancelBody } from '../support/api.js';
import { alipayAccount, useAccount } from '../support/channels.js';
import { consoleUser, type ConsoleClient } from '../support/console-client.js';
import { FakeAlipay } from '../support/fake-alipay.js';
import { ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';

describe.each(ENGINES)('reconciliation in the console on %s', (engine) => {
  let fake: FakeAlipay;
  let gw: TestGateway;
  let admin: ConsoleClient;
  let support: ConsoleClient;
  let owner: ConsoleClient;
  let statement_id: string;
  let paidYuan: string;
  beforeAll(async () => {
    fake = await FakeAlipay.start({ appId: '2021000000000009' });
    gw = await startTestGateway(engine, { mode: 'live', providerTimeoutMs: 1000 });
    await useAccount(gw, alipayAccount(gw.merchant.wallet_id, fake));
    admin = (await consoleUser(gw, 'operator', 'admin')).client;
    support = (await consoleUser(gw, 'operator', 'support')).client;
    owner = (await consoleUser(gw, 'merchant', 'owner', gw.merchant.organisation_id)).client;
    const { order_id } = await gw.create({ amount: '25.00', host_type: '1' });
    await fake.pay(order_id);
    const paid = await gw.create({ amount: '35.00', host_type: '1' });
    await fake.pay(paid.order_id);
    paidYuan = fake.trades.get(paid.order_id)!.total_amount;
    fake.billEdits = { omit: new Set([order_id]) };
    const date = new Date(Date.now() + 8 * 3600_000).toISOString().slice(0, 10);
    const done = await importStatement(gw.ctx, {
      wallet_id: gw.merchant.wallet_id,
      method: 'alipay',
      date,
      by: 'test',
    });
    if (done.kind === 'not_ready') throw new Error(done.reason);
    statement_id = done.statement.statement_id;
  });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
  });

  it('the dashboard counts them; the queue lists them by kind; one shows its evidence and what to do', async () => {
    const dash = await admin.get('/console');
    expect(dash.body).toMatch(/id="exceptions-open"[\s\S]*?<div class="value">1<\/div>/);
    expect((await owner.get('/console')).body).not.toContain('exceptions-open');
    // The failing notifications count leads operators to the outbox (a page merchants do not have).
    expect(dash.body).toContain('<a class="card stat" id="failing-link" href="/console/outbox">');
    expect((await owner.get('/console')).body).not.toContain('failing-link');
    // A live gateway has no sandbox banner.
    expect(dash.body).not.toContain('sandbox-banner');
    const queue = await admin.get('/console/exceptions');
    expect(queue.status).toBe(200);
    expect(queue.body).toMatch(/Payment missing from the statement<\/a>: <span class="count">1<\/span>/);
    const [exception] = await gw.store.reconciliation.listExceptions({ status: 'open' });
    expect(queue.body).toContain(`id="exception-${exception.exception_id}"`);
    const one = await admin.get(`/console/exceptions/${exception.exception_id}`);
    expect(one.body).toContain('Wait for the next day&#39;s statement');
    expect(one.body).toMatch(/id="evidence"[\s\S]*&quot;order_id&quot;: &quot;/);
    // Filters: none resolved yet.
    expect((await admin.get('/console/exceptions?status=resolved')).body).toContain('id="no-exceptions"');
    // In Chinese.
    await admin.post('/console/language', { lang: 'zh', back: '/console/exceptions' });
    expect((await admin.get('/console/exceptions')).body).toContain('对账单缺少的支付');
    await admin.post('/console/language', { lang: 'en', back: '/console/exceptions' });
  });

  it('resolving needs a note and an admin; it is audited and keeps the evidence; merchants see nothing of it', async () => {
    const [exception] = await gw.store.reconciliation.listExceptions({ status: 'open' });
    const path = `/console/exceptions/${exception.exception_id}`;
    await support.get(path);
    expect((await support.post(`${path}/resolve`, { note: 'looked' })).status).toBe(403);
    await admin.get(path);
    const empty = await admin.post(`${path}/resolve`, { note: '  ' });
    expect(empty.status).toBe(400);
    expect(empty.body).toContain('a resolution needs a note');
    await admin.get(path);
    expect((await admin.post(`${path}/resolve`, { note: 'Alipay confirmed it on the 2nd day' })).status).toBe(303);
    const after = await gw.store.reconciliation.findException(exception.exception_id);
    expect(after).toMatchObject({ exception_status: 'resolved', resolution: 'resolve', evidence: exception.evidence });
    expect((await admin.get(path)).body).toMatch(/id="resolution"[\s\S]*Alipay confirmed it on the 2nd day/);
    const audited = await gw.store.console.listAudit({ actions: ['exception.resolve'], limit: 5 });
    expect(audited.map((a) => a.object)).toEqual([exception.exception_id]);
    for (const p of ['/console/exceptions', path, '/console/statements', `/console/statements/${statement_id}`])
      expect((await owner.get(p)).status).toBe(404);
    await owner.get('/console');
    expect((await owner.post(`${path}/resolve`, { note: 'x' })).status).toBe(404);
  });

  it('the statements page lists the day; its page shows every line and what it matched', async () => {
    const list = await admin.get('/console/statements');
    expect(list.body).toContain(`/console/statements/${statement_id}`);
    const one = await admin.get(`/console/statements/${statement_id}`);
    expect(one.body).toMatch(/id="statement-summary">Lines: 1; matched: 1; exceptions: 1/);
    expect(one.body).toContain(`${paidYuan} CNY`);
    expect(one.body).toMatch(/class="verdict-matched"/);
    const missing = await admin.get('/console/statements/S000000000000');
    expect(missing.status).toBe(404);
    // Titled for what it is, not as a failure.
    expect(missing.body).toContain('<h1>Not found</h1>');
    expect((await admin.get('/console/no-such-page')).body).toContain('<h1>Not found</h1>');
    expect(one.body).not.toContain('id="statement-importing"');
    // A statement still being written says so, in the list and on its page.
    const importing = { ...(await gw.store.reconciliation.statementById(statement_id))!, statement_id: 'SIMPORTING01' };
    await gw.store.reconciliation.beginStatement({ ...importing, statement_date: '2026-01-02' }, new Uint8Array(), 0);
    expect((await admin.get('/console/statements')).body).toMatch(
      /SIMPORTING01">2026-01-02<\/a> <span class="status-pending">importing<\/span>/,
    );
    expect((await admin.get('/console/statements/SIMPORTING01')).body).toContain('id="statement-importing"');
    await gw.store.reconciliation.discardStatement('SIMPORTING01');
  });

  it('acts on one: refunds a payment made after its order ended, settles one paid at the provider, posts an adjustment', async () => {
    // Paid at Alipay after the order was canceled: the live path raises it.
    const { order_id, merchant_reference } = await gw.create({ amount: '12.00', host_type: '1' });
    expect((await gw.post('/cancel', cancelBody(gw, merchant_reference))).code).toBe(0);
    await fake.pay(order_id);
    const [late] = (await gw.store.reconciliation.listExceptions({ kind: 'paid_after_end' })).filter(
      (x) => x.order_id === order_id,
    );
    expect(late).toMatchObject({ exception_status: 'open', source: 'live' });
    const path = `/console/exceptions/${late.exception_id}`;
    const shown = await admin.get(path);
    expect(shown.body).toContain('id="refund-payment"');
    expect(shown.body).not.toContain('id="settle-payment"');
    // Alipay not answering: nothing decided, the exception stays open; again, the same refund id.
    fake.fail('alipay.trade.refund', 'timeout-after'); // made at Alipay, its answer lost
    await admin.get(path);
    const unknown = await admin.post(`${path}/refund`, {});
    expect(unknown.status).toBe(409);
    expect(unknown.body).toContain('no definite answer from alipay');
    await admin.get(path);
    expect((await admin.post(`${path}/refund`, {})).status).toBe(303);
    const trade = fake.trades.get(order_id)!;
    expect([...fake.refundsOf(order_id)]).toEqual([[exceptionRefundId(late), trade.total_amount]]);
    expect(await gw.store.reconciliation.findException(late.exception_id)).toMatchObject({
      exception_status: 'resolved',
      resolution: 'refund',
    });
    // The merchant's books are as they were: the payment was never theirs.
    expect(await gw.store.ledger.entriesOfOrder(order_id)).toEqual([]);

    // Paid at Alipay, its notification lost: asked and settled from the exception.
    const pending = await gw.create({ amount: '8.00', host_type: '1' });
    await fake.pay(pending.order_id, { notify: false });
    const raised = await raiseException(gw.store, {
      kind: 'pending_payment',
      subject: pending.order_id,
      source: 'statement',
      detail: 'test',
      evidence: {},
      wallet_id: gw.merchant.wallet_id,
      order_id: pending.order_id,
      out_trade_no: pending.order_id,
      now: Date.now(),
    });
    const settlePath = `/console/exceptions/${raised.exception.exception_id}`;
    await admin.get(settlePath);
    expect((await admin.post(`${settlePath}/settle`, {})).status).toBe(303);
    expect((await gw.store.transactions.find(pending.order_id))!.status).toBe('paid');
    expect(await gw.store.reconciliation.findException(raised.exception.exception_id)).toMatchObject({
      resolution: 'settle',
    });

    // An adjustment with its reason, once.
    const other = await raiseException(gw.store, {
      kind: 'amount_mismatch',
      subject: 'T-ADJUST',
      source: 'statement',
      detail: 'test',
      evidence: {},
      wallet_id: gw.merchant.wallet_id,
      now: Date.now(),
    });
    const before = await gw.store.ledger.walletBalances(gw.merchant.wallet_id, 'NZD');
    const adjustPath = `/console/exceptions/${other.exception.exception_id}`;
    await admin.get(adjustPath);
    const noReason = await admin.post(`${adjustPath}/adjust`, {
      wallet_id: gw.merchant.wallet_id,
      amount: '1.00',
      reason: ' ',
    });
    expect(noReason.status).toBe(400);
    await admin.get(adjustPath);
    expect(
      (
        await admin.post(`${adjustPath}/adjust`, {
          wallet_id: gw.merchant.wallet_id,
          amount: '1.00',
          reason: 'Alipay charged 1.00 less',
        })
      ).status,
    ).toBe(303);
    const after = await gw.store.ledger.walletBalances(gw.merchant.wallet_id, 'NZD');
    expect(after.available - before.available).toBe(100);
    expect(await gw.store.reconciliation.findException(other.exception.exception_id)).toMatchObject({
      resolution: 'adjust',
      note: expect.stringContaining('Alipay charged 1.00 less'),
    });
    const actions = (await gw.store.console.listAudit({ limit: 50 })).map((a) => a.action);
    for (const a of ['exception.refund', 'exception.settle', 'exception.adjust']) expect(actions).toContain(a);
    // Support may look, not act.
    await support.get(adjustPath);
    expect((await support.post(`${adjustPath}/settle`, {})).status).toBe(403);
  });
});
