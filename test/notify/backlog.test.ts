// A backlog of notifications to one merchant drains at the speed of its receiver: when an attempt
// finishes and the per-host cap had held rows back, the worker claims the next due row at once,
// instead of waiting for its next poll.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { NotificationWorker } from '../../src/notify/worker.js';
import { resolveNotifySettings } from '../../src/notify/settings.js';
import { ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';
import { Receiver } from './receiver.js';

const BACKLOG = 40;
const HOST_CAP = 4;
const silent = { debug() {}, info() {}, warn() {}, error() {} };

describe.each(ENGINES)('a notification backlog to one receiver on %s', (engine) => {
  let gw: TestGateway;
  let rx: Receiver;
  let worker: NotificationWorker | undefined;
  beforeAll(async () => {
    rx = await Receiver.start();
    // The gateway's own worker is off, so the backlog builds up in the outbox first.
    gw = await startTestGateway(engine, { notify: { enabled: false } });
  });
  afterAll(async () => {
    await worker?.stop();
    await gw?.close();
    await rx?.close();
  });

  it(`drains ${BACKLOG} notifications, ${HOST_CAP} at a time, without waiting for a poll`, async () => {
    const refs: string[] = [];
    for (let i = 0; i < BACKLOG; i++) {
      const { order_id, merchant_reference } = await gw.create({ callback_url: `${rx.url}/backlog` });
      expect((await gw.pay(order_id)).status).toBe('paid');
      refs.push(merchant_reference);
    }
    // Polling once an hour: after start() looks once, only finished attempts can claim more rows.
    // Before the fix a claim that filled the host's cap left the worker idle until that poll.
    worker = new NotificationWorker({
      store: gw.store,
      mode: 'sandbox',
      settings: resolveNotifySettings({ pollIntervalMs: 3_600_000, concurrency: 64, hostConcurrency: HOST_CAP }),
      log: silent,
    });
    worker.start();
    await rx.waitFor((rs) => rs.filter((r) => r.answered === 'sent').length >= BACKLOG, `all ${BACKLOG} notifications`, 25_000);

    // Each notification once, never more than the cap in flight to this receiver.
    const byRef = new Map<string, number>();
    for (const r of rx.received) byRef.set(r.fields.get('merchant_reference')!, (byRef.get(r.fields.get('merchant_reference')!) ?? 0) + 1);
    expect([...byRef.keys()].sort()).toEqual([...refs].sort());
    expect([...byRef.values()].every((n) => n === 1)).toBe(true);
    expect(rx.maxOpen).toBeLessThanOrEqual(HOST_CAP);
    // Every row recorded delivered after exactly one attempt.
    await vi.waitFor(
      async () => {
        const rows = await Promise.all(refs.map(async (ref) => (await gw.store.listNotifications((await gw.store.findTransactionByReference(gw.merchant.user_id, ref))!.order_id))[0]));
        expect(rows.map((r) => `${r?.delivery_status}/${r?.attempts}`)).toEqual(refs.map(() => 'delivered/1'));
      },
      { timeout: 10_000, interval: 50 },
    );
  });
});
