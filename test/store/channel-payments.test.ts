// The provider payments of orders and the channel accounts, in the store, on both engines: one
// payment per order and flow, claims for reconciliation that never overlap (many at once, as
// several instances on one PostgreSQL would claim), marks that only move an open payment, orders
// past their life, and accounts replaced in place.
import { sql, type CompiledQuery } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { NewChannelPayment } from '../../src/ports/transactions.js';
import { settle } from '../../src/usecases/settle-payment.js';
import { ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';
import { nonceOf, pendingOrder } from '../support/rows.js';

describe.each(ENGINES)('provider payments on %s', (engine) => {
  let gw: TestGateway;
  beforeAll(async () => {
    // Some tests write orders as rows (a paid one among them, without the settle that posts its entry).
    gw = await startTestGateway(engine, { checkLedgerOnClose: false });
  });
  afterAll(async () => gw?.close());

  async function order(over: Parameters<typeof pendingOrder>[1] = {}) {
    const t = pendingOrder(gw.merchant, { channel: 'alipay', ...over });
    expect(await gw.store.transactions.insert(t, nonceOf(t)).durable).toEqual({ created: true });
    return t;
  }
  const payment = (order_id: string, over: Partial<NewChannelPayment> = {}): NewChannelPayment => ({
    out_trade_no: order_id,
    order_id,
    provider: 'alipay',
    flow: 'qr',
    attempt: 1,
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

  it('an insert tells its result when committed and again when durable; a write that fails rejects both', async () => {
    const t = pendingOrder(gw.merchant, { channel: 'alipay', host_type: 1 });
    const write = gw.store.transactions.insert(t, nonceOf(t), payment(t.order_id));
    expect(await write.committed).toEqual({ created: true });
    expect(await write.durable).toEqual({ created: true });
    const taken = { ...t, order_id: `${t.order_id}7` };
    const again = gw.store.transactions.insert(taken, nonceOf(taken), payment(taken.order_id));
    expect(await again.committed).toMatchObject({ created: false, existing: { order_id: t.order_id } });
    expect(await again.durable).toEqual(await again.committed);
    expect((await gw.store.transactions.findPayment(taken.order_id, 'durable'))?.payment).toBeUndefined();
    // An amount of 0 breaks the table's check.
    const bad = pendingOrder(gw.merchant, { channel: 'alipay', amount: 0 });
    const failed = gw.store.transactions.insert(bad, nonceOf(bad));
    await expect(failed.committed).rejects.toThrow();
    await expect(failed.durable).rejects.toThrow();
    expect(await gw.store.transactions.find(bad.order_id)).toBeUndefined();
  });

  it('a committed read of a payment finds it and its order exactly as a durable read and find do', async () => {
    const t = pendingOrder(gw.merchant, { channel: 'alipay', host_type: 1 });
    await gw.store.transactions.insert(t, nonceOf(t), payment(t.order_id)).durable;
    await gw.store.transactions.setPaymentPayload(
      { out_trade_no: t.order_id, order_id: t.order_id },
      'https://qr.alipay.com/bax0',
      9,
      true,
    );
    const report = await gw.store.transactions.findPayment(t.order_id, 'committed');
    expect(report).toEqual(await gw.store.transactions.findPayment(t.order_id, 'durable'));
    expect(report?.order).toEqual(await gw.store.transactions.find(t.order_id));
    expect(report?.order).toMatchObject({
      order_id: t.order_id,
      amount: t.amount,
      qr_code_url: 'https://qr.alipay.com/bax0',
      status: 'pending',
    });
    expect(await gw.store.transactions.findPayment(`${t.order_id}-none`, 'committed')).toBeUndefined();
    expect(await gw.store.transactions.findPayment(`${t.order_id}-none`, 'durable')).toBeUndefined();
  });

  it('an order inserted with its payment has both; a reference that exists gets neither', async () => {
    const t = pendingOrder(gw.merchant, { channel: 'alipay', host_type: 1 });
    expect(
      await gw.store.transactions.insert(t, nonceOf(t), payment(t.order_id, { created_at: 7, updated_at: 7 })).durable,
    ).toEqual({ created: true });
    expect(await gw.store.transactions.listPayments(t.order_id)).toEqual([
      {
        ...payment(t.order_id, { created_at: 7, updated_at: 7 }),
        payload: null,
        state: 'open',
        provider_ref: null,
        check_claimed_until: null,
      },
    ]);
    // The same merchant_reference again under another order_id: the existing order comes back and no payment is recorded for the new id.
    const again = { ...t, order_id: `${t.order_id}X` };
    const result = await gw.store.transactions.insert(again, nonceOf(again), payment(again.order_id)).durable;
    expect(result).toMatchObject({ created: false, existing: { order_id: t.order_id } });
    expect((await gw.store.transactions.findPayment(again.order_id, 'durable'))?.payment).toBeUndefined();
  });

  it('orders inserted in the same turn, some with a payment and one on a taken reference, get exactly their own payments', async () => {
    const taken = await order();
    const fresh = Array.from({ length: 6 }, () => pendingOrder(gw.merchant, { channel: 'alipay', host_type: 1 }));
    const clash = { ...taken, order_id: `${taken.order_id}Y` };
    const spy = vi.spyOn(gw.store.db, 'executeQuery');
    let ran: string[];
    let results;
    try {
      results = await Promise.all([
        ...fresh.map(
          (t, i) => gw.store.transactions.insert(t, nonceOf(t), i % 2 === 0 ? payment(t.order_id) : undefined).durable,
        ),
        gw.store.transactions.insert(clash, nonceOf(clash), payment(clash.order_id)).durable,
      ]);
      ran = spy.mock.calls.map((c) => (c[0] as CompiledQuery).sql);
    } finally {
      spy.mockRestore();
    }
    // On PostgreSQL the turn's creates are one statement, the payments in it (not one each after a failed batch).
    if (engine === 'postgres') expect(ran.filter((q) => q.includes('insert into "channel_payments"'))).toHaveLength(1);
    expect(results.slice(0, 6)).toEqual(fresh.map(() => ({ created: true })));
    expect(results[6]).toMatchObject({ created: false, existing: { order_id: taken.order_id } });
    for (const [i, t] of fresh.entries()) {
      expect((await gw.store.transactions.listPayments(t.order_id)).length).toBe(i % 2 === 0 ? 1 : 0);
      expect(await gw.store.transactions.find(t.order_id)).toMatchObject({ order_id: t.order_id });
    }
    expect((await gw.store.transactions.findPayment(clash.order_id, 'durable'))?.payment).toBeUndefined();
  });

  it('a payment the database refuses fails its own order only, which is then not inserted either', async () => {
    const good = pendingOrder(gw.merchant, { channel: 'alipay', host_type: 1 });
    const bad = pendingOrder(gw.merchant, { channel: 'alipay', host_type: 1 });
    const [ok, refused] = await Promise.allSettled([
      gw.store.transactions.insert(good, nonceOf(good), payment(good.order_id)).durable,
      // charged_amount > 0 is a CHECK of the table.
      gw.store.transactions.insert(bad, nonceOf(bad), payment(bad.order_id, { charged_amount: 0 })).durable,
    ]);
    expect(ok).toEqual({ status: 'fulfilled', value: { created: true } });
    expect(refused.status).toBe('rejected');
    expect(await gw.store.transactions.find(bad.order_id)).toBeUndefined();
    expect((await gw.store.transactions.findPayment(good.order_id, 'durable'))?.payment).toMatchObject({
      state: 'open',
    });
  });

  it('a mark moves only an open payment: a paid one is not closed by a late report', async () => {
    const t = await order();
    await gw.store.transactions.addPayment(payment(t.order_id));
    await gw.store.transactions.markPayment(t.order_id, 'paid', 'T-1', 5);
    await gw.store.transactions.markPayment(t.order_id, 'closed', null, 6);
    expect((await gw.store.transactions.findPayment(t.order_id, 'durable'))?.payment).toMatchObject({
      state: 'paid',
      provider_ref: 'T-1',
    });
  });

  it("a provider's answer is stored on an open or paid payment (with the order's QR when asked), never on a closed one", async () => {
    const hosted = await order();
    await gw.store.transactions.addPayment(payment(hosted.order_id));
    expect(
      await gw.store.transactions.setPaymentPayload(
        { out_trade_no: hosted.order_id, order_id: hosted.order_id },
        'https://qr.example/a',
        10,
      ),
    ).toBe(true);
    expect((await gw.store.transactions.findPayment(hosted.order_id, 'durable'))?.payment).toMatchObject({
      payload: 'https://qr.example/a',
      updated_at: 10,
    });
    // Without orderQr the order's own qr_code_url is left as it was.
    expect((await gw.store.transactions.find(hosted.order_id))!.qr_code_url).toBe(hosted.qr_code_url);
    const merchantHosted = await order({ host_type: 1 });
    await gw.store.transactions.addPayment(payment(merchantHosted.order_id));
    await gw.store.transactions.markPayment(merchantHosted.order_id, 'paid', 'T-2', 11);
    expect(
      await gw.store.transactions.setPaymentPayload(
        { out_trade_no: merchantHosted.order_id, order_id: merchantHosted.order_id },
        'https://qr.example/b',
        12,
        true,
      ),
    ).toBe(true);
    expect((await gw.store.transactions.find(merchantHosted.order_id))!.qr_code_url).toBe('https://qr.example/b');
    const closed = await order({ host_type: 1 });
    await gw.store.transactions.addPayment(payment(closed.order_id));
    await gw.store.transactions.markPayment(closed.order_id, 'closed', null, 13);
    expect(
      await gw.store.transactions.setPaymentPayload(
        { out_trade_no: closed.order_id, order_id: closed.order_id },
        'https://qr.example/c',
        14,
        true,
      ),
    ).toBe(false);
    expect((await gw.store.transactions.findPayment(closed.order_id, 'durable'))?.payment).toMatchObject({
      payload: null,
      state: 'closed',
    });
    expect((await gw.store.transactions.find(closed.order_id))!.qr_code_url).toBe(closed.qr_code_url);
  });

  it('the settle that pays an order marks its payment paid with it; a settle that does not happen marks nothing', async () => {
    const t = await order();
    await gw.store.transactions.addPayment(payment(t.order_id));
    const settled = await settle(gw.ctx, t, 'paid', { payment: { out_trade_no: t.order_id, provider_ref: 'T-2' } });
    expect(settled).toMatchObject({ status: 'paid' });
    expect((await gw.store.transactions.findPayment(t.order_id, 'durable'))?.payment).toMatchObject({
      state: 'paid',
      provider_ref: 'T-2',
    });

    const other = await order();
    await gw.store.transactions.addPayment(payment(other.order_id));
    expect(await settle(gw.ctx, other, 'canceled')).toMatchObject({ status: 'canceled' });
    // Read as pending before the cancel: the settle finds it ended and changes nothing, the payment included.
    expect(
      await settle(gw.ctx, other, 'paid', { payment: { out_trade_no: other.order_id, provider_ref: 'T-3' } }),
    ).toBeUndefined();
    expect((await gw.store.transactions.findPayment(other.order_id, 'durable'))?.payment).toMatchObject({
      state: 'open',
      provider_ref: null,
    });
  });

  it('a settle from a read older than a renewed callback_url is still one unit with its mark: a mark that fails takes the settle back', async () => {
    const t = await order();
    await gw.store.transactions.addPayment(payment(t.order_id));
    const changes = {
      return_url: t.return_url,
      callback_url: 'https://m.example/cb-renewed',
      backPage_url: t.backPage_url,
      ip: t.ip,
      product_name: t.product_name,
      present_qr: t.present_qr,
      updated_at: t.updated_at + 1,
    };
    expect(await gw.store.transactions.renewPending(t.order_id, changes, nonceOf(t))).toMatchObject({
      callback_url: 'https://m.example/cb-renewed',
    });
    // The database refuses to mark this one payment, as a crash between the two writes would leave it.
    const refuse =
      engine === 'sqlite'
        ? [
            `create trigger refuse_mark before update on channel_payments when old.out_trade_no = '${t.order_id}' begin select raise(abort, 'mark refused'); end`,
          ]
        : [
            `create function refuse_mark() returns trigger language plpgsql as $$ begin raise exception 'mark refused'; end $$`,
            `create trigger refuse_mark before update on channel_payments for each row when (old.out_trade_no = '${t.order_id}') execute function refuse_mark()`,
          ];
    for (const statement of refuse) await sql.raw(statement).execute(gw.store.db);
    try {
      await expect(
        settle(gw.ctx, t, 'paid', { payment: { out_trade_no: t.order_id, provider_ref: 'T-4' } }),
      ).rejects.toThrow(/mark refused/);
    } finally {
      await sql
        .raw('drop trigger refuse_mark' + (engine === 'sqlite' ? '' : ' on channel_payments'))
        .execute(gw.store.db);
      if (engine === 'postgres') await sql.raw('drop function refuse_mark()').execute(gw.store.db);
    }
    expect(await gw.store.transactions.find(t.order_id)).toMatchObject({ status: 'pending', status_seq: 0 });
    expect(await gw.store.outbox.listByOrder(t.order_id)).toEqual([]);
    // Without the refusal the same settle pays the order, marks the payment and queues the new callback_url.
    expect(
      await settle(gw.ctx, t, 'paid', { payment: { out_trade_no: t.order_id, provider_ref: 'T-4' } }),
    ).toMatchObject({ status: 'paid', callback_url: 'https://m.example/cb-renewed' });
    expect((await gw.store.transactions.findPayment(t.order_id, 'durable'))?.payment).toMatchObject({
      state: 'paid',
      provider_ref: 'T-4',
    });
    expect((await gw.store.outbox.listByOrder(t.order_id)).map((r) => r.callback_url)).toEqual([
      'https://m.example/cb-renewed',
    ]);
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

    const claims = await Promise.all(
      Array.from({ length: 6 }, () => gw.store.transactions.claimPaymentsToCheck(now, 60_000, 10)),
    );
    const claimed = claims.flat().map((c) => c.payment.out_trade_no);
    expect(new Set(claimed).size).toBe(claimed.length);
    for (const skipped of [later, closed, canceled]) expect(claimed).not.toContain(skipped.order_id);
    for (const c of claims.flat()) expect(c.order.order_id).toBe(c.payment.order_id);
    // Every due one of this test is claimed (others' may be too: the store is shared within the file).
    expect(due.every((id) => claimed.includes(id))).toBe(true);
    // Under a live claim, nobody gets it again; once scheduled, it is due again at its time.
    expect(await gw.store.transactions.claimPaymentsToCheck(now, 60_000, 100)).toEqual([]);
    const before = (await gw.store.transactions.findPayment(due[0], 'durable'))!.payment.updated_at;
    await gw.store.transactions.schedulePaymentCheck(due[0], now + 10);
    // Asking about a payment does not change it: the reuse of its QR still counts from when it was opened.
    expect((await gw.store.transactions.findPayment(due[0], 'durable'))!.payment.updated_at).toBe(before);
    expect(
      (await gw.store.transactions.claimPaymentsToCheck(now + 20, 60_000, 100)).map((c) => c.payment.out_trade_no),
    ).toEqual([due[0]]);
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

  it("a wallet's account for a method is replaced in place, listed by wallet or provider, and removed", async () => {
    const stored = {
      wallet_id: gw.merchant.wallet_id,
      payment_method: 'wechat' as const,
      provider: 'wechatpay' as const,
      config: '{"mchid":"1"}',
      sealed_secrets: '{}',
      created_at: 1,
      updated_at: 1,
    };
    await gw.store.accounts.setChannelAccount(stored);
    await gw.store.accounts.setChannelAccount({ ...stored, config: '{"mchid":"2"}', created_at: 5, updated_at: 5 });
    expect(await gw.store.accounts.findChannelAccount(gw.merchant.wallet_id, 'wechat')).toEqual({
      ...stored,
      config: '{"mchid":"2"}',
      updated_at: 5,
    });
    expect(await gw.store.accounts.listChannelAccounts({ provider: 'wechatpay' })).toHaveLength(1);
    expect(await gw.store.accounts.listChannelAccounts({ wallet_id: 'W-none' })).toEqual([]);
    expect(await gw.store.accounts.removeChannelAccount(gw.merchant.wallet_id, 'wechat')).toBe(true);
    expect(await gw.store.accounts.removeChannelAccount(gw.merchant.wallet_id, 'wechat')).toBe(false);
  });
});
