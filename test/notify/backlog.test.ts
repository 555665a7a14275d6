// A backlog of notifications to one merchant drains at the speed of its receiver: when an attempt
// finishes and the per-host cap had held rows back, the worker claims the next due row at once,
// instead of waiting for its next poll.
import { describe, expect, it, vi } from 'vitest';
import { ENGINES } from '../support/gateway.js';
import { useWorkerBed } from './worker-bed.js';

const BACKLOG = 40;
const HOST_CAP = 4;

describe.each(ENGINES)('a notification backlog to one receiver on %s', (engine) => {
  // The gateway's own worker is off, so the backlog builds up in the outbox first.
  const bed = useWorkerBed(engine);

  it(`drains ${BACKLOG} notifications, ${HOST_CAP} at a time, without waiting for a poll`, async () => {
    const { gw, rx } = bed;
    const refs: string[] = [];
    for (let i = 0; i < BACKLOG; i++) {
      const { order_id, merchant_reference } = await gw.create({ callback_url: `${rx.url}/backlog` });
      expect((await gw.pay(order_id)).status).toBe('paid');
      refs.push(merchant_reference);
    }
    // Polling once an hour: after start() looks once, only finished attempts can claim more rows.
    // Before the fix a claim that filled the host's cap left the worker idle until that poll.
    bed.startWorker({
      pollIntervalMs: 3_600_000,
      concurrency: 64,
      hostConcurrency: HOST_CAP,
      hostConcurrencyMax: HOST_CAP,
    });
    await rx.waitFor(
      (rs) => rs.filter((r) => r.answered === 'sent').length >= BACKLOG,
      `all ${BACKLOG} notifications`,
      25_000,
    );

    // Each notification once, never more than the cap in flight to this receiver.
    const byRef = new Map<string, number>();
    for (const r of rx.received)
      byRef.set(r.fields.get('merchant_reference')!, (byRef.get(r.fields.get('merchant_reference')!) ?? 0) + 1);
    expect([...byRef.keys()].sort()).toEqual([...refs].sort());
    expect([...byRef.values()].every((n) => n === 1)).toBe(true);
    expect(rx.maxOpen).toBeLessThanOrEqual(HOST_CAP);
    // Every row recorded delivered after exactly one attempt.
    await vi.waitFor(
      async () => {
        const rows = await Promise.all(
          refs.map(
            async (ref) =>
              (
                await gw.store.outbox.listByOrder(
                  (await gw.store.transactions.findByReference(gw.merchant.user_id, ref))!.order_id,
                )
              )[0],
          ),
        );
        expect(rows.map((r) => `${r?.delivery_status}/${r?.attempts}`)).toEqual(refs.map(() => 'delivered/1'));
      },
      { timeout: 10_000, interval: 50 },
    );
  });
});
