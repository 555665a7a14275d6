// Shutting down with a notification attempt in flight: within stopGraceMs the attempt finishes and
// is recorded (no duplicate on the next start); past it, it is aborted and due again at once.
import { describe, expect, it, vi } from 'vitest';
import { ENGINES } from '../support/gateway.js';
import { useWorkerBed } from './worker-bed.js';

describe.each(ENGINES)('stopping the worker with an attempt in flight on %s', (engine) => {
  const bed = useWorkerBed(engine);

  async function inFlight(path: string, delayMs: number, stopGraceMs: number) {
    const { gw, rx } = bed;
    rx.answers.push({ status: 200, body: 'sent', delayMs });
    const { order_id } = await gw.create({ callback_url: `${rx.url}${path}` });
    await gw.pay(order_id);
    const worker = bed.startWorker({ pollIntervalMs: 3_600_000, stopGraceMs });
    await vi.waitFor(() => expect(rx.received.some((r) => r.path === path)).toBe(true), {
      timeout: 10_000,
      interval: 10,
    });
    await worker.stop();
    const [row] = await gw.store.outbox.listByOrder(order_id);
    return { row: row, attempts: await gw.store.outbox.listAttempts(row.event_id) };
  }

  it('lets an attempt that answers within the grace finish, and records it delivered', async () => {
    const { row, attempts } = await inFlight('/slow-but-in-time', 300, 10_000);
    expect(row).toMatchObject({ delivery_status: 'delivered', attempts: 1 });
    expect(attempts).toMatchObject([{ http_status: 200 }]);
  });

  it('aborts an attempt still running when the grace ends; it is due again', async () => {
    const { row, attempts } = await inFlight('/too-slow', 5_000, 100);
    expect(row).toMatchObject({ delivery_status: 'pending', attempts: 1 });
    expect(attempts[0].error).toMatch(/shutting down/);
  });
});
