import { describe, expect, it } from 'vitest';
import { MAX_PAUSE_MS, MAX_RETRY_AFTER_MS, NotifyScheduler, type SchedulerSettings } from './scheduler.js';

const settings: SchedulerSettings = {
  concurrency: 64,
  hostConcurrency: 4,
  hostConcurrencyMax: 32,
  pollIntervalMs: 1000,
};
const answered = { kind: 'answered' } as const;
const overloaded = { kind: 'overloaded' } as const;

/** A scheduler after its first search (nothing found), as a started worker is. */
function fresh(over: Partial<SchedulerSettings> = {}) {
  const s = new NotifyScheduler({ ...settings, ...over });
  const plan = s.planSearch(0)!;
  s.searched(plan, [], 0);
  return s;
}

/** A search at `now` that finds `n` rows for host h (as many as its room allows). */
function searchFinds(s: NotifyScheduler, n: number, now: number) {
  s.poke();
  const plan = s.planSearch(now)!;
  const room = plan.host_limits.get('h') ?? plan.per_host;
  const claimed = Array.from({ length: Math.min(n, room) }, () => 'h');
  s.searched(plan, claimed, now);
  return claimed.map(() => s.started('h', 'backlog', now));
}

describe('the notification scheduler', () => {
  it('claims queued notifications oldest first within the global and the per-host room', () => {
    const s = fresh({ concurrency: 3, hostConcurrency: 1, hostConcurrencyMax: 1 });
    for (const [id, host] of [
      ['e1', 'a'],
      ['e2', 'a'],
      ['e3', 'b'],
      ['e4', 'c'],
      ['e5', 'd'],
    ])
      s.poke({ event_id: id, callback_host: host });
    expect(s.planQueued(1)).toEqual(['e1', 'e3', 'e4']);
    for (const host of ['a', 'b', 'c']) s.started(host, 'fresh', 1);
    expect(s.planQueued(2)).toEqual([]);
    expect(s.queuedCount).toBe(2);
  });

  it("grows a host's limit while a backlog waits and it answers well, up to the cap; not without a backlog", () => {
    const s = fresh();
    let now = 10;
    let inFlight = searchFinds(s, 1000, now);
    expect(inFlight).toHaveLength(4);
    // Each answer while rows wait: one more (slow start), then the next search takes the room.
    for (let round = 0; round < 10; round++) {
      now += 40;
      for (const a of inFlight) s.ended(a, answered, now);
      inFlight = searchFinds(s, 1000, now);
    }
    expect(s.hostLimit('h')).toBe(32);
    expect(inFlight).toHaveLength(32);
    // A host with nothing waiting keeps its limit where it is.
    const t = fresh();
    const one = searchFinds(t, 1, 10);
    t.ended(one[0], answered, 50);
    expect(t.hostLimit('h')).toBe(4);
  });

  it('halves the limit once for the attempts in flight together, and pauses a host failing at one', () => {
    const s = fresh();
    let now = 10;
    let inFlight = searchFinds(s, 1000, now);
    for (let round = 0; round < 3; round++) {
      now += 40;
      for (const a of inFlight) s.ended(a, answered, now);
      inFlight = searchFinds(s, 1000, now);
    }
    const before = s.hostLimit('h');
    expect(before).toBeGreaterThan(8);
    now += 10;
    for (const a of inFlight) s.ended(a, overloaded, now);
    expect(s.hostLimit('h')).toBe(Math.floor(before / 2));
    // Down to one, then a pause: no backlog room until it ends, and the worker is woken then.
    while (s.hostLimit('h') > 1) {
      const [a] = searchFinds(s, 1, ++now);
      s.ended(a, overloaded, ++now);
    }
    const [a] = searchFinds(s, 1, ++now);
    s.ended(a, overloaded, ++now);
    s.poke();
    expect(s.planSearch(now)!.host_limits.get('h')).toBe(0);
    expect(s.nextWakeAt(now)).toBeLessThanOrEqual(now + MAX_PAUSE_MS);
    // A first attempt may probe a paused host when nothing is in flight there; a second may not.
    s.poke({ event_id: 'p1', callback_host: 'h' });
    s.poke({ event_id: 'p2', callback_host: 'h' });
    expect(s.planQueued(now)).toEqual(['p1']);
    const probe = s.started('h', 'fresh', now);
    expect(s.planQueued(now)).toEqual([]);
    // The probe answers: the host is back, and its backlog may go again.
    s.ended(probe, answered, now + 5);
    expect(s.planQueued(now + 5)).toEqual(['p2']);
    s.started('h', 'fresh', now + 5);
    s.poke();
    expect(s.planSearch(now + 5)!.host_limits.get('h')).toBe(1);
  });

  it("honours a 429's Retry-After (capped): no attempt of any kind to that host until then", () => {
    const s = fresh();
    const [a] = searchFinds(s, 1, 10);
    s.ended(a, { kind: 'overloaded', retryAfterMs: 5000 }, 20);
    s.poke({ event_id: 'e1', callback_host: 'h' });
    expect(s.planQueued(21)).toEqual([]);
    s.poke();
    expect(s.planSearch(21)!.host_limits.get('h')).toBe(0);
    expect(s.nextWakeAt(21)).toBe(5020);
    expect(s.planQueued(5020)).toEqual(['e1']);
    const t = fresh();
    const [b] = searchFinds(t, 1, 10);
    t.ended(b, { kind: 'overloaded', retryAfterMs: 86_400_000 }, 20);
    t.poke({ event_id: 'e1', callback_host: 'h' });
    expect(t.nextWakeAt(21)).toBe(20 + MAX_RETRY_AFTER_MS);
  });

  it("puts a fresh notification ahead of a host's backlog, and leaves the backlog a quarter of the limit", () => {
    const s = fresh({ hostConcurrency: 8, hostConcurrencyMax: 8 });
    const backlog = searchFinds(s, 1000, 10);
    expect(backlog).toHaveLength(8);
    for (let i = 0; i < 20; i++) s.poke({ event_id: `f${i}`, callback_host: 'h' });
    expect(s.planQueued(11)).toEqual([]);
    // A backlog attempt ends: its slot goes to the oldest fresh notification, not to the backlog.
    s.ended(backlog[0], answered, 20);
    expect(s.planQueued(20)).toEqual(['f0']);
    s.started('h', 'fresh', 20);
    // However many fresh ones wait, the backlog keeps two of eight.
    for (const b of backlog.slice(1)) s.ended(b, answered, 30);
    const taken = s.planQueued(30);
    expect(taken).toHaveLength(5);
    for (const _ of taken) s.started('h', 'fresh', 30);
    s.poke();
    expect(s.planSearch(30)!.host_limits.get('h')).toBe(2);
  });

  it("keeps a host's freed slot for a queued fresh notification from a search that runs first (a poll)", () => {
    const s = fresh({ hostConcurrency: 4, hostConcurrencyMax: 4 });
    const backlog = searchFinds(s, 1000, 10);
    s.poke({ event_id: 'f1', callback_host: 'h' });
    expect(s.planQueued(11)).toEqual([]);
    s.ended(backlog[0], answered, 20);
    s.poke();
    expect(s.planSearch(20)!.host_limits.get('h')).toBe(0);
    expect(s.planQueued(20)).toEqual(['f1']);
  });

  it('forgets a Retry-After pause once it has passed: no wake-up in the past, none a millisecond', () => {
    const s = fresh();
    const [a] = searchFinds(s, 1, 10);
    s.ended(a, { kind: 'overloaded', retryAfterMs: 1000 }, 20);
    const after = searchFinds(s, 1000, 1100);
    expect(after.length).toBeGreaterThan(0);
    s.ended(after[0], answered, 1140);
    s.loopEnded(1140);
    expect(s.nextWakeAt(1140)).toBeGreaterThan(1140);
  });

  it('at a limit of one, fresh notifications and the backlog take turns', () => {
    const s = fresh({ hostConcurrency: 1, hostConcurrencyMax: 1 });
    let [b] = searchFinds(s, 1000, 10);
    for (let i = 0; i < 5; i++) s.poke({ event_id: `f${i}`, callback_host: 'h' });
    const lanes: string[] = [];
    let now = 10;
    for (let round = 0; round < 4; round++) {
      s.ended(b, answered, (now += 10));
      const ids = s.planQueued(now);
      if (ids.length > 0) {
        lanes.push('fresh');
        b = s.started('h', 'fresh', now);
      } else {
        s.poke();
        const plan = s.planSearch(now)!;
        expect(plan.host_limits.get('h') ?? plan.per_host).toBe(1);
        s.searched(plan, ['h'], now);
        lanes.push('backlog');
        b = s.started('h', 'backlog', now);
      }
    }
    expect(lanes).toEqual(['fresh', 'backlog', 'fresh', 'backlog']);
  });

  it('keeps a slot of the global limit for a wanted search, so fresh notifications cannot hold retries off', () => {
    const s = fresh({ concurrency: 4, hostConcurrency: 4, hostConcurrencyMax: 4 });
    for (let i = 0; i < 10; i++) s.poke({ event_id: `f${i}`, callback_host: `host${i}` });
    for (const id of s.planQueued(10)) s.started(`host${id.slice(1)}`, 'fresh', 10);
    expect(s.active).toBe(4);
    s.poke(); // a resend
    expect(s.planQueued(10)).toEqual([]);
    const s2 = fresh({ concurrency: 4, hostConcurrency: 4, hostConcurrencyMax: 4 });
    for (let i = 0; i < 10; i++) s2.poke({ event_id: `f${i}`, callback_host: `host${i}` });
    s2.poke();
    expect(s2.planQueued(10)).toHaveLength(3);
    expect(s2.planSearch(10)!.limit).toBe(4);
  });

  it('searches at the regular poll, at a retry and after an attempt at a host whose rows were left behind', () => {
    const s = fresh();
    expect(s.planSearch(500)).toBeNull();
    expect(s.planSearch(1000)).not.toBeNull();
    s.searched({ limit: 64, per_host: 4, host_limits: new Map() }, [], 1000);
    s.retryAt(1500);
    s.loopEnded(1000);
    expect(s.nextWakeAt(1000)).toBe(1500);
    s.timerFired(1500);
    expect(s.planSearch(1500)).not.toBeNull();
    s.searched({ limit: 64, per_host: 4, host_limits: new Map() }, ['h', 'h', 'h', 'h'], 1500);
    const a = s.started('h', 'backlog', 1500);
    expect(s.ended(a, answered, 1510)).toBe(true);
    expect(s.planSearch(1510)).not.toBeNull();
  });
});
