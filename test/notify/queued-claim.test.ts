// A settle tells the worker the notification it has just queued: claims take it by its event_id as
// soon as the global and per-host caps leave room, and such a poke does not search every host's due
// rows (claimDue); a poke without one, the regular poll and a search that left rows behind a cap
// do. Driven with a store that records the claims it is asked for.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { NotificationWorker } from '../../src/notify/worker.js';
import { resolveNotifySettings } from '../../src/notify/settings.js';
import type { ClaimedRow } from '../../src/ports/outbox.js';
import type { Store } from '../../src/ports/store.js';
import { silentLog } from './worker-bed.js';

function row(event_id: string, callback_host: string): ClaimedRow {
  return {
    event_id,
    callback_host,
    order_id: `o-${event_id}`,
    seq: 1,
    callback_url: `https://${callback_host}/cb`,
    payload: '{}',
    delivery_status: 'pending',
    attempts: 0,
    next_attempt_at: 0,
    claimed_by: 'me',
    claimed_until: 1,
    created_at: 0,
    delivered_at: null,
    attempts_pruned: 0,
    attempts_pruned_until: null,
    api_key: null,
  };
}

function recordingWorker(
  settings: { concurrency: number; hostConcurrency: number; pollIntervalMs?: number },
  claimMs = 0,
) {
  const calls: Array<
    | { kind: 'queued'; event_ids: readonly string[] }
    | { kind: 'due'; limit: number; host_limits: Array<[string, number]> }
  > = [];
  const hosts = new Map<string, string>();
  const hanging = new Map<string, () => void>();
  let stopping = false;
  const store = {
    outbox: {
      // Every attempt (it fails at once: its row has no key) waits on its record until the test
      // ends it: the claimed rows stay in flight.
      recordAttempt: (input: { event_id: string }) =>
        new Promise<boolean>((resolve) =>
          stopping ? resolve(false) : hanging.set(input.event_id, () => resolve(false)),
        ),
      claimQueued: async (input: { event_ids: readonly string[] }) => {
        calls.push({ kind: 'queued', event_ids: input.event_ids });
        if (claimMs > 0) await new Promise((r) => setTimeout(r, claimMs));
        return input.event_ids.map((id) => row(id, hosts.get(id)!));
      },
      claimDue: async (input: { limit: number; host_limits?: ReadonlyMap<string, number> }) => {
        calls.push({ kind: 'due', limit: input.limit, host_limits: [...(input.host_limits ?? [])].sort() });
        return [];
      },
    },
  } as unknown as Store;
  const worker = new NotificationWorker({
    store,
    mode: 'sandbox',
    settings: resolveNotifySettings({ stopGraceMs: 0, ...settings }),
    log: silentLog,
  });
  const poke = (event_id: string, callback_host: string) => {
    hosts.set(event_id, callback_host);
    worker.poke({ event_id, callback_host });
  };
  /** Ends the attempt of one notification (its record). */
  const finish = (event_id: string) => hanging.get(event_id)!();
  const stop = async () => {
    stopping = true;
    const stopped = worker.stop();
    for (const go of hanging.values()) go();
    await stopped;
  };
  return { worker, calls, poke, finish, stop };
}

const settled = async () => {
  for (let i = 0; i < 5; i++) await nextTurn();
};

describe('the notification worker, told what was just queued', () => {
  it('claims it by event_id without a search; a poke without one searches with the room left', async () => {
    const { worker, calls, poke, stop } = recordingWorker({ concurrency: 8, hostConcurrency: 2 });
    worker.start();
    await settled();
    expect(calls).toEqual([{ kind: 'due', limit: 8, host_limits: [] }]);
    calls.length = 0;
    poke('e1', 'a.example');
    poke('e2', 'b.example');
    await settled();
    expect(calls).toEqual([{ kind: 'queued', event_ids: ['e1', 'e2'] }]);
    // A poke without one (a resend from the console) searches, with what room is left.
    calls.length = 0;
    worker.poke();
    await settled();
    expect(calls).toEqual([
      {
        kind: 'due',
        limit: 6,
        host_limits: [
          ['a.example', 1],
          ['b.example', 1],
        ],
      },
    ]);
    await stop();
  });

  it('still searches at the regular poll while queued notifications keep coming', async () => {
    const { worker, calls, poke, stop } = recordingWorker({
      concurrency: 1000,
      hostConcurrency: 1000,
      pollIntervalMs: 100,
    });
    worker.start();
    // A queued notification every 10 ms for 350 ms: each claims by id, and the search still comes every 100 ms.
    const started = performance.now();
    for (let i = 0; i < 35; i++) {
      poke(`e${i}`, 'a.example');
      await new Promise((r) => setTimeout(r, 10));
    }
    await settled();
    const elapsed = performance.now() - started;
    const searches = calls.filter((c) => c.kind === 'due').length;
    const byId = calls.filter((c) => c.kind === 'queued').length;
    expect(byId).toBeGreaterThanOrEqual(30);
    // The start's search, then one every 100 ms or a little more (a timer fires late, never early); not one a poke.
    expect(searches).toBeGreaterThanOrEqual(Math.floor(elapsed / 200));
    expect(searches).toBeLessThan(byId / 2);
    await stop();
  });

  it('still searches at the regular poll when each claim by id takes longer than the pokes come', async () => {
    // Claims of 5 ms, a poke every millisecond: the worker never runs out of queued notifications.
    const { worker, calls, poke, stop } = recordingWorker(
      { concurrency: 100_000, hostConcurrency: 100_000, pollIntervalMs: 100 },
      5,
    );
    worker.start();
    const started = performance.now();
    for (let i = 0; performance.now() - started < 450; i++) {
      poke(`e${i}`, 'a.example');
      await new Promise((r) => setTimeout(r, 1));
    }
    // The start's search and the regular ones (every 100 ms or a little more); one only, before.
    expect(calls.filter((c) => c.kind === 'due').length).toBeGreaterThanOrEqual(3);
    await stop();
  });

  it('a wanted search (a resend) takes the slot that frees; the queued notifications the next', async () => {
    const { worker, calls, poke, finish, stop } = recordingWorker({ concurrency: 2, hostConcurrency: 2 });
    worker.start();
    await settled();
    poke('e1', 'a.example');
    poke('e2', 'a.example');
    await settled();
    poke('e3', 'a.example');
    poke('e4', 'a.example');
    worker.poke(); // a resend: its row waits with the queued ones for a free slot
    await settled();
    calls.length = 0;
    finish('e1');
    await settled();
    expect(calls).toEqual([
      { kind: 'due', limit: 1, host_limits: [['a.example', 1]] },
      { kind: 'queued', event_ids: ['e3'] },
    ]);
    await stop();
  });

  it("after a search finds a host full, only that host's ending attempts search again, not the others'", async () => {
    const { worker, calls, poke, finish, stop } = recordingWorker({ concurrency: 100, hostConcurrency: 2 });
    worker.start();
    await settled();
    poke('slow1', 'slow.example');
    poke('slow2', 'slow.example'); // both hang: slow.example is full
    await settled();
    worker.poke(); // a resend: the search counts slow.example full, and may leave rows behind it
    await settled();
    calls.length = 0;
    for (let i = 0; i < 5; i++) {
      poke(`f${i}`, 'fast.example');
      await settled();
      finish(`f${i}`);
      await settled();
    }
    expect(calls.filter((c) => c.kind === 'due')).toEqual([]);
    expect(calls.filter((c) => c.kind === 'queued')).toHaveLength(5);
    // An attempt at the full host ends: a slot there, so a search for what it may have left.
    finish('slow1');
    await settled();
    expect(calls.at(-1)).toEqual({ kind: 'due', limit: 99, host_limits: [['slow.example', 1]] });
    await stop();
  });

  it('takes no more by id than the global and per-host caps leave room for; the rest is left to the search', async () => {
    const { worker, calls, poke, finish, stop } = recordingWorker({ concurrency: 3, hostConcurrency: 1 });
    worker.start();
    await settled();
    calls.length = 0;
    poke('e1', 'a.example');
    poke('e2', 'a.example'); // a.example's one slot is taken by e1
    poke('e3', 'b.example');
    poke('e4', 'c.example');
    poke('e5', 'd.example'); // the global cap of 3 is reached with e4
    await settled();
    expect(calls).toEqual([{ kind: 'queued', event_ids: ['e1', 'e3', 'e4'] }]);
    // When e1's attempt ends, a.example has room again, and the worker one slot: e2, by id.
    calls.length = 0;
    finish('e1');
    await settled();
    expect(calls).toEqual([{ kind: 'queued', event_ids: ['e2'] }]);
    calls.length = 0;
    finish('e3');
    await settled();
    expect(calls).toEqual([{ kind: 'queued', event_ids: ['e5'] }]);
    await stop();
  });
});
