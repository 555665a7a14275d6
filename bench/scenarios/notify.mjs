// Notification latency under load, and the delivery rate of a backlog, each on a database of its
// own: a backlog of notifications from other scenarios (the refund set-up pays 1,000 orders) would
// otherwise be delivered first.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Pool } from 'undici';
import { openDb } from '../lib/db.mjs';
import { freshDatabase, startGw } from '../lib/gateways.mjs';
import { runLoad } from '../lib/load.mjs';
import { CONNECTIONS, DURATION, NOTIFY_RATE, ROOT, log, now, sleep } from '../lib/options.mjs';
import { createReq, payAll, preCreate } from '../lib/requests.mjs';
import { row, rows } from '../lib/results.mjs';
import { fmt, summarize } from '../lib/stats.mjs';

export async function notifyRuns(engine, receiver) {
  const database = await freshDatabase(engine);
  const gw = await startGw(database);
  const m = gw.merchant;
  const db = await openDb(engine, database);
  try {
    const rate = NOTIFY_RATE;
    const count = Math.max(20, Math.round(rate * DURATION));
    const { refs } = await preCreate(gw.url, m, count + 1000);
    const ids = await db.orderIds(m.user_id, refs);
    const orders = refs.map((ref) => ({ merchant_reference: ref, order_id: ids.get(ref) }));
    await notifyLatency(engine, gw, m, orders.slice(0, count), receiver, rate);
    await notifyDrain(engine, gw, orders.slice(count), receiver);
  } finally {
    await gw.stop();
    await db.close();
  }
}

/** How fast a backlog is delivered: pay 1,000 orders at once (no other load), time until the last `sent`. */
async function notifyDrain(engine, gw, orders, receiver) {
  await receiver.ask({ type: 'dump', reset: true });
  const wanted = new Set(orders.map((o) => o.merchant_reference));
  const t0 = now();
  await payAll(
    gw.url,
    orders.map((o) => o.order_id),
    50,
  );
  const paidMs = now() - t0;
  const deadline = now() + 60_000;
  let got;
  for (;;) {
    const recs = (await receiver.ask({ type: 'dump', reset: false })).records;
    got = new Map(recs.filter((r) => wanted.has(r.ref)).map((r) => [r.ref, r.t]));
    if (got.size >= wanted.size || now() > deadline) break;
    await sleep(200);
  }
  const lastT = Math.max(...got.values());
  const ms = lastT - t0;
  log(
    `${engine} notification backlog: ${got.size}/${orders.length} delivered, last ${fmt(ms, 0)} ms after the first pay (pays took ${fmt(paidMs, 0)} ms): ${fmt(got.size / (ms / 1000), 0)} notifications/s`,
  );
  row({
    group: 'notify',
    name: `notification backlog of ${orders.length} (delivery rate)`,
    engine,
    rps: got.size / (ms / 1000),
    ok: got.size,
    bad: orders.length - got.size,
    note: `req/s = notifications delivered per second; last delivered ${fmt(ms, 0)} ms after the first of ${orders.length} pays (pays took ${fmt(paidMs, 0)} ms)`,
  });
}

async function notifyLatency(engine, gw, m, orders, receiver, rate) {
  await receiver.ask({ type: 'dump', reset: true });
  const sentAt = new Map();
  const paidAt = new Map();
  const pool = new Pool(gw.url, { connections: 10 });
  const load = runLoad({ url: gw.url, connections: CONNECTIONS, duration: DURATION + 1, next: createReq(m) });
  await sleep(500);
  const pays = [];
  const start = now();
  for (let i = 0; i < orders.length; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - now();
    if (wait > 0) await sleep(wait);
    const o = orders[i];
    sentAt.set(o.merchant_reference, now());
    pays.push(
      pool
        .request({
          method: 'POST',
          path: `/sandbox/pay/${o.order_id}`,
          headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
          body: 'result=paid',
        })
        .then((res) => res.body.text())
        .then(() => paidAt.set(o.merchant_reference, now())),
    );
  }
  await Promise.all(pays);
  const lr = await load;
  log(`${engine} create under notification load: ${fmt(lr.rps, 0)} req/s, p99 ${fmt(lr.p99)} ms`);
  let records;
  const deadline = now() + 15_000;
  const wanted = new Set(orders.map((o) => o.merchant_reference));
  for (;;) {
    records = (await receiver.ask({ type: 'dump', reset: false })).records.filter((r) => wanted.has(r.ref));
    if (new Set(records.map((r) => r.ref)).size >= wanted.size || now() > deadline) break;
    await sleep(250);
  }
  await pool.close();
  const first = new Map();
  for (const r of records) if (!first.has(r.ref)) first.set(r.ref, r.t);
  const fromSend = [...first].map(([ref, t]) => t - sentAt.get(ref));
  const fromPaid = [...first].filter(([ref]) => paidAt.has(ref)).map(([ref, t]) => t - paidAt.get(ref));
  const s = summarize(fromSend);
  const sp = summarize(fromPaid);
  const workerPresent =
    existsSync(join(ROOT, 'dist', 'src', 'notify')) && readdirSync(join(ROOT, 'dist', 'src', 'notify')).length > 0;
  const available = first.size > 0;
  log(
    `${engine} notifications: ${first.size}/${orders.length} delivered (${records.length} deliveries)` +
      (available
        ? `, from pay request p50 ${fmt(s.p50)} ms p99 ${fmt(s.p99)} ms max ${fmt(s.max)} ms; from pay response p50 ${fmt(sp.p50)} p99 ${fmt(sp.p99)}`
        : ` — not available${workerPresent ? '' : ' (no notification worker in dist/src/notify)'}`),
  );
  row({
    group: 'notify',
    name: `notification latency (${rate}/s pays under create load)`,
    engine,
    p50: available ? s.p50 : undefined,
    p99: available ? s.p99 : undefined,
    max: available ? s.max : undefined,
    ok: first.size,
    bad: orders.length - first.size,
    rps: lr.rps,
    note: available
      ? `${first.size}/${orders.length} delivered, ${records.length - first.size} duplicate deliveries; req/s = creates alongside`
      : `not available${workerPresent ? ' (worker present, nothing delivered in 15 s)' : ' (no notification worker yet)'}`,
    maxP99: 1000,
    verdict: available ? undefined : 'n/a',
  });
  if (available && first.size < orders.length) rows.at(-1).verdict = 'FAIL';
}
