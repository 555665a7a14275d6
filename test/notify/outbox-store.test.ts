// The outbox's claim/lease and attempt recording on both engines, driven directly (the gateway's
// worker is off here, so the test decides who claims what and when).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open.js';
import type { SqlStore } from '../../src/store/sql-store.js';
import type { OutboxRow } from '../../src/ports/outbox.js';
import { flushHeldGateway, within } from '../support/flushes.js';
import { databaseFor, ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';

const LEASE = 60_000;

describe.each(ENGINES)('outbox claims on %s', (engine) => {
  let gw: TestGateway;
  let database: string;
  let cleanup: () => void;
  beforeAll(async () => {
    ({ database, cleanup } = await databaseFor(engine));
    gw = await startTestGateway(engine, { database });
  });
  afterAll(async () => {
    await gw?.close();
    cleanup?.();
  });
  beforeEach(async () => {
    // Park every earlier test's rows so each test sees only its own.
    await gw.store.db.updateTable('outbox').set({ delivery_status: 'delivered' }).execute();
  });

  async function paid(callback_url: string): Promise<OutboxRow> {
    const { order_id } = await gw.create({ callback_url });
    await gw.pay(order_id);
    const [row] = await gw.store.outbox.listByOrder(order_id);
    return row;
  }

  const claim = (
    store: SqlStore,
    claimed_by: string,
    now: number,
    extra: { limit?: number; per_host?: number; host_limits?: Map<string, number> } = {},
  ) =>
    store.outbox.claimDue({
      claimed_by,
      now,
      lease_ms: LEASE,
      limit: extra.limit ?? 100,
      per_host: extra.per_host ?? 100,
      host_limits: extra.host_limits,
    });

  it('the settle wrote one pending, unclaimed row with the callback host', async () => {
    const row = await paid('https://Shop.Example:8443/confirm');
    expect(row).toMatchObject({
      delivery_status: 'pending',
      attempts: 0,
      claimed_by: null,
      claimed_until: null,
      seq: 1,
      callback_host: 'shop.example:8443',
    });
    expect(JSON.parse(row.payload)).toMatchObject({ status: 'paid', order_id: row.order_id });
  });

  it('claims a due row once; another instance gets it only after the lease ends', async () => {
    const row = await paid('https://a.example/cb');
    const now = Date.now() + 1;
    const [mine, ...rest] = await claim(gw.store, 'one', now);
    expect(rest).toEqual([]);
    expect(mine).toMatchObject({ event_id: row.event_id, claimed_by: 'one', claimed_until: now + LEASE });
    expect(await claim(gw.store, 'two', now + 1)).toEqual([]);
    expect(await claim(gw.store, 'two', now + LEASE - 1)).toEqual([]);
    const [taken] = await claim(gw.store, 'two', now + LEASE);
    expect(taken).toMatchObject({ event_id: row.event_id, claimed_by: 'two', claimed_until: now + 2 * LEASE });
  });

  it('claims queued rows by event_id, only those still due and unclaimed (or lease-expired)', async () => {
    const [a, b, later, taken, done] = [
      await paid('https://a.example/cb'),
      await paid('https://b.example/cb'),
      await paid('https://a.example/cb'),
      await paid('https://a.example/cb'),
      await paid('https://a.example/cb'),
    ];
    const now = Date.now() + 1;
    await gw.store.db
      .updateTable('outbox')
      .set({ next_attempt_at: now + 1000 })
      .where('event_id', '=', later.event_id)
      .execute();
    await gw.store.db
      .updateTable('outbox')
      .set({ delivery_status: 'delivered' })
      .where('event_id', '=', done.event_id)
      .execute();
    expect(
      await gw.store.outbox.claimQueued({ event_ids: [taken.event_id], claimed_by: 'two', now, lease_ms: LEASE }),
    ).toHaveLength(1);
    const ids = [a, b, later, taken, done].map((r) => r.event_id).concat('evt_nothing_by_this_id');
    const got = await gw.store.outbox.claimQueued({ event_ids: ids, claimed_by: 'one', now, lease_ms: LEASE });
    expect(got.map((r) => r.event_id).sort()).toEqual([a.event_id, b.event_id].sort());
    expect(got[0]).toMatchObject({ claimed_by: 'one', claimed_until: now + LEASE, delivery_status: 'pending' });
    expect(await gw.store.outbox.find(taken.event_id)).toMatchObject({ claimed_by: 'two' });
    // Claimed now: not by id again, not by the search, until the lease ends.
    expect(
      await gw.store.outbox.claimQueued({ event_ids: [a.event_id], claimed_by: 'two', now: now + 1, lease_ms: LEASE }),
    ).toEqual([]);
    expect((await claim(gw.store, 'two', now + 1)).map((r) => r.event_id)).toEqual([]);
    expect(
      await gw.store.outbox.claimQueued({
        event_ids: [a.event_id],
        claimed_by: 'two',
        now: now + LEASE,
        lease_ms: LEASE,
      }),
    ).toHaveLength(1);
    expect(await gw.store.outbox.claimQueued({ event_ids: [], claimed_by: 'one', now, lease_ms: LEASE })).toEqual([]);
  });

  it("returns each claimed row with its wallet's current key, the one its attempt signs with, a rotation's from the next claim", async () => {
    const other = await gw.newMerchant();
    const mine = await paid('https://a.example/cb');
    const { order_id } = await gw.create({ callback_url: 'https://b.example/cb' }, other);
    await gw.pay(order_id);
    const [theirs] = await gw.store.outbox.listByOrder(order_id);
    const now = Date.now() + 1;
    const found = await claim(gw.store, 'one', now);
    expect(found.map((r) => [r.event_id, r.api_key]).sort()).toEqual(
      [
        [mine.event_id, gw.merchant.api_key],
        [theirs.event_id, other.api_key],
      ].sort(),
    );
    const rotated = 'A1B2C3D4E5F60718293A4B5C6D7E8F90';
    expect(await gw.store.accounts.rotateApiKey(other.wallet_id, rotated, null)).toBe(true);
    const [again] = await gw.store.outbox.claimQueued({
      event_ids: [theirs.event_id],
      claimed_by: 'two',
      now: now + LEASE,
      lease_ms: LEASE,
    });
    expect(again).toMatchObject({ event_id: theirs.event_id, claimed_by: 'two', api_key: rotated });
    const [searched] = await claim(gw.store, 'three', now + 2 * LEASE, { host_limits: new Map([['a.example', 0]]) });
    expect(searched).toMatchObject({ event_id: theirs.event_id, claimed_by: 'three', api_key: rotated });
  });

  it('does not claim rows that are not due yet', async () => {
    const row = await paid('https://a.example/cb');
    expect(await claim(gw.store, 'one', Number(row.next_attempt_at) - 1)).toEqual([]);
    expect(await claim(gw.store, 'one', Number(row.next_attempt_at))).toHaveLength(1);
  });

  it('limits the batch per host so a backlog of one merchant does not hide the others', async () => {
    for (let i = 0; i < 5; i++) await paid('https://slow.example/cb');
    const fast = [await paid('https://fast.example/cb'), await paid('https://fast.example/cb')];
    const now = Date.now() + 1;
    const first = await claim(gw.store, 'one', now, {
      limit: 3,
      per_host: 2,
      host_limits: new Map([['slow.example', 1]]),
    });
    expect(first.map((r) => r.callback_host).sort()).toEqual(['fast.example', 'fast.example', 'slow.example']);
    expect(
      first
        .filter((r) => r.callback_host === 'fast.example')
        .map((r) => r.event_id)
        .sort(),
    ).toEqual(fast.map((r) => r.event_id).sort());
    expect(await claim(gw.store, 'one', now, { per_host: 2, host_limits: new Map([['slow.example', 0]]) })).toEqual([]);
    expect((await claim(gw.store, 'one', now, { per_host: 2 })).map((r) => r.callback_host)).toEqual([
      'slow.example',
      'slow.example',
    ]);
  });

  it('records a failed attempt, schedules the next and releases the claim, in one step', async () => {
    const row = await paid('https://a.example/cb');
    const now = Date.now() + 1;
    const [c] = await claim(gw.store, 'one', now);
    const applied = await gw.store.outbox.recordAttempt({
      event_id: row.event_id,
      claimed_by: 'one',
      claimed_until: c.claimed_until!,
      attempt: { attempted_at: now, http_status: 500, response_excerpt: 'oops', latency_ms: 12, error: 'HTTP 500' },
      delivered: false,
      next_attempt_at: now + 30_000,
      now: now + 12,
    });
    expect(applied).toBe(true);
    expect(await gw.store.outbox.find(row.event_id)).toMatchObject({
      delivery_status: 'pending',
      attempts: 1,
      next_attempt_at: now + 30_000,
      claimed_by: null,
      claimed_until: null,
    });
    expect(await gw.store.outbox.listAttempts(row.event_id)).toMatchObject([
      {
        event_id: row.event_id,
        attempted_at: now,
        http_status: 500,
        response_excerpt: 'oops',
        latency_ms: 12,
        error: 'HTTP 500',
      },
    ]);
    expect(await claim(gw.store, 'one', now + 29_999)).toEqual([]);
    const [again] = await claim(gw.store, 'two', now + 30_000);
    expect(
      await gw.store.outbox.recordAttempt({
        event_id: row.event_id,
        claimed_by: 'two',
        claimed_until: again.claimed_until!,
        attempt: { attempted_at: now + 30_000, http_status: 200, response_excerpt: 'sent', latency_ms: 3, error: null },
        delivered: true,
        next_attempt_at: 0,
        now: now + 30_003,
      }),
    ).toBe(true);
    expect(await gw.store.outbox.find(row.event_id)).toMatchObject({
      delivery_status: 'delivered',
      attempts: 2,
      delivered_at: now + 30_003,
      claimed_by: null,
    });
    expect(await claim(gw.store, 'one', now + 10 * LEASE)).toEqual([]);
  });

  it('an attempt whose claim was lost (resend, expired lease) is recorded but leaves the row to its new owner', async () => {
    const row = await paid('https://a.example/cb');
    const now = Date.now() + 1;
    const [c] = await claim(gw.store, 'one', now);
    await gw.store.outbox.requeueNow(row.event_id, now + 5);
    const applied = await gw.store.outbox.recordAttempt({
      event_id: row.event_id,
      claimed_by: 'one',
      claimed_until: c.claimed_until!,
      attempt: { attempted_at: now, http_status: 200, response_excerpt: 'sent', latency_ms: 7, error: null },
      delivered: true,
      next_attempt_at: 0,
      now: now + 7,
    });
    expect(applied).toBe(false);
    expect(await gw.store.outbox.find(row.event_id)).toMatchObject({
      delivery_status: 'pending',
      attempts: 1,
      next_attempt_at: now + 5,
      claimed_by: null,
    });
    expect(await gw.store.outbox.listAttempts(row.event_id)).toHaveLength(1);
  });

  it('requeueNow makes a delivered row due and unclaimed again', async () => {
    const row = await paid('https://a.example/cb');
    await gw.store.db
      .updateTable('outbox')
      .set({ delivery_status: 'delivered', delivered_at: 5 })
      .where('event_id', '=', row.event_id)
      .execute();
    const now = Date.now() + 1;
    expect(await gw.store.outbox.requeueNow(row.event_id, now)).toMatchObject({
      delivery_status: 'pending',
      next_attempt_at: now,
      delivered_at: null,
      claimed_by: null,
    });
    expect(await claim(gw.store, 'one', now)).toHaveLength(1);
    expect(await gw.store.outbox.requeueNow('evt_missing', now)).toBeUndefined();
  });

  it('concurrent claimers never share a row', async () => {
    const rows: OutboxRow[] = [];
    for (let i = 0; i < 30; i++) rows.push(await paid(`https://host${i % 3}.example/cb`));
    // On PostgreSQL a second store is a second connection pool, as another instance would have.
    const other = engine === 'postgres' ? await openStore(database) : gw.store;
    try {
      const now = Date.now() + 1;
      const batches = await Promise.all(
        Array.from({ length: 12 }, (_, i) => claim(i % 2 === 0 ? gw.store : other, `claimer-${i}`, now, { limit: 4 })),
      );
      const ids = batches.flat().map((r) => r.event_id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.sort()).toEqual(rows.map((r) => r.event_id).sort());
      const owners = await gw.store.db
        .selectFrom('outbox')
        .select(['event_id', 'claimed_by'])
        .where('event_id', 'in', ids)
        .execute();
      for (const [i, batch] of batches.entries()) {
        for (const r of batch) expect(owners.find((o) => o.event_id === r.event_id)?.claimed_by).toBe(`claimer-${i}`);
      }
    } finally {
      if (other !== gw.store) await other.close();
    }
  });
});

describe('outbox claims on sqlite while a flush is in flight', () => {
  const { flushes, gw } = flushHeldGateway();

  it('a claim is answered once committed, before its flush: a gateway on SQLite frees every claim at start', async () => {
    const { order_id } = await gw().create({ callback_url: 'https://a.example/cb' });
    await gw().pay(order_id);
    const [row] = await gw().store.outbox.listByOrder(order_id);
    flushes.holding = true;
    const claimed = gw().store.outbox.claimQueued({
      event_ids: [row.event_id],
      claimed_by: 'one',
      now: Date.now() + 1,
      lease_ms: LEASE,
    });
    expect(await within(claimed, 300)).toMatchObject([{ event_id: row.event_id, claimed_by: 'one' }]);
    // Committed, and its flush still held.
    expect(flushes.held.length).toBeGreaterThan(0);
    flushes.release();
  });

  it("a claim reads its rows' signing key without waiting for a flush in flight, even a key rotated in it; other reads wait", async () => {
    const { order_id } = await gw().create({ callback_url: 'https://a.example/cb' });
    await gw().pay(order_id);
    const [row] = await gw().store.outbox.listByOrder(order_id);
    flushes.holding = true;
    // The rotation is committed at once and then waits for its flush, which is held.
    const rotating = gw()
      .store.db.updateTable('wallets')
      .set({ api_key: 'F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0' })
      .where('wallet_id', '=', gw().merchant.wallet_id)
      .execute();
    expect(await within(rotating, 200)).toBe('held');
    const claimed = gw().store.outbox.claimQueued({
      event_ids: [row.event_id],
      claimed_by: 'one',
      now: Date.now() + 1,
      lease_ms: LEASE,
    });
    expect(await within(claimed, 200)).toMatchObject([
      { event_id: row.event_id, api_key: 'F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0' },
    ]);
    const plain = gw().store.accounts.findWallet(gw().merchant.wallet_id);
    expect(await within(plain, 200)).toBe('held');
    flushes.release();
    await rotating;
    expect(await plain).toMatchObject({ api_key: 'F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0' });
  });
});
