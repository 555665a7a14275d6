// A settle pokes the worker before its request is answered: the claim (a statement of its own)
// must wait for the caller's turn of the event loop to end, and pokes in one turn make one claim.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { NotificationWorker } from '../../src/notify/worker.js';
import { resolveNotifySettings } from '../../src/notify/settings.js';
import type { Store } from '../../src/ports/store.js';
import { silentLog } from './worker-bed.js';

function countingWorker(): { worker: NotificationWorker; claims: () => number } {
  let claims = 0;
  const store = {
    outbox: {
      claimDue: async () => {
        claims++;
        return [];
      },
    },
  } as unknown as Store;
  const worker = new NotificationWorker({
    store,
    mode: 'sandbox',
    settings: resolveNotifySettings({ stopGraceMs: 0 }),
    log: silentLog,
  });
  return { worker, claims: () => claims };
}

describe('the notification worker pokes', () => {
  it("claim after the caller's turn, once for all the pokes of that turn", async () => {
    const { worker, claims } = countingWorker();
    worker.start();
    worker.poke();
    worker.poke();
    expect(claims()).toBe(0);
    await nextTurn();
    await nextTurn();
    expect(claims()).toBe(1);
    worker.poke();
    await nextTurn();
    await nextTurn();
    expect(claims()).toBe(2);
    await worker.stop();
  });

  it('claim nothing once the worker is stopped', async () => {
    const { worker, claims } = countingWorker();
    worker.start();
    await worker.stop();
    await nextTurn();
    expect(claims()).toBe(0);
  });
});
