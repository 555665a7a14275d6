// PostgreSQL failover: a primary with a synchronous hot standby (test/support/pg-pair.ts), two
// gateway instances whose DATABASE_URL names both hosts. Clients create, pay and refund while the
// primary is killed (its whole process group, as a machine dies) and the standby promoted. A
// request caught in the switch answers code 1 saying to retry, and the client retries the same
// request; writes resume soon after the promotion; afterwards every acknowledged create, pay and
// refund is in the new primary's database, every paid order is notified, a long poll held across
// the switch is answered, and the books balance (each gateway's close runs `ledger check`).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PgStatusSignals } from '../../src/signals/pg-status-signals.js';
import { openStore } from '../../src/store/open.js';
import { refundBody } from '../support/api.js';
import { consoleUser } from '../support/console-client.js';
import { freePort } from '../support/ports.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { startPgPair, type PgPair } from '../support/pg-pair.js';
import { Receiver } from '../notify/receiver.js';
import { pgQuery, until } from './pair.js';

let db: PgPair;
let a: TestGateway;
let b: TestGateway;
let rx: Receiver;

beforeAll(async () => {
  db = await startPgPair();
  rx = await Receiver.start();
  const opts = {
    database: db.url,
    longPollTimeoutMs: 60_000,
    notify: { pollIntervalMs: 200, retryScheduleMs: [500] },
  };
  a = await startTestGateway('postgres', opts);
  b = await startTestGateway('postgres', opts);
}, 60_000);

afterAll(async () => {
  await a?.close();
  await b?.close();
  await rx?.close();
  await db?.stop();
});

interface Tally {
  created: string[];
  paid: string[];
  refunded: Array<{ order_id: string; reference: string }>;
  /** code 1 answers with the retry detail (each retried). */
  retried: number;
  /** Anything else that was not an acknowledgement: none is expected. */
  other: string[];
  /** When each acknowledged write came back. */
  ackedAt: number[];
}

/** Sends `send` until it is acknowledged (`ok`); a code-1 "retry" answer or a refused connection is retried. */
async function untilAcknowledged<T>(
  t: Tally,
  send: () => Promise<T>,
  ok: (r: T) => boolean,
  stop: () => boolean,
): Promise<T | undefined> {
  for (;;) {
    let r: T | undefined;
    try {
      r = await send();
    } catch (e) {
      // The test's own read of the store (the order's id) meets the switch as the gateway does.
      if ((e as Error).name === 'DatabaseUnavailable') t.retried++;
      else t.other.push(`threw: ${String(e)}`);
    }
    if (r !== undefined && ok(r)) {
      t.ackedAt.push(Date.now());
      return r;
    }
    const reply = r as { code?: number; message?: string; detail?: string } | undefined;
    // Code 1 saying to retry: the switch itself, or a refund whose provider step it cut (the refund
    // stays reserved and the gateway asks again with the same refund_id).
    // (A retry of that refund meanwhile: 562, "send the same request later".)
    const text = JSON.stringify(reply);
    if (
      (reply?.code === 1 && /send the same request again|keeps asking/.test(text)) ||
      (reply?.code === 562 && /Send the same request later/.test(text))
    )
      t.retried++;
    else if (r !== undefined) t.other.push(JSON.stringify(r).slice(0, 300));
    if (stop()) return undefined;
    await new Promise((res) => setTimeout(res, 50));
  }
}

/** One client: create, pay and part-refund orders in turn through `gw`, until `stop`. */
async function client(gw: TestGateway, t: Tally, stop: () => boolean): Promise<void> {
  while (!stop()) {
    const body = gw.createBody({ callback_url: `${rx.url}/n`, amount: '50.00' }, a.merchant);
    const created = await untilAcknowledged(
      t,
      () => gw.post('/v2/transaction', body),
      (r) => r.code === 0,
      stop,
    );
    if (!created) return;
    t.created.push(body.merchant_reference);
    const order_id = await untilAcknowledged(
      t,
      async () => (await gw.store.transactions.findByReference(a.merchant.user_id, body.merchant_reference))?.order_id,
      (id) => id !== undefined,
      stop,
    );
    if (!order_id) return;
    const paid = await untilAcknowledged(
      t,
      () => gw.pay(order_id),
      (r) => r.status === 'paid',
      stop,
    );
    if (!paid) return;
    t.paid.push(order_id);
    const reference = `part of ${order_id}`;
    const refunded = await untilAcknowledged(
      t,
      () => gw.post('/refund', refundBody(gw, order_id, '10.00', reference, a.merchant)),
      (r) => r.code === 0,
      stop,
    );
    if (refunded) t.refunded.push({ order_id, reference });
  }
}

describe('PostgreSQL failover: the primary killed, the standby promoted', () => {
  it('connects to the writable host whichever is named first; a host that refuses is passed over', async () => {
    const store = await openStore(db.standbyFirstUrl);
    try {
      expect(await store.pendingMigrations()).toEqual([]);
      await store.accounts.setRate('AUD', 'CNY', 4_700_000, Date.now());
    } finally {
      await store.close();
    }
    const port = await freePort();
    const refused = await openStore(db.url.replace('postgres@', `postgres@127.0.0.1:${port},`));
    try {
      await refused.accounts.setRate('AUD', 'CNY', 4_710_000, Date.now());
    } finally {
      await refused.close();
    }
  });

  it('loses no acknowledged write, answers the requests caught in the switch with a retry, and resumes', async () => {
    const t: Tally = { created: [], paid: [], refunded: [], retried: 0, other: [], ackedAt: [] };
    // A long poll held on b across the switch, paid through a after it.
    const held = await a.create({}, a.merchant);
    const polled = b.query(held.merchant_reference, { block: true, merchant: a.merchant });
    await until('the long poll to wait', () => b.ctx.signals.waiting > 0);

    const hosted = await a.create({}, a.merchant);
    const checkout = `${b.url}/v2/checkout/${String(hosted.reply.nonce)}`;
    const operator = (await consoleUser(a, 'operator', 'admin')).client;
    expect((await operator.get('/console')).status).toBe(200);

    let stopped = false;
    const clients = [a, b, a, b].map((gw) => client(gw, t, () => stopped));
    await until('some writes before the failover', () => t.refunded.length >= 8, 30_000);

    const killedAt = Date.now();
    await db.killPrimary();
    // Unready while no writable primary is reachable.
    const ready = await fetch(`${a.url}/readyz`);
    expect(ready.status).toBe(503);
    // The console says to try again in a moment, not "something went wrong".
    const away = await operator.get('/console');
    expect(away.status).toBe(503);
    expect(away.body).toContain('Try again in a few seconds');
    // So does the customer's hosted page, as a page.
    const busy = await fetch(checkout, { headers: { 'accept-language': 'en' } });
    expect(busy.status).toBe(503);
    expect(busy.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await busy.text()).toContain('Please reload this page in a few seconds');
    await new Promise((res) => setTimeout(res, 1000));
    await db.promoteStandby();
    const promotedAt = Date.now();
    await until('writes acknowledged after the promotion', () => t.ackedAt.some((at) => at > promotedAt + 200), 30_000);
    const resumedAt = t.ackedAt.find((at) => at > promotedAt)!;
    // Writes resume within 10 s of the kill.
    expect(resumedAt - killedAt).toBeLessThan(10_000);
    const refundsBefore = t.refunded.length;
    await until('more refunds after the failover', () => t.refunded.length >= refundsBefore + 8, 30_000);
    stopped = true;
    await Promise.all(clients);

    expect(t.other).toEqual([]);
    expect(t.retried).toBeGreaterThan(0);
    expect((await fetch(`${a.url}/readyz`)).status).toBe(200);
    expect((await fetch(`${b.url}/readyz`)).status).toBe(200);
    expect((await operator.get('/console')).status).toBe(200);
    expect((await fetch(checkout)).status).toBe(200);

    // Every acknowledged write is in the new primary's database, each once.
    const rows = await pgQuery<{ merchant_reference: string; order_id: string; status: string }>(
      db.standbyUrl,
      'select merchant_reference, order_id, status from transactions where merchant_reference = any($1)',
      [t.created],
    );
    expect(rows.map((r) => r.merchant_reference).sort()).toEqual([...t.created].sort());
    const status = new Map(rows.map((r) => [r.order_id, r.status]));
    for (const id of t.paid) expect(status.get(id)).toBe('paid');
    const refunds = await pgQuery<{ order_id: string; reference: string }>(
      db.standbyUrl,
      'select order_id, reference from refunds where order_id = any($1)',
      [t.paid],
    );
    const kept = new Set(refunds.map((r) => `${r.order_id} ${r.reference}`));
    for (const r of t.refunded) expect(kept.has(`${r.order_id} ${r.reference}`)).toBe(true);
    expect(refunds.length).toBe(new Set(refunds.map((r) => r.order_id)).size);

    // The long poll held across the switch is answered once its order is paid.
    expect(await a.pay(held.order_id)).toMatchObject({ status: 'paid' });
    expect(await polled).toMatchObject({ code: 0, status: 'paid' });
    expect((b.ctx.signals as PgStatusSignals).listening).toBe(true);

    // Every paid order notified (as paid, or with its refund after it).
    const refs = new Map(rows.map((r) => [r.order_id, r.merchant_reference]));
    await rx.waitFor(
      (rs) =>
        t.paid.every((id) =>
          rs.some((r) => r.answered === 'sent' && r.fields.get('merchant_reference') === refs.get(id)),
        ),
      'a notification of every paid order',
      60_000,
    );
  }, 120_000);
});
