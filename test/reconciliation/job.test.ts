// The statements' import job on both engines: one account per provider identity (two wallets on one
// Alipay app import one statement), every due day claimed and imported once, a day the provider has
// not published asked again later (not before), two rounds at once importing nothing twice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dueStatementDates } from '../../src/domain/reconciliation.js';
import { SILENT_LOG } from '../../src/usecases/context.js';
import { runStatementJob, STATEMENT_RETRY_MS } from '../../src/usecases/statement-job.js';
import { alipayAccount, useAccount, wechatpayAccount } from '../support/channels.js';
import { FakeAlipay } from '../support/fake-alipay.js';
import { FakeWechatPay } from '../support/fake-wechatpay.js';
import { ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';

describe.each(ENGINES)('the statements import job on %s', (engine) => {
  let alipay: FakeAlipay;
  let wechat: FakeWechatPay;
  let gw: TestGateway;
  beforeAll(async () => {
    [alipay, wechat] = await Promise.all([FakeAlipay.start({ appId: '2021000000000003' }), FakeWechatPay.start()]);
    gw = await startTestGateway(engine, { mode: 'live', providerTimeoutMs: 1000, metricsToken: 'metrics-token' });
    const second = await gw.newMerchant('NZD');
    await useAccount(gw, alipayAccount(gw.merchant.wallet_id, alipay));
    await useAccount(gw, alipayAccount(second.wallet_id, alipay));
    await useAccount(gw, wechatpayAccount(gw.merchant.wallet_id, wechat));
  });
  afterAll(async () => {
    expect([...(alipay?.refused ?? []), ...(wechat?.refused ?? [])]).toEqual([]);
    await gw?.close();
    await Promise.all([alipay?.close(), wechat?.close()]);
  });

  it('imports each due day of each account once; a day not published is asked again after a while', async () => {
    const due = dueStatementDates(Date.now(), { timeZone: 'Asia/Shanghai', publishedAfterMs: 10 * 3600_000 });
    expect(due.length).toBeGreaterThanOrEqual(2);
    alipay.billReady = false;
    wechat.billReady = false;
    expect(await runStatementJob(gw.ctx, SILENT_LOG)).toEqual({ imported: 0, notReady: 2 * due.length });
    const days = await gw.store.reconciliation.listDays({ imported: false });
    expect(days).toHaveLength(2 * due.length);
    expect(days.map((d) => [d.provider, d.attempts, d.claimed_until])).toContainEqual(['alipay', 1, null]);
    expect(days.find((d) => d.provider === 'alipay')!.last_error).toMatch(/bill_not_exist/);
    expect(days.find((d) => d.provider === 'wechatpay')!.last_error).toMatch(/STATEMENT_CREATING/);
    expect(days.every((d) => d.next_try_at >= Date.now() + STATEMENT_RETRY_MS - 60_000)).toBe(true);
    // Not asked again before its time.
    const asked = alipay.calls.length;
    expect(await runStatementJob(gw.ctx, SILENT_LOG)).toEqual({ imported: 0, notReady: 0 });
    expect(alipay.calls.length).toBe(asked);

    // Its time comes; the providers have published: every day imported once, by two rounds at once.
    await gw.store.db.updateTable('statement_days').set({ next_try_at: 0 }).execute();
    alipay.billReady = true;
    wechat.billReady = true;
    const rounds = await Promise.all([runStatementJob(gw.ctx, SILENT_LOG), runStatementJob(gw.ctx, SILENT_LOG)]);
    expect(rounds.reduce((n, r) => n + r.imported, 0)).toBe(2 * due.length);
    const statements = await gw.store.reconciliation.listStatements({});
    expect(statements.map((s) => [s.provider, s.statement_date]).sort()).toEqual(
      [...due.map((d) => ['alipay', d]), ...due.map((d) => ['wechatpay', d])].sort(),
    );
    expect(statements.every((s) => s.imported_by === 'job')).toBe(true);
    expect(await gw.store.reconciliation.listDays({ imported: false })).toEqual([]);
    expect(await runStatementJob(gw.ctx, SILENT_LOG)).toEqual({ imported: 0, notReady: 0 });

    // The operator's metrics: each account's newest statement's age; open exceptions by kind.
    const metrics = await (
      await fetch(`${gw.url}/metrics`, { headers: { authorization: 'Bearer metrics-token' } })
    ).text();
    const newest = due[due.length - 1];
    const age = (Date.now() - Date.parse(`${newest}T00:00:00Z`) - 86_400_000) / 1000;
    const ageOf = (provider: string, merchant_id: string) =>
      Number(
        new RegExp(
          `^gateway_reconciliation_statement_age_seconds\\{provider="${provider}",merchant_id="${merchant_id}"\\} (\\S+)$`,
          'm',
        ).exec(metrics)?.[1],
      );
    expect(ageOf('alipay', alipay.app_id)).toBeGreaterThan(age - 60);
    expect(ageOf('alipay', alipay.app_id)).toBeLessThan(age + 60);
    expect(ageOf('wechatpay', wechat.mchid)).toBeGreaterThan(age - 60);
    expect(metrics).toMatch(/^gateway_reconciliation_exceptions_open\{kind="refund_status_mismatch"\} 0$/m);
  });
});
