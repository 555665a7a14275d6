// The ledger's invariants over random sequences (issue 40), on both engines: payments (some with a
// fee), refunds (some refused by the provider, some still waiting), settlement runs, payouts (paid,
// returned, canceled), in any order. After every sequence: `ledger check` finds nothing, no balance
// is below zero, and the wallet's balances add up to what the events say it is owed.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { percentOf } from '../../src/domain/fees.js';
import { DAY_MS } from '../../src/domain/ledger-settlement.js';
import { proRata } from '../../src/domain/money.js';
import type { MerchantCredentials } from '../../src/usecases/administration.js';
import { runSettlement } from '../../src/usecases/books.js';
import { setFeePlan } from '../../src/usecases/fee-plans.js';
import { addBankAccount, movePayout, requestPayout, verifyBankAccount } from '../../src/usecases/payouts.js';
import { ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';

type Op =
  | { op: 'pay'; cents: number }
  | { op: 'refund'; order: number; cents: number; outcome: 'made' | 'refused' | 'waiting' }
  | { op: 'settle'; days: number }
  | { op: 'payout'; cents: number; outcome: 'paid' | 'returned' | 'canceled' | 'requested' };

const ops: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant('pay' as const), cents: fc.integer({ min: 1, max: 50_000 }) }),
  fc.record({
    op: fc.constant('refund' as const),
    order: fc.nat(20),
    cents: fc.integer({ min: 1, max: 30_000 }),
    outcome: fc.constantFrom('made' as const, 'refused' as const, 'waiting' as const),
  }),
  fc.record({ op: fc.constant('settle' as const), days: fc.integer({ min: 0, max: 3 }) }),
  fc.record({
    op: fc.constant('payout' as const),
    cents: fc.integer({ min: 1, max: 40_000 }),
    outcome: fc.constantFrom('paid' as const, 'returned' as const, 'canceled' as const, 'requested' as const),
  }),
);

describe.each(ENGINES)('the ledger over random sequences on %s', (engine) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(engine);
  });
  afterAll(async () => gw?.close());

  it('stays sound: balanced, never below zero, owed what the events say', { timeout: 240_000 }, async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(ops, { minLength: 3, maxLength: 14 }), fc.boolean(), async (sequence, withFee) => {
        run++;
        const m: MerchantCredentials = await gw.newMerchant();
        if (withFee)
          await setFeePlan(gw.store, {
            wallet_id: m.wallet_id,
            payment_method: 'alipay',
            percent: '2.5',
            fixed: '0.30',
            refund_fee: run % 2 === 0 ? 'pro_rata' : 'none',
            by: 'test',
            now: Date.now() - 1000,
          });
        const account = await addBankAccount(gw.store, {
          wallet_id: m.wallet_id,
          holder: 'Property Shop',
          nz_account: '01-0902-0068389-00',
          by: 'test',
          now: Date.now(),
        });
        await verifyBankAccount(gw.store, account.bank_account_id, 'test', Date.now());
        const orders: string[] = [];
        let clock = Date.now();
        let refundN = 0;
        for (const o of sequence) {
          if (o.op === 'pay') {
            const amount = (o.cents / 100).toFixed(2);
            const { order_id } = await gw.create({ amount }, m);
            await gw.pay(order_id, 'paid');
            orders.push(order_id);
          } else if (o.op === 'refund' && orders.length > 0) {
            const order_id = orders[o.order % orders.length];
            const refund_id = `Rprop${engine}${run}x${++refundN}`;
            const r = await gw.store.refunds.reserve(
              {
                refund_id,
                order_id,
                refund_amount: o.cents,
                reference: refund_id,
                dedupe_key: refund_id,
                created_at: Date.now(),
              },
              { refund_fee: run % 2 === 0 ? 'pro_rata' : 'none' },
            );
            if (r.ok && o.outcome === 'made') await gw.store.refunds.complete(refund_id, Date.now());
            if (r.ok && o.outcome === 'refused') await gw.store.refunds.fail(refund_id, Date.now());
          } else if (o.op === 'settle') {
            clock += o.days * DAY_MS;
            await runSettlement(gw.store, clock + 1);
          } else if (o.op === 'payout') {
            const amount = (o.cents / 100).toFixed(2);
            const payout = await requestPayout(gw.store, {
              wallet_id: m.wallet_id,
              amount,
              by: 'test',
              now: Date.now(),
            }).catch(() => undefined);
            if (!payout || o.outcome === 'requested') continue;
            if (o.outcome === 'canceled') {
              await movePayout(gw.store, payout.payout_id, 'canceled', 'test', Date.now());
              continue;
            }
            await movePayout(gw.store, payout.payout_id, 'approved', 'test', Date.now());
            await gw.store.payouts.batch('NZD', `PBprop${engine}${run}${payout.payout_id}`, 'test', Date.now());
            await movePayout(gw.store, payout.payout_id, o.outcome, 'test', Date.now(), 'property');
          }
        }
        const b = await gw.store.ledger.walletBalances(m.wallet_id, 'NZD');
        expect(b.pending).toBeGreaterThanOrEqual(0);
        expect(b.available).toBeGreaterThanOrEqual(0);
        expect(b.reserved).toBeGreaterThanOrEqual(0);
        // What the events say the wallet holds (pending, available and reserved together), from the
        // events alone, not from the ledger: each paid order's net, plus the fee its standing refunds
        // gave back (they hold their whole amount in reserved), less the refunds made; less each
        // payout sent to the bank and not returned (amount and fee).
        let owed = 0;
        for (const order_id of orders) {
          const order = (await gw.store.transactions.find(order_id))!;
          const fee = withFee ? Math.min(order.amount, percentOf(order.amount, 250) + 30) : 0;
          const refunds = await gw.store.refunds.listByOrder(order_id);
          const sum = (status: string[]) =>
            refunds.filter((r) => status.includes(r.refund_status)).reduce((s, r) => s + r.refund_amount, 0);
          const standing = sum(['pending', 'succeeded']);
          expect(order.refunded_amount).toBe(standing);
          expect(standing).toBeLessThanOrEqual(order.amount);
          const feeBack = run % 2 === 0 && standing > 0 ? proRata(standing, order.amount, fee) : 0;
          owed += order.amount - fee + feeBack - sum(['succeeded']);
        }
        for (const p of await gw.store.payouts.list({ wallet_id: m.wallet_id }))
          if (p.payout_status === 'in_batch' || p.payout_status === 'paid') owed -= p.amount + p.fee;
        expect(b.pending + b.available + b.reserved).toBe(owed);
        expect((await gw.store.ledger.check()).problems).toEqual([]);
      }),
      { numRuns: engine === 'postgres' ? 8 : 12 },
    );
  });
});
