// Fee plans (issue 40), on both engines: `gateway fees set` makes versions and `fees list` shows
// them; a paid order's fee, from the version it was created under, is posted with its payment;
// FEE_PLANS_REQUIRED refuses a create without a plan (305); bad input is refused with what is wrong.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FEE_REVENUE, walletAccount } from '../../src/domain/ledger.js';
import { setFeePlan } from '../../src/usecases/fee-plans.js';
import { gatewayCli } from '../support/cli.js';
import { databaseFor, ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const gateway = gatewayCli;

describe.each(ENGINES)('fee plans on %s', (engine) => {
  let gw: TestGateway;
  let database: string;
  beforeAll(async () => {
    database = (await databaseFor(engine)).database;
    gw = await startTestGateway(engine, { database });
  });
  afterAll(async () => gw?.close());

  const plan = (over: Partial<Parameters<typeof setFeePlan>[1]> = {}) =>
    setFeePlan(gw.store, {
      wallet_id: gw.merchant.wallet_id,
      payment_method: 'alipay',
      percent: '2.5',
      by: 'test',
      now: Date.now(),
      ...over,
    });
  const feeLine = async (order_id: string) =>
    (await gw.store.ledger.entriesOfOrder(order_id))[0]?.lines.find((l) => l.account === FEE_REVENUE);

  it('`fees set` makes version 1, then 2; `fees list` shows both, amounts in the wallet currency', async () => {
    const db = ['--database', database];
    const set = (...args: string[]) =>
      gateway(['fees', 'set', '--wallet-id', gw.merchant.wallet_id, '--method', 'wechat', ...args, '--json', ...db]);
    const first = await set('--percent', '1.9', '--fixed', '0.30', '--min', '0.50', '--max', '50');
    expect(first, first.stderr).toMatchObject({ code: 0 });
    expect(JSON.parse(first.stdout)).toMatchObject({
      version: 1,
      percent: '1.90',
      fixed: '0.30',
      min: '0.50',
      max: '50.00',
      currency: 'NZD',
      refund_fee: 'none',
    });
    const second = await set('--percent', '2', '--effective', '2099-01-01', '--refund-fee', 'pro_rata');
    expect(JSON.parse(second.stdout)).toMatchObject({
      version: 2,
      effective_from: '2099-01-01T00:00:00.000Z',
      refund_fee: 'pro_rata',
    });
    const list = await gateway(['fees', 'list', '--wallet-id', gw.merchant.wallet_id, '--json', ...db]);
    expect(JSON.parse(list.stdout).map((p: { version: number }) => p.version)).toEqual([1, 2]);
    // A plan in effect from 2099 applies to no order today: wechat orders are charged under version 1.
    const { order_id } = await gw.create({ payment_method: 'wechat', amount: '10.00' });
    await gw.pay(order_id, 'paid');
    expect(await feeLine(order_id)).toEqual({ account: FEE_REVENUE, currency: 'NZD', amount: -50 }); // 0.19 + 0.30, at least 0.50
  });

  it("a paid order's fee is posted with its payment: the merchant is owed the amount less the fee", async () => {
    await plan({ percent: '2.5', fixed: '0.30' });
    await sleep(5);
    const { order_id } = await gw.create({ amount: '120.00' });
    await gw.pay(order_id, 'paid');
    const [entry] = await gw.store.ledger.entriesOfOrder(order_id);
    expect(entry.lines).toEqual(
      expect.arrayContaining([
        { account: walletAccount(gw.merchant.wallet_id, 'pending'), currency: 'NZD', amount: -11670 },
        { account: FEE_REVENUE, currency: 'NZD', amount: -330 },
      ]),
    );
    expect(entry.memo).toMatch(/fee plan alipay version \d+/);
    expect((await gw.store.ledger.check()).problems).toEqual([]);
  });

  it('an order keeps the version it was created under when a new one is set before it is paid', async () => {
    await plan({ percent: '1' });
    await sleep(5);
    const before = await gw.create({ amount: '100.00' });
    await sleep(5);
    await plan({ percent: '3' });
    await sleep(5);
    const after = await gw.create({ amount: '100.00' });
    await gw.pay(after.order_id, 'paid');
    await gw.pay(before.order_id, 'paid');
    expect(await feeLine(before.order_id)).toMatchObject({ amount: -100 });
    expect(await feeLine(after.order_id)).toMatchObject({ amount: -300 });
  });

  it('refuses a percentage with three decimals, a date that is not one, an unknown wallet or method', async () => {
    await expect(plan({ percent: '2.555' })).rejects.toThrow(/--percent/);
    await expect(plan({ percent: '101' })).rejects.toThrow(/between 0 and 100/);
    await expect(plan({ effective: '2026-13-01' })).rejects.toThrow(/--effective/);
    await expect(plan({ wallet_id: 'W_NOPE' })).rejects.toThrow(/no wallet/);
    await expect(plan({ payment_method: 'cash' })).rejects.toThrow(/--method/);
    await expect(plan({ fixed: '0.305' })).rejects.toThrow(/--fixed/);
    await expect(plan({ min: '5', max: '1' })).rejects.toThrow(/minimum is above the maximum/);
    const bad = await gateway([
      'fees',
      'set',
      '--wallet-id',
      gw.merchant.wallet_id,
      '--method',
      'alipay',
      '--percent',
      'x',
      '--database',
      database,
    ]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/--percent/);
  });
});

describe.each(ENGINES)('FEE_PLANS_REQUIRED on %s', (engine) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(engine, { feePlansRequired: true });
  });
  afterAll(async () => gw?.close());
  const tryCreate = (payment_method: string) =>
    gw.post('/v2/transaction', gw.createBody({ payment_method })) as Promise<Record<string, unknown>>;

  it('refuses a create for a wallet and method without a plan in effect with 305, and takes it once there is one', async () => {
    expect(await tryCreate('alipay')).toMatchObject({
      code: 305,
      message: 'No margin plan for the merchant',
    });
    const refused = await tryCreate('alipay');
    expect(JSON.stringify(refused)).toContain(gw.merchant.wallet_id);
    await setFeePlan(gw.store, {
      wallet_id: gw.merchant.wallet_id,
      payment_method: 'alipay',
      percent: '2',
      effective: '2099-01-01',
      by: 'test',
      now: Date.now(),
    });
    // Not in effect yet: still refused.
    expect(await tryCreate('alipay')).toMatchObject({ code: 305 });
    await setFeePlan(gw.store, {
      wallet_id: gw.merchant.wallet_id,
      payment_method: 'alipay',
      percent: '2',
      by: 'test',
      now: Date.now(),
    });
    expect(await tryCreate('alipay')).toMatchObject({ code: 0 });
    expect(await tryCreate('wechat')).toMatchObject({ code: 305 });
  });
});
