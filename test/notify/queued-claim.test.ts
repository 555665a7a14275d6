// A settle tells the worker the notification it has just queued (poke's hint): the next claim takes
// it by its event_id, within the global and per-host caps, before the search of every host's due
// rows (claimDue) looks for the rest. Driven with a store that records the claims it is asked for.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { NotificationWorker } from '../../src/notify/worker.js';
import { resolveNotifySettings } from '../../src/notify/settings.js';
import type { OutboxRow } from '../../src/ports/outbox.js';
import type { Store } from '../../src/ports/store.js';
import { silentLog } from './worker-bed.js';

function row(event_id: string, callback_host: string): OutboxRow {
  return { event_id, callback_host, order_id: `o-${event_id}`, seq: 1, callback_url: `https://${callback_host}/cb`, payload: '{}', delivery_status: 'pending', attempts: 0, next_attempt_at: 0, claimed_by: 'me', claimed_until: 1, created_at: 0, delivered_at: null, attempts_pruned: 0, attempts_pruned_until: null } as OutboxRow;
}

function recordingWorker(settings: { concurrency: number; hostConcurrency: number }) {
  const calls: Array<{ kind: 'queued'; event_ids: readonly string[] } | { kind: 'due'; limit: number; host_limits: Array<[string, number]> }> = [];
  const hosts = new Map<string, string>();
  const hanging: Array<() => void> = [];
  const store = {
    outbox: {
      recordAttempt: async () => false,
      claimQueued: async (input: { event_ids: readonly string[] }) => {
        calls.push({ kind: 'queued', event_ids: input.event_ids });
        return input.event_ids.map((id) => row(id, hosts.get(id)!));
      },
      claimDue: async (input: { limit: number; host_limits?: ReadonlyMap<string, number> }) => {
        calls.push({ kind: 'due', limit: input.limit, host_limits: [...(input.host_limits ?? [])].sort() });
        return [];
      },
    },
    // Every attempt waits on reading its order until the test ends: the claimed rows stay in flight.
    transactions: { find: () => new Promise((resolve) => hanging.push(() => resolve(undefined))) },
  } as unknown as Store;
  const worker = new NotificationWorker({ store, mode: 'sandbox', settings: resolveNotifySettings({ stopGraceMs: 0, ...settings }), log: silentLog });
  const poke = (event_id: string, callback_host: string) => {
    hosts.set(event_id, callback_host);
    worker.poke({ event_id, callback_host });
  };
  const stop = async () => {
    const stopping = worker.stop();
    for (const go of hanging.splice(0)) go();
    await stopping;
  };
  return { worker, calls, poke, stop };
}

const settled = async () => {
  for (let i = 0; i < 5; i++) await nextTurn();
};

describe('the notification worker, told what was just queued', () => {
  it('claims it by event_id, then searches for the rest with what room is left', async () => {
    const { worker, calls, poke, stop } = recordingWorker({ concurrency: 8, hostConcurrency: 2 });
    worker.start();
    await settled();
    calls.length = 0;
    poke('e1', 'a.example');
    poke('e2', 'b.example');
    await settled();
    expect(calls).toEqual([
      { kind: 'queued', event_ids: ['e1', 'e2'] },
      { kind: 'due', limit: 6, host_limits: [['a.example', 1], ['b.example', 1]] },
    ]);
    // A poke without a hint (a resend from the console) only searches.
    calls.length = 0;
    worker.poke();
    await settled();
    expect(calls.map((c) => c.kind)).toEqual(['due']);
    await stop();
  });

  it('takes no more by id than the global and per-host caps leave room for; the rest is left to the search', async () => {
    const { worker, calls, poke, stop } = recordingWorker({ concurrency: 3, hostConcurrency: 1 });
    worker.start();
    await settled();
    calls.length = 0;
    poke('e1', 'a.example');
    poke('e2', 'a.example'); // a.example's one slot is taken by e1
    poke('e3', 'b.example');
    poke('e4', 'c.example');
    poke('e5', 'd.example'); // the global cap of 3 is reached with e4
    await settled();
    expect(calls[0]).toEqual({ kind: 'queued', event_ids: ['e1', 'e3', 'e4'] });
    // Full: no search (e2 and e5 are found by a later one, as any due row).
    expect(calls).toHaveLength(1);
    await stop();
  });
});
