// A busy merchant after an outage (issue 43): 10,000 notifications pending to one host that answers
// as Python's http.server does (each answer waits on the gateway's delayed ACK, about 40 ms), while
// another merchant's host is paid 20 times a second. Two variants, each on a database of its own:
//   backlog: the 10,000 were paid with delivery off; a gateway with delivery on is started, and the
//            time until the last is delivered is measured;
//   500 first: the same, the slow host answering HTTP 500 for the first minute, then `sent`; the
//            time is from its recovery.
// In both, one second in (in the second, one second after the recovery), one more order of the slow
// merchant is paid: its first notification's latency. Targets: the backlog within 60 s, the fresh
// one within 2 s, the other host's p99 under 1 s (the notification target).
import { openDb } from '../lib/db.mjs';
import { freshDatabase, startGw } from '../lib/gateways.mjs';
import { RECEIVER, log, now, sleep } from '../lib/options.mjs';
import { startChild } from '../lib/procs.mjs';
import { payAll, preCreate, setCallbackUrl } from '../lib/requests.mjs';
import { row } from '../lib/results.mjs';
import { fmt, summarize } from '../lib/stats.mjs';

const BACKLOG = Number(process.env.BENCH_BUSY_BACKLOG ?? 10_000);
const OUTAGE_MS = Number(process.env.BENCH_BUSY_OUTAGE_MS ?? 60_000);
const OTHER_RATE = 20;

export async function notifyBusyRuns(engine, receiver) {
  for (const variant of ['backlog', '500 first']) await busyRun(engine, receiver, variant);
}

async function busyRun(engine, other, variant) {
  const slow = await startChild(RECEIVER, { nagle: true });
  const database = await freshDatabase(engine);
  let gw = await startGw(database, { notify: { enabled: false } });
  const m = gw.merchant;
  const db = await openDb(engine, database);
  try {
    setCallbackUrl(`${slow.url}/notify`);
    const { refs } = await preCreate(gw.url, m, BACKLOG + 1);
    setCallbackUrl(`${other.url}/notify`);
    const { refs: otherRefs } = await preCreate(gw.url, m, OTHER_RATE * 120);
    const ids = await db.orderIds(m.user_id, [...refs, ...otherRefs]);
    const fresh = refs.pop();
    await payAll(
      gw.url,
      refs.map((r) => ids.get(r)),
      50,
    );
    await gw.stop();
    if (variant === '500 first') await slow.ask({ type: 'mode', fail: true });
    await other.ask({ type: 'dump', reset: true });
    await slow.ask({ type: 'dump', reset: true });
    gw = await startGw(database, { merchant: m });
    const started = now();
    // The other merchant's pays, OTHER_RATE a second, until the backlog is done.
    let otherDone = false;
    const otherPaid = new Map();
    const otherLoop = (async () => {
      for (let i = 0; i < otherRefs.length && !otherDone; i++) {
        const ref = otherRefs[i];
        const t0 = now();
        await payAll(gw.url, [ids.get(ref)], 1);
        otherPaid.set(ref, t0);
        await sleep(Math.max(0, 1000 / OTHER_RATE - (now() - t0)));
      }
    })();
    let from = started;
    if (variant === '500 first') {
      await sleep(OUTAGE_MS);
      await slow.ask({ type: 'mode', fail: false });
      from = now();
    }
    await sleep(1000);
    const freshAt = now();
    await payAll(gw.url, [ids.get(fresh)], 1);
    const wanted = new Set(refs);
    const deadline = from + 180_000;
    let delivered = new Map();
    let freshT;
    for (;;) {
      const recs = (await slow.ask({ type: 'dump', reset: false })).records.filter((r) => r.answered === 200);
      delivered = new Map(recs.filter((r) => wanted.has(r.ref)).map((r) => [r.ref, r.t]));
      freshT ??= recs.find((r) => r.ref === fresh)?.t;
      if ((delivered.size >= wanted.size && freshT !== undefined) || now() > deadline) break;
      await sleep(200);
    }
    otherDone = true;
    await otherLoop;
    const lastMs = Math.max(...delivered.values()) - from;
    const freshMs = freshT === undefined ? Infinity : freshT - freshAt;
    const otherRecs = (await other.ask({ type: 'dump', reset: true })).records;
    const otherMs = [];
    for (const r of otherRecs) if (otherPaid.has(r.ref)) otherMs.push(r.t - otherPaid.get(r.ref));
    const o = summarize(otherMs.sort((a, b) => a - b));
    const slowRecs = (await slow.ask({ type: 'dump', reset: true })).records;
    log(
      `${engine} busy merchant (${variant}): ${delivered.size}/${wanted.size} delivered, the last ${fmt(lastMs, 0)} ms after ${variant === 'backlog' ? 'the start' : 'the recovery'}; fresh payment's notification ${fmt(freshMs, 0)} ms; ${slowRecs.length} requests to the slow host (${slowRecs.filter((r) => r.answered === 500).length} answered 500); other host p50 ${fmt(o.p50)} ms p99 ${fmt(o.p99)} ms (${otherMs.length} notifications)`,
    );
    const verdict = (ok) => (ok ? 'PASS' : 'FAIL');
    row({
      group: 'notify',
      name: `busy merchant (${variant}): ${BACKLOG.toLocaleString('en')} pending to a slow host, delivered`,
      engine,
      max: lastMs,
      ok: delivered.size,
      bad: wanted.size - delivered.size,
      note: `max = the last delivery after ${variant === 'backlog' ? 'the gateway started' : 'the host recovered'}; ${slowRecs.length} requests to it`,
      target: '< 60 s',
      verdict: verdict(delivered.size === wanted.size && lastMs < 60_000),
    });
    row({
      group: 'notify',
      name: `busy merchant (${variant}): a fresh payment's first notification`,
      engine,
      max: freshMs,
      target: '< 2 s',
      verdict: verdict(freshMs < 2000),
    });
    row({
      group: 'notify',
      name: `busy merchant (${variant}): another host's notifications meanwhile`,
      engine,
      p50: o.p50,
      p99: o.p99,
      max: o.max,
      note: `${otherMs.length} notifications, ${OTHER_RATE} pays a second`,
      target: 'p99 < 1 s',
      verdict: verdict(otherMs.length > 0 && o.p99 < 1000),
    });
  } finally {
    await gw.stop();
    await db.close();
    await slow.stop();
  }
}
