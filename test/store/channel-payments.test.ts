// The provider payments of orders and the channel accounts, in the store, on both engines: one
// payment per order and flow, claims for reconciliation that never overlap (many at once, as
// several instances on one PostgreSQL would claim), marks that only move an open payment, orders
// past their life, and accounts replaced in place.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewChannelPayment } from '../../src/ports/transactions.js';
import { settle } from '../../src/usecases/settle-payment.js';
import { ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';
import { nonceOf, pendingOrder } from '../support/rows.js';

describe.each(ENGINES)('provider payments on %s', (engine) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(engine);
  });
  afterAll(async () => gw?.close());

  async function order(over: Parameters<typeof pendingOrder>[1] = {}) {
    const t = pendingOrder(gw.merchant, { channel: 'alipay', ...over });
    expect(await gw.store.transactions.insert(t, nonceOf(t))).toEqual({ created: true });
    return t;
  }
  const payment = (order_id: string, over: Partial<NewChannelPayment> = {}): NewChannelPayment => ({
    out_trade_no: order_id,
    order_id,
    provider: 'alipay',
    flow: 'qr',
    charged_amount: 557,
    charged_currency: 'CNY',
    description: 'Pinot Noir, Otago',
    client_ip: '122.122.122.1',
    payer: null,
    created_at: 1,
    updated_at: 1,
    next_check_at: 0,
    ...over,
  });

  it('one payment per order and flow: adding it again returns the first, whatever it says', async () => {
    const t = await order();
    const first = await gw.store.transactions.addPayment(payment(t.order_id));
    expect(first).toMatchObject({ state: 'open', payload: null, charged_amount: 557 });
    const again = await gw.store.transactions.addPayment(payment(t.order_id, { charged_amount: 999, created_at: 2 }));
    expect(again).toEqual(first);
    await gw.store.transactions.addPayment(payment(t.order_id, { out_trade_no: `${t.order_id}R`, flow: 'redirect' }));
    expect((await gw.store.transactions.listPayments(t.order_id)).map((p) => p.flow)).toEqual(['qr', 'redirect']);
  });

  it('a mark moves only an open payment: a paid one is not closed by a late report', async () => {
    const t = await order();
    await gw.store.transactions.addPayment(payment(t.order_id));
    await gw.store.transactions.markPayment(t.order_id, 'paid', 'T-1', 5);
    await gw.store.transactions.markPayment(t.order_id, 'closed', null, 6);
    expect(await gw.store.transactions.findPayment(t.order_id)).toMatchObject({ state: 'paid', provider_ref: 'T-1' });
  });

  it('the settle that pays an order marks its payment paid with it; a settle that does not happen marks nothing', async () => {
    const t = await order();
    await gw.store.transactions.addPayment(payment(t.order_id));
    const settled = await settle(gw.ctx, t, 'paid', { payment: { out_trade_no: t.order_id, provider_ref: 'T-2' } });
    expect(settled).toMatchObject({ status: 'paid' });
    expect(await gw.store.transactions.findPayment(t.order_id)).toMatchObject({ state: 'paid', provider_ref: 'T-2' });

    const other = await order();
    await gw.store.transactions.addPayment(payment(other.order_id));
    expect(await settle(gw.ctx, other, 'canceled')).toMatchObject({ status: 'canceled' });
    // Read as pending before the cancel: the settle finds it ended and changes nothing, the payment included.
    expect(await settle(gw.ctx, other, 'paid', { payment: { out_trade_no: other.order_id, provider_ref: 'T-3' } })).toBeUndefined();
    expect(await gw.store.transactions.findPayment(other.order_id)).toMatchObject({ state: 'open', provider_ref: null });
  });

  it('claims for reconciliation never overlap, skip payments not due, closed, or of orders no longer pending', async () => {
    const now = Date.now();
    const due: string[] = [];
    for (let i = 0; i < 30; i++) {
      const t = await order();
      await gw.store.transactions.addPayment(payment(t.order_id, { next_check_at: now - 1000 }));
      due.push(t.order_id);
    }
    const later = await order();
    await gw.store.transactions.addPayment(payment(later.order_id, { next_check_at: now + 60_000 }));
    const closed = await order();
    await gw.store.transactions.addPayment(payment(closed.order_id, { next_check_at: now - 1000 }));
    await gw.store.transactions.markPayment(closed.order_id, 'closed', null, now);
    const canceled = await order({ status: 'canceled' });
    await gw.store.transactions.addPayment(payment(canceled.order_id, { next_check_at: now - 1000 }));

    const claims = await Promise.all(Array.from({ length: 6 }, () => gw.store.transactions.claimPaymentsToCheck(now, 60_000, 10)));
    const claimed = claims.flat().map((c) => c.payment.out_trade_no);
    expect(new Set(claimed).size).toBe(claimed.length);
    for (const skipped of [later, closed, canceled]) expect(claimed).not.toContain(skipped.order_id);
    for (const c of claims.flat()) expect(c.order.order_id).toBe(c.payment.order_id);
    // Every due one of this test is claimed (others' may be too: the store is shared within the file).
    expect(due.every((id) => claimed.includes(id))).toBe(true);
    // Under a live claim, nobody gets it again; once scheduled, it is due again at its time.
    expect(await gw.store.transactions.claimPaymentsToCheck(now, 60_000, 100)).toEqual([]);
    const before = (await gw.store.transactions.findPayment(due[0]!))!.updated_at;
    await gw.store.transactions.schedulePaymentCheck(due[0]!, now + 10);
    // Asking about a payment does not change it: the reuse of its QR still counts from when it was opened.
    expect((await gw.store.transactions.findPayment(due[0]!))!.updated_at).toBe(before);
    expect((await gw.store.transactions.claimPaymentsToCheck(now + 20, 60_000, 100)).map((c) => c.payment.out_trade_no)).toEqual([due[0]]);
  });

  it('orders past their life: pending ones created before the time, oldest first', async () => {
    const base = Date.now() - 10 * 86_400_000;
    const old = await order({ created_at: base });
    const older = await order({ created_at: base - 1 });
    await order({ created_at: base - 2, status: 'paid' });
    const expired = (await gw.store.transactions.listExpired(base + 1, 100)).map((t) => t.order_id);
    expect(expired.slice(0, 2)).toEqual([older.order_id, old.order_id]);
    expect(expired).toHaveLength(2);
  });

  it('a wallet\'s account for a method is replaced in place, listed by wallet or provider, and removed', async () => {
    const stored = { wallet_id: gw.merchant.wallet_id, payment_method: 'wechat' as const, provider: 'wechatpay' as const, config: '{"mchid":"1"}', sealed_secrets: '{}', created_at: 1, updated_at: 1 };
    await gw.store.accounts.setChannelAccount(stored);
    await gw.store.accounts.setChannelAccount({ ...stored, config: '{"mchid":"2"}', created_at: 5, updated_at: 5 });
    expect(await gw.store.accounts.findChannelAccount(gw.merchant.wallet_id, 'wechat')).toEqual({ ...stored, config: '{"mchid":"2"}', updated_at: 5 });
    expect(await gw.store.accounts.listChannelAccounts({ provider: 'wechatpay' })).toHaveLength(1);
    expect(await gw.store.accounts.listChannelAccounts({ wallet_id: 'W-none' })).toEqual([]);
    expect(await gw.store.accounts.removeChannelAccount(gw.merchant.wallet_id, 'wechat')).toBe(true);
    expect(await gw.store.accounts.removeChannelAccount(gw.merchant.wallet_id, 'wechat')).toBe(false);
  });
});
