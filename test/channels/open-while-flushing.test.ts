// A merchant-hosted create through a provider on durable SQLite: the provider is asked to open the
// payment as soon as the order is written, while its write is still being flushed to disk, and the
// merchant is answered only once that flush has ended (nobody may hold the QR of an order a crash
// could lose). The flush is replaced by one the test holds (ServeOptions.sqliteFlush).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHosted } from '../support/api.js';
import { alipayAccount, useAccount } from '../support/channels.js';
import { FakeAlipay } from '../support/fake-alipay.js';
import { flushHeldGateway, within } from '../support/flushes.js';
import type { TestGateway } from '../support/gateway.js';
import { nonceOf, pendingOrder } from '../support/rows.js';
import { until } from '../support/wait.js';

describe('a merchant-hosted create through Alipay on SQLite', () => {
  const held = flushHeldGateway({ mode: 'live', providerTimeoutMs: 2000 });
  const { flushes } = held;
  let fake: FakeAlipay;
  let gw: TestGateway;
  beforeAll(async () => {
    fake = await FakeAlipay.start();
    gw = held.gw();
    await useAccount(gw, alipayAccount(gw.merchant.wallet_id, fake));
  });
  afterAll(async () => {
    expect(fake?.refused).toEqual([]);
    await fake?.close();
  });

  it('asks Alipay while the order is being flushed, and answers the merchant only once it is on disk', async () => {
    // The first create takes a block of order numbers, a write of its own that waits for its flush.
    await createHosted(gw, { callback_url: 'http://127.0.0.1:9/cb' });
    flushes.holding = true;
    const before = fake.calls.length;
    let answered = false;
    const creating = createHosted(gw, { callback_url: 'http://127.0.0.1:9/cb' }).then((r) => ((answered = true), r));
    // The precreate reaches Alipay, and Alipay answers, while the order's flush is held.
    await until('Alipay to be asked', () => fake.calls.length > before);
    expect(flushes.held.length).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 100));
    expect(answered).toBe(false);
    flushes.release();
    const created = await creating;
    expect(fake.trades.get(created.order_id)).toMatchObject({ product: 'precreate' });
    expect((await gw.store.transactions.find(created.order_id))!.qr_code_url).toBe(
      fake.trades.get(created.order_id)!.qr_code,
    );
  });

  /** Holds the flushes from now, and starts one: a write whose flush is then in flight. */
  async function flushInFlight(): Promise<void> {
    flushes.holding = true;
    void gw.store.transactions.markPayment('none-such', 'closed', null, Date.now());
    await until('a flush to be in flight', () => flushes.held.length > 0);
  }

  it('an insert is committed, with its result, while its flush is held, and durable only after; a taken reference says so in both', async () => {
    const t = pendingOrder(gw.merchant, { channel: 'alipay', host_type: 1 });
    flushes.holding = true;
    const write = gw.store.transactions.insert(t, nonceOf(t));
    expect(await within(write.committed, 200)).toEqual({ created: true });
    expect(await within(write.durable, 200)).toBe('held');
    flushes.release();
    expect(await write.durable).toEqual({ created: true });
    const again = gw.store.transactions.insert(
      { ...t, order_id: `${t.order_id}9` },
      nonceOf({ ...t, order_id: `${t.order_id}9` }),
    );
    expect(await again.committed).toMatchObject({ created: false, existing: { order_id: t.order_id } });
    expect(await again.durable).toMatchObject({ created: false, existing: { order_id: t.order_id } });
  });

  it('an insert that fails rejects both its moments', async () => {
    // An amount of 0 breaks the table's check.
    const t = pendingOrder(gw.merchant, { channel: 'alipay', amount: 0 });
    const write = gw.store.transactions.insert(t, nonceOf(t));
    await expect(write.committed).rejects.toThrow();
    await expect(write.durable).rejects.toThrow();
    expect(await gw.store.transactions.find(t.order_id)).toBeUndefined();
  });

  it('a committed read of a payment does not wait for a flush in flight; a durable read waits for it', async () => {
    const created = await createHosted(gw, { callback_url: 'http://127.0.0.1:9/cb' });
    await flushInFlight();
    const report = await within(gw.store.transactions.findPayment(created.order_id, 'committed'), 200);
    expect(report).toMatchObject({
      payment: { out_trade_no: created.order_id, state: 'open' },
      order: { order_id: created.order_id, status: 'pending' },
    });
    const durable = gw.store.transactions.findPayment(created.order_id, 'durable');
    expect(await within(durable, 200)).toBe('held');
    flushes.release();
    expect(await durable).toMatchObject({ payment: { out_trade_no: created.order_id } });
  });

  it("acknowledges Alipay's notification only once the order's settle is on disk", async () => {
    // A first payment, so that the gateway has Alipay's accounts at hand (their read would wait).
    await fake.pay((await createHosted(gw, { callback_url: 'http://127.0.0.1:9/cb' })).order_id);
    const created = await createHosted(gw, { callback_url: 'http://127.0.0.1:9/cb' });
    await flushInFlight();
    const answer = fake.pay(created.order_id).then(() => fake.notifications.at(-1)!.answer);
    // Read at once, settled into the batch, and the answer held with its flush.
    expect(await within(answer, 300)).toBe('held');
    flushes.release();
    expect(await answer).toBe('success');
    expect(await gw.store.transactions.find(created.order_id)).toMatchObject({ status: 'paid' });
  });
});
