// Long polls: 10,000 held queries, their memory, and how fast they are answered once their orders
// are paid; a fresh gateway process and database for each variant.
import { openDb } from '../lib/db.mjs';
import { freshDatabase, startGw } from '../lib/gateways.mjs';
import { LONGPOLLS, POLL_CLIENT, WARMUP, log, now, sleep } from '../lib/options.mjs';
import { startChild } from '../lib/procs.mjs';
import { payAll, preCreate, queryPath } from '../lib/requests.mjs';
import { row } from '../lib/results.mjs';
import { fmt } from '../lib/stats.mjs';

export async function longPollRuns(engine) {
  const variants = [
    { orders: Math.max(1, Math.round(LONGPOLLS / 100)), per: Math.min(100, LONGPOLLS) },
    { orders: LONGPOLLS, per: 1 },
  ];
  for (const v of variants) {
    // A fresh process and database for each: idle memory is the baseline, and no backlog of
    // notifications from earlier scenarios is delivered meanwhile.
    const database = await freshDatabase(engine);
    const gw = await startGw(database);
    const m = gw.merchant;
    const db = await openDb(engine, database);
    try {
      const ordersOf = async (count) => {
        const { refs } = await preCreate(gw.url, m, count);
        const ids = await db.orderIds(m.user_id, refs);
        return refs.map((ref) => ({ ref, order_id: ids.get(ref) }));
      };
      const orders = await ordersOf(v.orders);
      if (WARMUP > 0) {
        // The warm-up every scenario has: a small round of the same (100 other orders, 10 polls
        // each, held, paid, woken, notified), so the measured round runs on a process that has
        // paid orders and answered woken polls before, as a gateway holding 10,000 polls has (a
        // cold process's first pays run code not yet compiled; docs/performance.md).
        await longPoll(gw, m, await ordersOf(100), 10);
        await sleep(1000);
      }
      await sleep(500);
      const r = await longPoll(gw, m, orders, v.per);
      const label = `${v.orders * v.per} long polls (${v.orders} orders x ${v.per})`;
      log(
        `${engine} ${label}: held ${r.held}, RSS before ${fmt(r.rssBefore)} MB, with polls ${fmt(r.rssHeld)} MB (peak ${fmt(r.hwm)} MB); all woken ${fmt(r.wakeMs, 0)} ms after first settle (${fmt(r.afterLastPayMs, 0)} ms after the last settle answered); woke paid ${r.paid}/${r.total}, errors ${r.errors}`,
      );
      row({
        group: 'longpoll',
        name: label,
        engine,
        rssMB: r.rssHeld,
        wakeMs: r.wakeMs,
        ok: r.paid,
        bad: r.total - r.paid,
        note: `RSS ${fmt(r.rssBefore, 0)} MB idle -> ${fmt(r.rssHeld, 0)} MB held (anonymous ${fmt(r.anonHeld, 0)} MB, file-backed ${fmt(r.fileHeld, 0)} MB; JS heap ${fmt(r.heapUsedMB, 0)} MB, peak RSS ${fmt(r.hwm, 0)} MB); settle of all orders took ${fmt(r.settleMs, 0)} ms; last wake ${fmt(r.afterLastPayMs, 0)} ms after last settle reply`,
        // Waking 10,000 separate orders is bounded by how fast 10,000 settles go through, so the
        // 1 s wake target applies to the variant with few orders and many polls each.
        maxRss: 250,
        maxWake: v.per > 1 ? 1000 : undefined,
      });
    } finally {
      await gw.stop();
      await db.close();
    }
  }
}

async function longPoll(gw, m, orders, per) {
  const total = orders.length * per;
  // Each poll on a connection of its own, from a client process of its own that costs little per
  // answer (poll-client.mjs).
  const client = await startChild(POLL_CLIENT, { url: gw.url });
  try {
    const rssBefore = gw.memory().rssMB;
    const paths = orders.map((o) => queryPath(m, o.ref, true));
    const waiting = async () => (await gw.ask({ type: 'waiting' })).n;
    const BATCH = 500;
    for (let i = 0; i < total; i += BATCH) {
      const n = Math.min(BATCH, total - i);
      await client.ask({ type: 'open', paths: Array.from({ length: n }, (_, j) => paths[(i + j) % orders.length]) });
      const deadline = Date.now() + 20_000;
      while ((await waiting()) < i + n && Date.now() < deadline) await sleep(20);
    }
    await sleep(1000);
    const held = await waiting();
    const mem = gw.memory();
    const heap = await gw.ask({ type: 'memory' }).catch(() => ({}));
    const t0 = now();
    let lastPay = 0;
    await payAll(
      gw.url,
      orders.map((o) => o.order_id),
      Math.min(100, orders.length),
      () => (lastPay = now()),
    );
    const settleMs = now() - t0;
    const r = await client.ask({ type: 'wait', total, timeoutMs: 60_000 }, 70_000);
    if (r.errors) log(`${r.errors} long polls failed, the first: ${r.firstError}`);
    const MB = (b) => (b === undefined ? NaN : b / 1048576);
    return {
      total,
      held,
      rssBefore,
      rssHeld: mem.rssMB,
      anonHeld: mem.anonMB,
      fileHeld: mem.fileMB,
      heapUsedMB: MB(heap.heapUsed),
      externalMB: MB(heap.external),
      hwm: gw.memory().hwmMB,
      wakeMs: r.last - t0,
      settleMs,
      afterLastPayMs: r.last - lastPay,
      paid: r.paid,
      errors: r.errors,
    };
  } finally {
    await client.stop();
  }
}
