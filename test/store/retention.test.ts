// Retention on both engines: one pass at a fixed time over rows built for it removes exactly the
// attempts of notifications delivered long ago, the attempts between the first and the latest of
// those still failing (counted on the notification), unused nonces long expired and the page token
// of visits long ended, and nothing else; batches smaller than the rows remove them all; a second
// pass, or two at once, removes nothing more. The nonces are swept by primary key: the first sweep
// reads the whole table in batches, a later one only the range that can have become due since the
// one recorded, and a stopped one records nothing. The timer logs what a pass removed; each pick
// reads its index (the nonces: their primary key); `gateway serve` refuses settings it cannot use.
import { sql, type RawBuilder } from 'kysely';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createMerchant, type MerchantCredentials } from '../../src/cli/admin.js';
import { main } from '../../src/cli/main.js';
import { formatOrderNotifications, listOrderNotifications } from '../../src/cli/notifications.js';
import type { DeliveryStatus } from '../../src/ports/outbox.js';
import type { Nonce } from '../../src/ports/transactions.js';
import { NONCES_SWEPT_BEFORE } from '../../src/ports/retention.js';
import {
  deliveredAttempts,
  sweepKeys,
  undeliveredAttempts,
  unusedNonces,
  visitNonces,
} from '../../src/store/retention/base.js';
import type { SqlStore } from '../../src/store/sql-store.js';
import { CHECKOUT_VISIT_MS } from '../../src/usecases/checkout-visit.js';
import { noncePrefix, orderNonce } from '../../src/usecases/random-pool.js';
import {
  ATTEMPTS_KEPT,
  NONCE_GRACE_MS,
  resolveRetentionSettings,
  runRetentionPass,
  startRetention,
  sweepNonces,
} from '../../src/usecases/retention.js';
import { ENGINES, storeFor } from '../support/gateway.js';
import { planNodes, type PlanNode } from '../support/pg-plan.js';
import { pendingOrder } from '../support/rows.js';
import { until } from '../support/wait.js';

const NOW = 1_800_000_000_000;
const DAY = 24 * 60 * 60 * 1000;
const DAYS = 30;
const CUTOFF = NOW - DAYS * DAY;
const TTL = 30 * 60 * 1000;
/** The default config's: ORDER_EXPIRY_MS (a day) is longer than NONCE_TTL_MS. */
const LIFE = DAY;
const PASS = { now: NOW, attemptsDays: DAYS, nonceLifeMs: LIFE };

describe.each(ENGINES)('retention on %s', (engine) => {
  let store: SqlStore;
  let cleanup: () => void;
  let merchant: MerchantCredentials;
  beforeAll(async () => {
    ({ store, cleanup } = await storeFor(engine));
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
    await store.transactions.insert(t, first).durable;
    return { order_id: t.order_id, nonce: first.nonce };
  }

  /** A nonce as a create makes it: named after its creation, which is its expiry less the TTL. */
  function nonce(order_id: string, over: Partial<Nonce> = {}): Nonce {
    const expires_at = over.expires_at ?? NOW + DAY;
    const created_at = expires_at - TTL;
    return {
      nonce: orderNonce(created_at),
      order_id,
      expires_at,
      used_at: null,
      created_at,
      page_token_hash: null,
      ...over,
    };
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
        .values({
          event_id,
          attempted_at: at,
          http_status: 500,
          response_excerpt: `try ${i + 1}`,
          latency_ms: 3,
          error: null,
        })
        .execute();
    }
    const ids = (await store.outbox.listAttempts(event_id)).map((a) => a.attempt_id);
    return { order_id, event_id, ids };
  }

  const every30s = (count: number, from: number) => Array.from({ length: count }, (_, i) => from + i * 30_000);

  async function snapshot() {
    const attempts = await store.db
      .selectFrom('notification_attempts')
      .select(['attempt_id', 'event_id'])
      .orderBy('attempt_id')
      .execute();
    const outbox = await store.db
      .selectFrom('outbox')
      .select(['event_id', 'attempts', 'attempts_pruned', 'attempts_pruned_until'])
      .orderBy('event_id')
      .execute();
    const nonces = await store.db
      .selectFrom('nonces')
      .select(['nonce', 'used_at', 'page_token_hash'])
      .orderBy('nonce')
      .execute();
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
    const expiredUnused = Array.from({ length: 9 }, () =>
      nonce(visits.order_id, { expires_at: NOW - NONCE_GRACE_MS - 1 }),
    );
    const withinGrace = nonce(visits.order_id, { expires_at: NOW - NONCE_GRACE_MS + 1 });
    const opened = nonce(visits.order_id, { expires_at: NOW - 50 * DAY, used_at: NOW - 50 * DAY - 5 });
    const endedVisit = nonce(visits.order_id, {
      expires_at: NOW - CHECKOUT_VISIT_MS - NONCE_GRACE_MS - 1,
      used_at: NOW - 20 * DAY,
      page_token_hash: 'hash-ended',
    });
    const visitInGrace = nonce(visits.order_id, {
      expires_at: NOW - CHECKOUT_VISIT_MS - NONCE_GRACE_MS + 1,
      used_at: NOW - 8 * DAY,
      page_token_hash: 'hash-in-grace',
    });
    await store.db
      .insertInto('nonces')
      .values([...expiredUnused, withinGrace, opened, endedVisit, visitInGrace])
      .execute();
    const usesBefore = await store.transactions.listNonceUses(visits.order_id);
    expect(usesBefore).toEqual([NOW - 50 * DAY - 5, NOW - 20 * DAY, NOW - 8 * DAY]);

    const removed = await runRetentionPass(store, { ...PASS, batch: 4 });
    expect(removed).toEqual({ delivered_attempts: 3, undelivered_attempts: 35 + 1, nonces: 9, visits: 1 });

    const left = async (event_id: string) => (await store.outbox.listAttempts(event_id)).map((a) => a.attempt_id);
    expect(await left(oldDelivered.event_id)).toEqual([]);
    expect(await left(atCutoff.event_id)).toEqual(atCutoff.ids);
    expect(await left(recent.event_id)).toEqual(recent.ids);
    expect(await left(failing.event_id)).toEqual([
      ...failing.ids.slice(0, ATTEMPTS_KEPT.first),
      ...failing.ids.slice(-ATTEMPTS_KEPT.last),
    ]);
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

    const nonces = await store.db
      .selectFrom('nonces')
      .select(['nonce', 'page_token_hash'])
      .where('order_id', '=', visits.order_id)
      .orderBy('nonce')
      .execute();
    expect(nonces).toEqual(
      [
        { nonce: visits.nonce, page_token_hash: null },
        { nonce: withinGrace.nonce, page_token_hash: null },
        { nonce: opened.nonce, page_token_hash: null },
        { nonce: endedVisit.nonce, page_token_hash: null },
        { nonce: visitInGrace.nonce, page_token_hash: 'hash-in-grace' },
      ].sort((a, b) => (a.nonce < b.nonce ? -1 : 1)),
    );
    // The timeline's "page opened" keeps every use; the ended visit no longer lets a browser in.
    expect(await store.transactions.listNonceUses(visits.order_id)).toEqual(usesBefore);
    expect(await store.transactions.findCheckoutVisit(endedVisit.nonce, 'hash-ended')).toBeUndefined();
    expect(await store.transactions.findCheckoutVisit(visitInGrace.nonce, 'hash-in-grace')).toMatchObject({
      used_at: NOW - 8 * DAY,
    });

    // Support's CLI shows where the removed attempts were, and numbers the rest as they were.
    const reference = (await store.transactions.find(failing.order_id))!.merchant_reference;
    const lines = formatOrderNotifications(await listOrderNotifications(store, merchant.user_id, reference)).split(
      '\n',
    );
    const gap = lines.findIndex((l) => l.includes('35 earlier attempts removed by retention'));
    expect(lines[gap - 1]).toMatch(/^\s+5 {2}/);
    expect(lines[gap + 1]).toMatch(/^\s+41 {2}/);
    expect(lines.filter((l) => /^\s+\d+ {2}\d{4}-/.test(l))).toHaveLength(25);

    const before = await snapshot();
    expect(await runRetentionPass(store, { ...PASS, batch: 4 })).toEqual({
      delivered_attempts: 0,
      undelivered_attempts: 0,
      nonces: 0,
      visits: 0,
    });
    expect(await snapshot()).toEqual(before);
  });

  it('two passes at once remove each row once and count it once', async () => {
    const failing = await Promise.all([1, 2, 3].map(() => notification('pending', every30s(40, NOW - DAY))));
    const delivered = await Promise.all(
      [1, 2, 3].map(() => notification('delivered', every30s(5, CUTOFF - 5 * DAY), CUTOFF - DAY)),
    );
    const [a, b] = await Promise.all([
      runRetentionPass(store, { ...PASS, batch: 3 }),
      runRetentionPass(store, { ...PASS, batch: 3 }),
    ]);
    // A pass that found only rows the other held stops early: a third one finds what they left.
    const c = await runRetentionPass(store, { ...PASS, batch: 3 });
    expect(a.undelivered_attempts + b.undelivered_attempts + c.undelivered_attempts).toBe(3 * 15);
    expect(a.delivered_attempts + b.delivered_attempts + c.delivered_attempts).toBe(3 * 5);
    for (const f of failing) {
      expect((await store.outbox.listAttempts(f.event_id)).map((x) => x.attempt_id)).toEqual([
        ...f.ids.slice(0, 5),
        ...f.ids.slice(-20),
      ]);
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
    const log = {
      info: (fields: object) => logged.push(fields),
      warn() {},
      error: (fields: object) => logged.push(fields),
    };
    const stop = startRetention(
      { store, now: () => NOW, config: { nonceTtlMs: TTL, orderExpiryMs: LIFE } },
      log,
      resolveRetentionSettings({ intervalMs: 1000, attemptsDays: DAYS }),
    );
    try {
      await until('a retention pass', () => logged.length > 0);
    } finally {
      await stop();
    }
    expect(logged).toEqual([{ delivered_attempts: 0, undelivered_attempts: 2, nonces: 0, visits: 0 }]);
    expect((await store.outbox.find(failing.event_id))!.attempts_pruned).toBe(2);
  });
});

// The nonce sweep alone, on a table emptied before each test: where it reads, what it records.
describe.each(ENGINES)('nonce sweep on %s', (engine) => {
  let store: SqlStore;
  let cleanup: () => void;
  let order_id: string;
  beforeAll(async () => {
    ({ store, cleanup } = await storeFor(engine));
    const merchant = await createMerchant(store, { name: 'Sweep', currency: 'NZD' });
    const t = pendingOrder(merchant, { created_at: NOW - 90 * DAY });
    await store.db.insertInto('transactions').values(t).execute();
    order_id = t.order_id;
  });
  beforeEach(async () => {
    await store.db.deleteFrom('nonces').execute();
    await store.db.deleteFrom('console_settings').where('name', '=', NONCES_SWEPT_BEFORE).execute();
  });
  afterEach(() => vi.restoreAllMocks());
  afterAll(async () => {
    await store?.close();
    cleanup?.();
  });

  /** A nonce made at `created_at` by a create with the default TTL. */
  const made = (created_at: number, over: Partial<Nonce> = {}): Nonce => ({
    nonce: orderNonce(created_at),
    order_id,
    expires_at: created_at + TTL,
    used_at: null,
    created_at,
    page_token_hash: null,
    ...over,
  });
  const names = async () =>
    (await store.db.selectFrom('nonces').select('nonce').orderBy('nonce').execute()).map((r) => r.nonce);
  const recorded = async () =>
    (
      await store.db
        .selectFrom('console_settings')
        .select('value')
        .where('name', '=', NONCES_SWEPT_BEFORE)
        .executeTakeFirst()
    )?.value;
  const DUE = NOW - NONCE_GRACE_MS;

  it('the first sweep reads the whole table in batches, records where it ended, and a second removes nothing', async () => {
    const unused = Array.from({ length: 10 }, (_, i) => made(NOW - 90 * DAY + i * 8 * DAY));
    const used = [1, 2, 3].map((i) => made(NOW - 40 * DAY - i * DAY, { used_at: NOW - 40 * DAY - i * DAY + 5 }));
    const visits = [1, 2].map((i) =>
      made(NOW - 20 * DAY - i * DAY, { used_at: NOW - 20 * DAY - i * DAY + 5, page_token_hash: `hash-${i}` }),
    );
    const live = [made(NOW - 60_000), made(DUE + 1)];
    // A nonce of an earlier format, which sorts after every nonce made by time.
    const earlier = made(NOW - 60 * DAY, { nonce: 'f'.repeat(32) });
    await store.db
      .insertInto('nonces')
      .values([...unused, ...used, ...visits, ...live, earlier])
      .execute();
    const sweep = vi.spyOn(store.retention, 'sweepNonces');

    expect(await runRetentionPass(store, { ...PASS, batch: 3 })).toMatchObject({ nonces: 11, visits: 2 });
    // 18 nonces by 3: six full batches and a last one that comes back empty.
    expect(sweep).toHaveBeenCalledTimes(7);
    expect(sweep.mock.calls[0][0]).toEqual({ after: '', before: null });
    expect(await names()).toEqual([...used, ...visits, ...live].map((n) => n.nonce).sort());
    expect(
      (await store.db.selectFrom('nonces').select('page_token_hash').where('page_token_hash', 'is not', null).execute())
        .length,
    ).toBe(0);
    expect(await recorded()).toBe(String(DUE));
    expect(await store.retention.noncesSweptBefore()).toBe(DUE);

    sweep.mockClear();
    const before = await store.db.selectFrom('nonces').selectAll().orderBy('nonce').execute();
    expect(await runRetentionPass(store, { ...PASS, batch: 3 })).toMatchObject({ nonces: 0, visits: 0 });
    expect(await store.db.selectFrom('nonces').selectAll().orderBy('nonce').execute()).toEqual(before);
    // From the recorded sweep less a nonce's life and a visit, up to the cutoff: none of the 7 left.
    expect(sweep.mock.calls[0][0]).toEqual({
      after: noncePrefix(DUE - CHECKOUT_VISIT_MS - LIFE),
      before: noncePrefix(DUE),
    });
    expect(sweep).toHaveBeenCalledTimes(1);
  });

  it('a later sweep reads only what can have become due since the recorded one', async () => {
    await runRetentionPass(store, { ...PASS, nonceLifeMs: TTL });
    expect(await recorded()).toBe(String(DUE));
    const later = { ...PASS, now: NOW + DAY, nonceLifeMs: TTL };
    // Made before the recorded sweep, not due at it (it expired after), due now: swept.
    const straddling = made(DUE - 10 * 60_000);
    // A visit whose nonce expired a minute after the visit cutoff of the recorded sweep, made a visit
    // and a nonce life less a minute before it: swept.
    const visit = made(DUE - CHECKOUT_VISIT_MS - TTL + 60_000, {
      used_at: DUE - CHECKOUT_VISIT_MS - TTL + 70_000,
      page_token_hash: 'hash',
    });
    // Made before that range: a create names a nonce after the time it runs, so none can be made
    // there after a sweep recorded; those this test puts there are never read again.
    const justBelow = made(DUE - CHECKOUT_VISIT_MS - TTL - 60_000);
    const farBelow = made(NOW - 30 * DAY);
    await store.db.insertInto('nonces').values([straddling, visit, justBelow, farBelow]).execute();

    expect(await runRetentionPass(store, later)).toMatchObject({ nonces: 1, visits: 1 });
    expect(await names()).toEqual([farBelow, justBelow, visit].map((n) => n.nonce).sort());
    expect(
      (
        await store.db
          .selectFrom('nonces')
          .select('page_token_hash')
          .where('nonce', '=', visit.nonce)
          .executeTakeFirstOrThrow()
      ).page_token_hash,
    ).toBeNull();
    expect(await recorded()).toBe(String(DUE + DAY));
  });

  it('a stopped sweep records nothing, and the next does it again; a recorded sweep is never moved back', async () => {
    await store.retention.setNoncesSweptBefore(DUE - 2 * DAY);
    const unused = Array.from({ length: 10 }, (_, i) => made(DUE - DAY + i * 60_000));
    await store.db.insertInto('nonces').values(unused).execute();
    let asked = 0;
    expect(await sweepNonces(store, { ...PASS, batch: 3, stopping: () => asked++ >= 1 })).toEqual({
      nonces: 3,
      visits: 0,
    });
    expect((await names()).length).toBe(7);
    expect(await recorded()).toBe(String(DUE - 2 * DAY));

    expect(await sweepNonces(store, { ...PASS, batch: 3 })).toEqual({ nonces: 7, visits: 0 });
    expect(await names()).toEqual([]);
    expect(await recorded()).toBe(String(DUE));
    await store.retention.setNoncesSweptBefore(DUE - DAY);
    expect(await store.retention.noncesSweptBefore()).toBe(DUE);
  });

  it('two sweeps at once remove each nonce once', async () => {
    const unused = Array.from({ length: 12 }, (_, i) => made(DUE - DAY + i * 60_000));
    await store.db.insertInto('nonces').values(unused).execute();
    const [a, b] = await Promise.all([
      sweepNonces(store, { ...PASS, batch: 2 }),
      sweepNonces(store, { ...PASS, batch: 2 }),
    ]);
    const c = await sweepNonces(store, { ...PASS, batch: 2 });
    expect(a.nonces + b.nonces + c.nonces).toBe(12);
    expect(await names()).toEqual([]);
    expect(await recorded()).toBe(String(DUE));
  });
});

// A pass must cost what it removes: each pick reads an index of the rows still to deal with, not the
// outbox or the nonces, which keep a row for every order. On PostgreSQL with statistics of tables
// where nearly every row has been dealt with already.
describe.each(ENGINES)('retention plans on %s', (engine) => {
  let store: SqlStore;
  let cleanup: () => void;
  beforeAll(async () => {
    ({ store, cleanup } = await storeFor(engine));
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
      await store.db
        .insertInto('outbox')
        .values(batch.map((i) => (i < 2000 ? row(i, CUTOFF - DAY, 1) : row(i, NOW - DAY, 0))))
        .execute();
      const recent = batch.filter((i) => i >= 2000);
      if (recent.length > 0) {
        await store.db
          .insertInto('notification_attempts')
          .values(
            recent.map((i) => ({
              event_id: `evt_plan_${i}`,
              attempted_at: NOW - DAY,
              http_status: 200,
              response_excerpt: 'sent',
              latency_ms: 1,
              error: null,
            })),
          )
          .execute();
      }
      await store.db
        .insertInto('nonces')
        .values(
          batch.map((i) => ({
            nonce: `plan${i}`,
            order_id: t.order_id,
            expires_at: CUTOFF,
            used_at: CUTOFF - 1,
            created_at: 1,
            page_token_hash: null,
          })),
        )
        .execute();
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
      const { rows } = await store.db.executeQuery<{ detail: string }>({
        ...compiled,
        sql: `explain query plan ${compiled.sql}`,
      });
      return rows.map((r) => r.detail).join('\n');
    }
    const { rows } = await store.db.executeQuery<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>({
      ...compiled,
      sql: `explain (format json) ${compiled.sql}`,
    });
    return planNodes(rows[0]['QUERY PLAN'][0].Plan)
      .map(
        (n) =>
          `${n['Node Type']} on ${(n as { 'Relation Name'?: string })['Relation Name'] ?? ''} ${n['Index Name'] ?? ''}`,
      )
      .join('\n');
  }

  it('each pick reads the index of what is left to do', async () => {
    const none = sql``;
    const delivered = await indexesOf(deliveredAttempts(NOW, 1000, none));
    expect(delivered).toContain('outbox_holding_attempts');
    expect(delivered).not.toMatch(/Seq Scan on outbox|SCAN o\b/);
    const undelivered = await indexesOf(undeliveredAttempts(ATTEMPTS_KEPT, 1000, none));
    // Either index of the pending rows (outbox_host_due holds only those).
    expect(undelivered).toMatch(/outbox_due|outbox_host_due/);
    expect(undelivered).not.toMatch(/Seq Scan on outbox|SCAN (o|outbox)\b/);
    // The nonces: their primary key, for a batch's keys (a batch far smaller than the table, as in
    // a sweep of a gateway's nonces) and over the range of one batch; no index of theirs but the
    // primary key and the one by order.
    const pk = engine === 'sqlite' ? 'sqlite_autoindex_nonces_1' : 'nonces_pkey';
    const picks = [
      sweepKeys('', null, 100),
      sweepKeys('plan1000', 'plan2', 100),
      unusedNonces('plan1000', 'plan1099', NOW, none),
      visitNonces('plan1000', 'plan1099', NOW, none),
    ];
    for (const pick of picks) {
      const plan = await indexesOf(pick);
      expect(plan).toContain(pk);
      expect(plan).not.toMatch(/Seq Scan on nonces|SCAN nonces\b/);
    }
    const indexes =
      engine === 'sqlite'
        ? await sql<{
            name: string;
          }>`select name from sqlite_master where type = 'index' and tbl_name = 'nonces'`.execute(store.db)
        : await sql<{ name: string }>`select indexname as name from pg_indexes where tablename = 'nonces'`.execute(
            store.db,
          );
    expect(indexes.rows.map((r) => r.name).sort()).toEqual([pk, 'nonces_order_id'].sort());
  });
});

describe('retention settings', () => {
  it('defaults to an hourly pass and 30 days; refuses what it cannot use, naming the variable', () => {
    expect(resolveRetentionSettings()).toEqual({ intervalMs: 3_600_000, attemptsDays: 30 });
    expect(resolveRetentionSettings({ intervalMs: 0, attemptsDays: 1 })).toEqual({ intervalMs: 0, attemptsDays: 1 });
    expect(() => resolveRetentionSettings({ intervalMs: 500 })).toThrow(
      /RETENTION_INTERVAL_MS .*at least 1000 \(or 0 to turn retention off\)/,
    );
    expect(() => resolveRetentionSettings({ attemptsDays: 0 })).toThrow(/RETENTION_ATTEMPTS_DAYS .*at least 1/);
    expect(() => resolveRetentionSettings({ attemptsDays: 1.5 })).toThrow(/RETENTION_ATTEMPTS_DAYS/);
  });

  afterEach(() => vi.unstubAllEnvs());

  it.each([
    ['RETENTION_INTERVAL_MS', 'hourly', 'RETENTION_INTERVAL_MS must be a whole number, not hourly'],
    [
      'RETENTION_INTERVAL_MS',
      '500',
      'RETENTION_INTERVAL_MS must be whole milliseconds, at least 1000 (or 0 to turn retention off), not 500',
    ],
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
