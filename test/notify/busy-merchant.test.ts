// A merchant with a backlog of notifications (an outage, a restart) and a callback server that
// answers slowly (Python's http.server: each answer waits on the client's delayed ACK): the
// gateway's limit of attempts in flight to that host grows while it answers well and the backlog
// waits, a fresh payment's first notification goes ahead of the backlog, a host answering 500 is
// probed rather than hammered and drains once back, and a Retry-After is honoured. The timings
// these lead to are measured by the bench (`npm run bench -- --only notify-busy`), not here.
import { afterEach, describe, expect, it } from 'vitest';
import { databaseFor, ENGINES, startTestGateway, type EngineName, type TestGateway } from '../support/gateway.js';
import { Receiver } from './receiver.js';

const BACKLOG = 240;

/** Pays `n` orders to `url` on a gateway whose worker is off, then closes it: the outbox holds them all. */
async function backlogOf(engine: EngineName, url: string, n: number): Promise<{ database: string; refs: string[] }> {
  const { database } = await databaseFor(engine);
  const gw = await startTestGateway(engine, { database });
  const refs: string[] = [];
  const one = async () => {
    const { order_id, merchant_reference } = await gw.create({ callback_url: url });
    refs.push(merchant_reference);
    expect((await gw.pay(order_id)).status).toBe('paid');
  };
  for (let i = 0; i < n; i += 8) await Promise.all(Array.from({ length: Math.min(8, n - i) }, one));
  await gw.close();
  return { database, refs };
}

const sentRefs = (rx: Receiver) =>
  new Set(rx.received.filter((r) => r.answered === 'sent').map((r) => r.fields.get('merchant_reference')!));

describe.each(ENGINES)('a busy merchant on %s', (engine) => {
  let gw: TestGateway | undefined;
  let rx: Receiver | undefined;
  afterEach(async () => {
    await gw?.close();
    await rx?.close();
    gw = rx = undefined;
  });

  it("drains a backlog to a slow host with a growing limit, never past the cap; a fresh payment's notification goes first", async () => {
    rx = await Receiver.start({ nagle: true });
    const { database, refs } = await backlogOf(engine, `${rx.url}/backlog`, BACKLOG);
    gw = await startTestGateway(engine, {
      database,
      notify: { hostConcurrency: 2, hostConcurrencyMax: 12, pollIntervalMs: 1000 },
    });
    await rx.waitFor((rs) => rs.length >= 20, 'the backlog to start', 30_000);
    const { order_id, merchant_reference } = await gw.create({ callback_url: `${rx.url}/fresh` });
    const before = rx.received.length;
    await gw.pay(order_id);
    const fresh = await rx.first(merchant_reference, 30_000);
    // It came while most of the backlog still waited, ahead of it: between its payment and its
    // arrival only the attempts already under way (at most two limits' worth) reached the host.
    expect(sentRefs(rx).size).toBeLessThan(BACKLOG / 2);
    expect(fresh.n - 1 - before).toBeLessThan(24);
    await rx.waitFor(
      (rs) => refs.every((ref) => rs.some((r) => r.fields.get('merchant_reference') === ref)),
      'the whole backlog',
      60_000,
    );
    // Each once; more than the starting two in flight at a time (the limit grew), never more than the cap.
    const counts = new Map<string, number>();
    for (const r of rx.received)
      counts.set(r.fields.get('merchant_reference')!, (counts.get(r.fields.get('merchant_reference')!) ?? 0) + 1);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    expect(rx.maxOpen).toBeGreaterThan(2);
    expect(rx.maxOpen).toBeLessThanOrEqual(12);
  });

  it('probes a host that answers 500 instead of sending it the whole backlog, and drains the backlog once it is back', async () => {
    rx = await Receiver.start({ nagle: true });
    const { database, refs } = await backlogOf(engine, `${rx.url}/down`, BACKLOG);
    rx.fallback = { status: 500, body: 'down' };
    gw = await startTestGateway(engine, {
      database,
      notify: { hostConcurrency: 4, hostConcurrencyMax: 12, pollIntervalMs: 200, retryScheduleMs: [1500] },
    });
    await rx.waitFor((rs) => rs.length >= 4, 'the first attempts', 30_000);
    await new Promise((r) => setTimeout(r, 3000));
    // Three seconds down: a few probes, not one attempt a row.
    const whileDown = rx.received.length;
    expect(whileDown).toBeLessThan(BACKLOG / 4);
    rx.fallback = 'sent';
    const { order_id, merchant_reference } = await gw.create({ callback_url: `${rx.url}/fresh` });
    await gw.pay(order_id);
    await rx.waitFor(
      (rs) => rs.some((r) => r.fields.get('merchant_reference') === merchant_reference && r.answered === 'sent'),
      'the fresh notification',
      30_000,
    );
    expect(sentRefs(rx).size).toBeLessThan(BACKLOG / 2);
    await rx.waitFor(() => refs.every((ref) => sentRefs(rx!).has(ref)), 'the whole backlog delivered', 60_000);
    expect(rx.maxOpen).toBeLessThanOrEqual(12);
  });

  it("waits for a 429's Retry-After before the next attempt to that host", async () => {
    rx = await Receiver.start();
    const { database, refs } = await backlogOf(engine, `${rx.url}/limited`, 6);
    const answeredAt: number[] = [];
    rx.fallback = (r) => {
      answeredAt.push(Date.now());
      return r.n === 1 ? { status: 429, body: 'slow down', headers: { 'retry-after': '2' } } : 'sent';
    };
    gw = await startTestGateway(engine, {
      database,
      notify: { hostConcurrency: 1, hostConcurrencyMax: 1, pollIntervalMs: 100, retryScheduleMs: [100] },
    });
    await rx.waitFor(() => refs.every((ref) => sentRefs(rx!).has(ref)), 'all six delivered', 30_000);
    // The second request came no sooner than the two seconds the first answer asked for.
    expect(answeredAt[1] - answeredAt[0]).toBeGreaterThanOrEqual(1900);
  });
});
