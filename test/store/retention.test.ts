// Retention on both engines: one pass at a fixed time over rows built for it removes exactly the
// attempts of notifications delivered long ago, the attempts between the first and the latest of
// those still failing (counted on the notification), unused nonces long expired and the page token
// of visits long ended, and nothing else; batches smaller than the rows remove them all; a second
// pass, or two at once, removes nothing more. The timer logs what a pass removed; each pick reads
// its index; `gateway serve` refuses settings it cannot use.
import { sql, type RawBuilder } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createMerchant, type MerchantCredentials } from '../../src/cli/admin.js';
import { main } from '../../src/cli/main.js';
import { formatOrderNotifications, listOrderNotifications } from '../../src/cli/notifications.js';
import type { DeliveryStatus } from '../../src/ports/outbox.js';
import type { Nonce } from '../../src/ports/transactions.js';
import { openStore } from '../../src/store/open.js';
import { deliveredAttempts, undeliveredAttempts, unusedNonces, visitNonces } from '../../src/store/retention/base.js';
import type { SqlStore } from '../../src/store/sql-store.js';
import { CHECKOUT_VISIT_MS } from '../../src/usecases/checkout-visit.js';
import { ATTEMPTS_KEPT, NONCE_GRACE_MS, resolveRetentionSettings, runRetentionPass, startRetention } from '../../src/usecases/retention.js';
import { databaseFor, ENGINES } from '../support/gateway.js';
import { planNodes, type PlanNode } from '../support/pg-plan.js';
import { pendingOrder } from '../support/rows.js';
import { until } from '../support/wait.js';

const NOW = 1_800_000_000_000;
const DAY = 24 * 60 * 60 * 1000;
const DAYS = 30;
const CUTOFF = NOW - DAYS * DAY;

describe.each(ENGINES)('retention on %s', (engine) => {
  let store: SqlStore;
  let cleanup: () => void;
  let merchant: MerchantCredentials;
  let seq = 0;
  beforeAll(async () => {
    const db = await databaseFor(engine);
    cleanup = db.cleanup;
    store = await openStore(db.database);
    merchant = await createMerchant(store, { name: 'Retention', currency: 'NZD' });
  });
  afterAll(async () => {
    await store?.close();
    cleanup?.();
  });

  /** A new order, with its first nonce (live). */
  async function order(): Promise<{ order_id: string; nonce: string }> {
    const t = pendingOrder(merchant, { created_at: NOW - 60 * DAY });
    const first = nonce(t.order_id);
    await store.transactions.insert(t, first);
    return { order_id: t.order_id, nonce: first.nonce };
  }

  function nonce(order_id: string, over: Partial<Nonce> = {}): Nonce {
    return { nonce: `ret-${engine}-${String(++seq).padStart(6, '0')}`, order_id, expires_at: NOW + DAY, used_at: null, created_at: NOW - 60 * DAY, page_token_hash: null, ...over };
  }

  /** A notification of a new order with an attempt at each of `times` (the outbox counts them, as the worker does). */
  async function notification(status: DeliveryStatus, times: number[], delivered_at: number | null = null) {
    const { order_id } = await order();
    const event_id = `evt_${order_id}`;
    await store.db
      .insertInto('outbox')
      .values({
        event_id,
        order_id,
        seq: 1,
        callback_url: 'https://m.example/n',
        callback_host: 'm.example',
        payload: '{"status":"paid"}',
        delivery_status: status,
        attempts: times.length,
        next_attempt_at: NOW,
        claimed_by: null,
        claimed_until: null,
        created_at: (times[0] ?? NOW) - 1,
        delivered_at,
        attempts_pruned: 0,
        attempts_pruned_until: null,
      })
      .execute();
    for (const [i, at] of times.entries()) {
      await store.db
        .insertInto('notification_attempts')
        .values({ event_id, attempted_at: at, http_status: 500, response_excerpt: `try ${i + 1}`, latency_ms: 3, error: null })
        .execute();
    }
    const ids = (await store.outbox.listAttempts(event_id)).map((a) => a.attempt_id);
    return { order_id, event_id, ids };
  }

  const every30s = (count: number, from: number) => Array.from({ length: count }, (_, i) => from + i * 30_000);

  async function snapshot() {
    const attempts = await store.db.selectFrom('notification_attempts').select(['attempt_id', 'event_id']).orderBy('attempt_id').execute();
    const outbox = await store.db.selectFrom('outbox').select(['event_id', 'attempts', 'attempts_pruned', 'attempts_pruned_until']).orderBy('event_id').execute();
    const nonces = await store.db.selectFrom('nonces').select(['nonce', 'used_at', 'page_token_hash']).orderBy('nonce').execute();
    return { attempts, outbox, nonces };
  }

  it('one pass removes exactly what it should, in batches smaller than the rows, and counts what it removed', async () => {
    // Delivered 40 days ago: its attempts go. Delivered at the cutoff, or 10 days ago: kept whole.
    const oldDelivered = await notification('delivered', every30s(3, CUTOFF - 10 * DAY), CUTOFF - 10 * DAY + 60_000);
    const atCutoff = await notification('delivered', [CUTOFF - 60_000, CUTOFF], CUTOFF);
    const recent = await notification('delivered', every30s(3, NOW - 10 * DAY), NOW - 10 * DAY + 60_000);
    // Failing for 45 days: the first 5 and the last 20 of its 60 stay, old as they are.
    const failing = await notification('pending', every30s(60, NOW - 45 * DAY));
    // Holding exactly what it keeps, and one more.
    const full = await notification('pending', every30s(25, NOW - DAY));
    const oneOver = await notification('pending', every30s(26, NOW - DAY));

    const visits = await order();
    const expiredUnused = Array.from({ length: 9 }, () => nonce(visits.order_id, { expires_at: NOW - NONCE_GRACE_MS - 1 }));
    const withinGrace = nonce(visits.order_id, { expires_at: NOW - NONCE_GRACE_MS + 1 });
    const opened = nonce(visits.order_id, { expires_at: NOW - 50 * DAY, used_at: NOW - 50 * DAY - 5 });
    const endedVisit = nonce(visits.order_id, { expires_at: NOW - CHECKOUT_VISIT_MS - NONCE_GRACE_MS - 1, used_at: NOW - 20 * DAY, page_token_hash: 'hash-ended' });
    const visitInGrace = nonce(visits.order_id, { expires_at: NOW - CHECKOUT_VISIT_MS - NONCE_GRACE_MS + 1, used_at: NOW - 8 * DAY, page_token_hash: 'hash-in-grace' });
    await store.db.insertInto('nonces').values([...expiredUnused, withinGrace, opened, endedVisit, visitInGrace]).execute();
    const usesBefore = await store.transactions.listNonceUses(visits.order_id);
    expect(usesBefore).toEqual([NOW - 50 * DAY - 5, NOW - 20 * DAY, NOW - 8 * DAY]);

    const removed = await runRetentionPass(store, { now: NOW, attemptsDays: DAYS, batch: 4 });
    expect(removed).toEqual({ delivered_attempts: 3, undelivered_attempts: 35 + 1, nonces: 9, visits: 1 });

    const left = async (event_id: string) => (await store.outbox.listAttempts(event_id)).map((a) => a.attempt_id);
    expect(await left(oldDelivered.event_id)).toEqual([]);
    expect(await left(atCutoff.event_id)).toEqual(atCutoff.ids);
    expect(await left(recent.event_id)).toEqual(recent.ids);
    expect(await left(failing.event_id)).toEqual([...failing.ids.slice(0, ATTEMPTS_KEPT.first), ...failing.ids.slice(-ATTEMPTS_KEPT.last)]);
    expect(await left(full.event_id)).toEqual(full.ids);
    expect(await left(oneOver.event_id)).toEqual([...oneOver.ids.slice(0, 5), ...oneOver.ids.slice(6)]);

    const counted = async (event_id: string) => {
      const row = (await store.outbox.find(event_id))!;
      return [row.attempts, row.attempts_pruned, row.attempts_pruned_until];
    };
    expect(await counted(oldDelivered.event_id)).toEqual([3, 3, CUTOFF - 10 * DAY + 60_000]);
    expect(await counted(atCutoff.event_id)).toEqual([2, 0, null]);
    expect(await counted(recent.event_id)).toEqual([3, 0, null]);
    expect(await counted(failing.event_id)).toEqual([60, 35, NOW - 45 * DAY + 39 * 30_000]);
    expect(await counted(full.event_id)).toEqual([25, 0, null]);
    expect(await counted(oneOver.event_id)).toEqual([26, 1, NOW - DAY + 5 * 30_000]);

    const nonces = await store.db.selectFrom('nonces').select(['nonce', 'page_token_hash']).where('order_id', '=', visits.order_id).orderBy('nonce').execute();
    expect(nonces).toEqual([
      { nonce: visits.nonce, page_token_hash: null },
      { nonce: withinGrace.nonce, page_token_hash: null },
      { nonce: opened.nonce, page_token_hash: null },
      { nonce: endedVisit.nonce, page_token_hash: null },
      { nonce: visitInGrace.nonce, page_token_hash: 'hash-in-grace' },
    ]);
    // The timeline's "page opened" keeps every use; the ended visit no longer lets a browser in.
    expect(await store.transactions.listNonceUses(visits.order_id)).toEqual(usesBefore);
    expect(await store.transactions.findCheckoutVisit(endedVisit.nonce, 'hash-ended')).toBeUndefined();
    expect(await store.transactions.findCheckoutVisit(visitInGrace.nonce, 'hash-in-grace')).toMatchObject({ used_at: NOW - 8 * DAY });

    // Support's CLI shows where the removed attempts were, and numbers the rest as they were.
    const reference = (await store.transactions.find(failing.order_id))!.merchant_reference;
    const lines = formatOrderNotifications(await listOrderNotifications(store, merchant.user_id, reference)).split('\n');
    const gap = lines.findIndex((l) => l.includes('35 earlier attempts removed by retention'));
    expect(lines[gap - 1]).toMatch(/^\s+5 {2}/);
    expect(lines[gap + 1]).toMatch(/^\s+41 {2}/);
    expect(lines.filter((l) => /^\s+\d+ {2}\d{4}-/.test(l))).toHaveLength(25);

    const before = await snapshot();
    expect(await runRetentionPass(store, { now: NOW, attemptsDays: DAYS, batch: 4 })).toEqual({ delivered_attempts: 0, undelivered_attempts: 0, nonces: 0, visits: 0 });
    expect(await snapshot()).toEqual(before);
  });

  it('two passes at once remove each row once and count it once', async () => {
    const failing = await Promise.all([1, 2, 3].map(() => notification('pending', every30s(40, NOW - DAY))));
    const delivered = await Promise.all([1, 2, 3].map(() => notification('delivered', every30s(5, CUTOFF - 5 * DAY), CUTOFF - DAY)));
    const [a, b] = await Promise.all([
      runRetentionPass(store, { now: NOW, attemptsDays: DAYS, batch: 3 }),
      runRetentionPass(store, { now: NOW, attemptsDays: DAYS, batch: 3 }),
    ]);
    // A pass that found only rows the other held stops early: a third one finds what they left.
    const c = await runRetentionPass(store, { now: NOW, attemptsDays: DAYS, batch: 3 });
    expect(a.undelivered_attempts + b.undelivered_attempts + c.undelivered_attempts).toBe(3 * 15);
    expect(a.delivered_attempts + b.delivered_attempts + c.delivered_attempts).toBe(3 * 5);
    for (const f of failing) {
      expect((await store.outbox.listAttempts(f.event_id)).map((x) => x.attempt_id)).toEqual([...f.ids.slice(0, 5), ...f.ids.slice(-20)]);
      expect((await store.outbox.find(f.event_id))!.attempts_pruned).toBe(15);
    }
    for (const d of delivered) {
      expect(await store.outbox.listAttempts(d.event_id)).toEqual([]);
      expect((await store.outbox.find(d.event_id))!.attempts_pruned).toBe(5);
    }
  });

  it('the timer runs a pass, logs what it removed, and stops', async () => {
    const failing = await notification('pending', every30s(27, NOW - DAY));
    const logged: object[] = [];
    const log = { info: (fields: object) => logged.push(fields), warn() {}, error: (fields: object) => logged.push(fields) };
    const stop = startRetention({ store, now: () => NOW }, log, resolveRetentionSettings({ intervalMs: 1000, attemptsDays: DAYS }));
    try {
      await until('a retention pass', () => logged.length > 0);
    } finally {
      await stop();
    }
    expect(logged).toEqual([{ delivered_attempts: 0, undelivered_attempts: 2, nonces: 0, visits: 0 }]);
    expect((await store.outbox.find(failing.event_id))!.attempts_pruned).toBe(2);
  });
});

// A pass must cost what it removes: each pick reads an index of the rows still to deal with, not the
// outbox or the nonces, which keep a row for every order. On PostgreSQL with statistics of tables
// where nearly every row has been dealt with already.
describe.each(ENGINES)('retention plans on %s', (engine) => {
  let store: SqlStore;
  let cleanup: () => void;
  beforeAll(async () => {
    const db = await databaseFor(engine);
    cleanup = db.cleanup;
    store = await openStore(db.database);
    const merchant = await createMerchant(store, { name: 'Plans', currency: 'NZD' });
    const t = pendingOrder(merchant);
    await store.db.insertInto('transactions').values(t).execute();
    // Delivered long ago and dealt with (no attempts left), delivered yesterday (one attempt each),
    // and nonces used long ago.
    const row = (i: number, delivered_at: number, pruned: number) => ({
      event_id: `evt_plan_${i}`,
      order_id: t.order_id,
      seq: i,
      callback_url: 'https://m.example/n',
      callback_host: 'm.example',
      payload: '{}',
      delivery_status: 'delivered' as const,
      attempts: 1,
      next_attempt_at: 1,
      claimed_by: null,
      claimed_until: null,
      created_at: delivered_at - 1,
      delivered_at,
      attempts_pruned: pruned,
      attempts_pruned_until: pruned === 1 ? delivered_at : null,
    });
    for (let from = 0; from < 3000; from += 500) {
      const batch = Array.from({ length: 500 }, (_, k) => from + k);
      await store.db.insertInto('outbox').values(batch.map((i) => (i < 2000 ? row(i, CUTOFF - DAY, 1) : row(i, NOW - DAY, 0)))).execute();
      const recent = batch.filter((i) => i >= 2000);
      if (recent.length > 0) {
        await store.db
          .insertInto('notification_attempts')
          .values(recent.map((i) => ({ event_id: `evt_plan_${i}`, attempted_at: NOW - DAY, http_status: 200, response_excerpt: 'sent', latency_ms: 1, error: null })))
          .execute();
      }
      await store.db.insertInto('nonces').values(batch.map((i) => ({ nonce: `plan${i}`, order_id: t.order_id, expires_at: CUTOFF, used_at: CUTOFF - 1, created_at: 1, page_token_hash: null }))).execute();
    }
    if (engine === 'postgres') await sql`analyze`.execute(store.db);
  });
  afterAll(async () => {
    await store?.close();
    cleanup?.();
  });

  async function indexesOf(pick: RawBuilder<unknown>): Promise<string> {
    const compiled = pick.compile(store.db);
    if (engine === 'sqlite') {
      const { rows } = await store.db.executeQuery<{ detail: string }>({ ...compiled, sql: `explain query plan ${compiled.sql}` });
      return rows.map((r) => r.detail).join('\n');
    }
    const { rows } = await store.db.executeQuery<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>({ ...compiled, sql: `explain (format json) ${compiled.sql}` });
    return planNodes(rows[0]!['QUERY PLAN'][0]!.Plan)
      .map((n) => `${n['Node Type']} on ${(n as { 'Relation Name'?: string })['Relation Name'] ?? ''} ${n['Index Name'] ?? ''}`)
      .join('\n');
  }

  it('each pick reads the index of what is left to do', async () => {
    const none = sql``;
    const delivered = await indexesOf(deliveredAttempts(NOW, 1000, none));
    expect(delivered).toContain('outbox_holding_attempts');
    expect(delivered).not.toMatch(/Seq Scan on outbox|SCAN o\b/);
    const undelivered = await indexesOf(undeliveredAttempts(ATTEMPTS_KEPT, 1000, none));
    expect(undelivered).toContain('outbox_due');
    expect(undelivered).not.toMatch(/Seq Scan on outbox|SCAN (o|outbox)\b/);
    expect(await indexesOf(unusedNonces(NOW, 1000, none))).toContain('nonces_unused_expiry');
    expect(await indexesOf(visitNonces(NOW, 1000, none))).toContain('nonces_visit_expiry');
  });
});

describe('retention settings', () => {
  it('defaults to an hourly pass and 30 days; refuses what it cannot use, naming the variable', () => {
    expect(resolveRetentionSettings()).toEqual({ intervalMs: 3_600_000, attemptsDays: 30 });
    expect(resolveRetentionSettings({ intervalMs: 0, attemptsDays: 1 })).toEqual({ intervalMs: 0, attemptsDays: 1 });
    expect(() => resolveRetentionSettings({ intervalMs: 500 })).toThrow(/RETENTION_INTERVAL_MS .*at least 1000 \(or 0 to turn retention off\)/);
    expect(() => resolveRetentionSettings({ attemptsDays: 0 })).toThrow(/RETENTION_ATTEMPTS_DAYS .*at least 1/);
    expect(() => resolveRetentionSettings({ attemptsDays: 1.5 })).toThrow(/RETENTION_ATTEMPTS_DAYS/);
  });

  afterEach(() => vi.unstubAllEnvs());

  it.each([
    ['RETENTION_INTERVAL_MS', 'hourly', 'RETENTION_INTERVAL_MS must be a whole number, not hourly'],
    ['RETENTION_INTERVAL_MS', '500', 'RETENTION_INTERVAL_MS must be whole milliseconds, at least 1000 (or 0 to turn retention off), not 500'],
    ['RETENTION_ATTEMPTS_DAYS', '0', 'RETENTION_ATTEMPTS_DAYS must be a whole number of days, at least 1, not 0'],
    ['RETENTION_ATTEMPTS_DAYS', '-3', 'RETENTION_ATTEMPTS_DAYS must be a whole number, not -3'],
  ])('gateway serve refuses %s=%s before it starts', async (name, value, message) => {
    vi.stubEnv(name, value);
    const errors: string[] = [];
    const spy = vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void errors.push(a.join(' ')));
    try {
      expect(await main(['serve', '--database', ':memory:', '--port', '0'])).toBe(2);
    } finally {
      spy.mockRestore();
    }
    expect(errors).toEqual([`gateway: ${message}`]);
  });
});
