// A merchant-hosted create through a provider on durable SQLite: the provider is asked to open the
// payment as soon as the order is written, while its write is still being flushed to disk, and the
// merchant is answered only once that flush has ended (nobody may hold the QR of an order a crash
// could lose). The flush is replaced by one the test holds (ServeOptions.sqliteFlush).
import { fdatasync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHosted } from '../support/api.js';
import { alipayAccount, useAccount } from '../support/channels.js';
import { FakeAlipay } from '../support/fake-alipay.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { until } from '../support/wait.js';

/** fdatasync, unless the test holds flushes: then each waits for the test's release. */
class Flushes {
  holding = false;
  held: Array<() => void> = [];
  flush = (fd: number): Promise<void> => {
    const done = new Promise<void>((resolve, reject) => fdatasync(fd, (e) => (e ? reject(e) : resolve())));
    if (!this.holding) return done;
    return new Promise((resolve, reject) => this.held.push(() => void done.then(resolve, reject)));
  };
  release(): void {
    this.holding = false;
    for (const go of this.held.splice(0)) go();
  }
}

describe('a merchant-hosted create through Alipay on SQLite', () => {
  let fake: FakeAlipay;
  let gw: TestGateway;
  const flushes = new Flushes();
  beforeAll(async () => {
    fake = await FakeAlipay.start();
    gw = await startTestGateway('sqlite', { mode: 'live', providerTimeoutMs: 2000, sqliteFlush: flushes.flush });
    await useAccount(gw, alipayAccount(gw.merchant.wallet_id, fake));
  });
  afterAll(async () => {
    flushes.release();
    expect(fake?.refused).toEqual([]);
    await gw?.close();
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
    expect((await gw.store.transactions.find(created.order_id))!.qr_code_url).toBe(fake.trades.get(created.order_id)!.qr_code);
  });
});
