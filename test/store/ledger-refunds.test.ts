// Refunds on the books (issue 40), on both engines: a refund's amount is taken from its wallet
// (pending first, then available) into `reserved` before its provider is asked, leaves it when the
// provider makes it, and goes back when the provider refuses; a wallet that cannot cover a refund
// answers 559, the order's own cap 550; concurrent refunds never overdraw a wallet.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FEE_REVENUE, providerAccount, walletAccount } from '../../src/domain/ledger.js';
import type { MerchantCredentials } from '../../src/usecases/administration.js';
import { setFeePlan } from '../../src/usecases/fee-plans.js';
import { refundBody } from '../support/api.js';
import { ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(ENGINES)('refunds on the books on %s', (engine) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(engine);
  });
  afterAll(async () => gw?.close());

  async function paid(m: MerchantCredentials, amount: string): Promise<string> {
    const { order_id } = await gw.create({ amount }, m);
    expect((await gw.pay(order_id, 'paid')).status).toBe('paid');
    return order_id;
  }
  const refund = (m: MerchantCredentials, order_id: string, amount: string, reference: string) =>
    gw.post('/refund', refundBody(gw, order_id, amount, reference, m));
  const balances = (m: MerchantCredentials) => gw.store.ledger.walletBalances(m.wallet_id, 'NZD');
  const kinds = async (order_id: string) => (await gw.store.ledger.entriesOfOrder(order_id)).map((e) => e.kind);
  const plan = async (m: MerchantCredentials, refund_fee: 'none' | 'pro_rata') => {
    await setFeePlan(gw.store, {
      wallet_id: m.wallet_id,
      payment_method: 'alipay',
      percent: '2.5',
      refund_fee,
      by: 'test',
      now: Date.now(),
    });
    await sleep(5); // an order created after the plan
  };

  it('a new wallet paid and refunded in whole at once (the default settings): succeeds, nothing left owed', async () => {
    const m = await gw.newMerchant();
    const order_id = await paid(m, '120.00');
    expect(await balances(m)).toEqual({ currency: 'NZD', pending: 12000, available: 0, reserved: 0 });
    expect(await refund(m, order_id, '120.00', 'whole')).toMatchObject({ code: 0 });
    expect(await balances(m)).toEqual({ currency: 'NZD', pending: 0, available: 0, reserved: 0 });
    expect(await kinds(order_id)).toEqual(['payment', 'refund_reserved', 'refund_made']);
    const [, reserved, made] = await gw.store.ledger.entriesOfOrder(order_id);
    expect(reserved.lines).toEqual([
      { account: walletAccount(m.wallet_id, 'pending'), currency: 'NZD', amount: 12000 },
      { account: walletAccount(m.wallet_id, 'reserved'), currency: 'NZD', amount: -12000 },
    ]);
    expect(made.lines).toEqual([
      { account: walletAccount(m.wallet_id, 'reserved'), currency: 'NZD', amount: 12000 },
      { account: providerAccount('sandbox', m.wallet_id), currency: 'NZD', amount: -12000 },
    ]);
    expect((await gw.store.ledger.check()).problems).toEqual([]);
  });

  it('a plan that keeps its fee (none): the refund of the whole order needs more than the order left, 559', async () => {
    const m = await gw.newMerchant();
    await plan(m, 'none');
    const order_id = await paid(m, '100.00'); // fee 2.50: 97.50 pending
    const reply = await refund(m, order_id, '100.00', 'whole');
    expect(reply).toMatchObject({ code: 559, message: 'Insufficient amount in your wallet' });
    expect(reply.detail).toMatch(/needs 100\.00 NZD and holds 97\.50 NZD pending and 0\.00 NZD available/);
    // Nothing was reserved or asked: the order can still be refunded up to what the wallet holds.
    expect((await gw.store.transactions.find(order_id))!.refunded_amount).toBe(0);
    expect(await gw.store.refunds.listByOrder(order_id)).toEqual([]);
    expect(await refund(m, order_id, '97.50', 'most')).toMatchObject({ code: 0 });
    expect(await balances(m)).toEqual({ currency: 'NZD', pending: 0, available: 0, reserved: 0 });
    // A second paid order covers the rest.
    await paid(m, '10.00');
    expect(await refund(m, order_id, '2.50', 'rest')).toMatchObject({ code: 0 });
    expect(await balances(m)).toMatchObject({ pending: 975 - 250 });
    expect((await gw.store.ledger.check()).problems).toEqual([]);
  });

  it('a plan that gives its fee back (pro_rata): partial refunds give back the whole fee exactly', async () => {
    const m = await gw.newMerchant();
    await plan(m, 'pro_rata');
    const order_id = await paid(m, '100.01'); // fee 2.50
    for (const [i, part] of ['33.33', '33.33', '33.35'].entries())
      expect(await refund(m, order_id, part, `part ${i}`)).toMatchObject({ code: 0 });
    expect(await balances(m)).toEqual({ currency: 'NZD', pending: 0, available: 0, reserved: 0 });
    const entries = await gw.store.ledger.entriesOfOrder(order_id);
    const fees = entries.flatMap((e) => e.lines.filter((l) => l.account === FEE_REVENUE)).map((l) => l.amount);
    expect(fees.reduce((a, b) => a + b, 0)).toBe(0);
    expect(fees[0]).toBe(-250);
    expect((await gw.store.ledger.check()).problems).toEqual([]);
  });

  it('the provider refuses: the reservation goes back where it came from', async () => {
    const m = await gw.newMerchant();
    const order_id = await paid(m, '50.00');
    const res = await fetch(`${gw.url}/sandbox/refunds/${order_id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'answer=refuse',
    });
    expect(res.status).toBe(200);
    expect(await refund(m, order_id, '20.00', 'refused')).toMatchObject({ code: 556 });
    expect(await kinds(order_id)).toEqual(['payment', 'refund_reserved', 'refund_failed']);
    expect(await balances(m)).toEqual({ currency: 'NZD', pending: 5000, available: 0, reserved: 0 });
    expect((await gw.store.ledger.check()).problems).toEqual([]);
  });

  it('the order cap keeps its own code: above what is left of the order is 550, not 559', async () => {
    const m = await gw.newMerchant();
    const order_id = await paid(m, '30.00');
    await paid(m, '500.00');
    expect(await refund(m, order_id, '20.00', 'a')).toMatchObject({ code: 0 });
    const reply = await refund(m, order_id, '20.00', 'b');
    expect(reply).toMatchObject({ code: 550, message: 'Refund parameters wrong' });
    expect(reply.detail).toMatch(/what is left to refund on order .* \(10\.00\)/);
  });

  it('concurrent refunds of several orders of one wallet never overdraw it', async () => {
    const m = await gw.newMerchant();
    await plan(m, 'none');
    // Three orders of 100.00, 97.50 each credited: 292.50. Twelve refunds of 50.00: the orders'
    // caps let six through (300.00), the wallet five (250.00).
    const orders = [await paid(m, '100.00'), await paid(m, '100.00'), await paid(m, '100.00')];
    const replies = await Promise.all(
      Array.from({ length: 12 }, (_, i) => refund(m, orders[i % 3], '50.00', `concurrent ${i}`)),
    );
    const codes = replies.map((r) => r.code).sort((a, b) => a - b);
    expect(codes.filter((c) => c === 0)).toHaveLength(5);
    expect(codes).toContain(559);
    for (const c of codes) expect([0, 550, 559]).toContain(c);
    expect(await balances(m)).toEqual({ currency: 'NZD', pending: 29250 - 25000, available: 0, reserved: 0 });
    expect((await gw.store.ledger.check()).problems).toEqual([]);
  });

  it('reservations at once, straight to the store, never take more than the wallet holds', async () => {
    const m = await gw.newMerchant();
    await plan(m, 'none');
    const orders = [await paid(m, '100.00'), await paid(m, '100.00'), await paid(m, '100.00')];
    // 292.50 credited; fifteen reservations of 20.00 fit the orders' caps (300.00), fourteen the wallet.
    let n = 0;
    const results = await Promise.all(
      Array.from({ length: 15 }, (_, i) => {
        const order_id = orders[i % 3];
        const refund_id = `Rat-once-${engine}-${++n}`;
        return gw.store.refunds.reserve(
          {
            refund_id,
            order_id,
            refund_amount: 2000,
            reference: refund_id,
            dedupe_key: refund_id,
            created_at: Date.now(),
          },
          { refund_fee: 'none' },
        );
      }),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(14);
    expect(results.filter((r) => !r.ok)).toEqual([
      { ok: false, reason: 'wallet', need: 2000, pending: 1250, available: 0 },
    ]);
    expect(await balances(m)).toEqual({ currency: 'NZD', pending: 1250, available: 0, reserved: 28000 });
    expect((await gw.store.ledger.check()).problems).toEqual([]);
  });
});
