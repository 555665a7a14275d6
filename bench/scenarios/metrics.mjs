// The cost of metrics: the query rate of a gateway with metrics on (every request counted and
// timed) and a scraper reading /metrics every second, against a gateway without metrics, in
// alternating slices (A, B, A, B, ..., A) so that the machine's drift falls on both alike.
// Target (issue 18): under 3 % difference. Two gateways side by side are not alike even with the
// same settings (docs/performance.md has the A/A runs), and the difference is the process's own,
// not its start order's, so several pairs of fresh processes are measured
// (BENCH_METRICS_PAIRS, 4 by default), started in alternating order, and the verdict takes the
// median of all their per-round ratios. Each slice also records the
// gateway's own CPU time per query (process.cpuUsage over the slice's answers). PASS needs both
// ratios (rate, and CPU per query without / with) at 0.97 or more.
//   BENCH_METRICS_AA=1: neither gateway has metrics (the scenario's own bias);
//   BENCH_METRICS_NO_SCRAPE=1: metrics on, nobody scraping (the per-request cost alone).
import { randomInt } from 'node:crypto';
import { freshDatabase, startGw } from '../lib/gateways.mjs';
import { runLoad } from '../lib/load.mjs';
import { CONNECTIONS, DURATION, ROUNDS, WARMUP, log } from '../lib/options.mjs';
import { preCreate, queryPath } from '../lib/requests.mjs';
import { median, mergeRuns, pick, row } from '../lib/results.mjs';
import { fmt } from '../lib/stats.mjs';

const TOKEN = 'bench-metrics-token-0123456789';
/** Pairs of gateways measured (BENCH_METRICS_PAIRS, default 4), each for the run's duration. */
const PAIRS = Math.max(2, Number(process.env.BENCH_METRICS_PAIRS ?? 4));

async function measurePair(engine, measuredFirst) {
  const settings = { ...(!process.env.BENCH_METRICS_AA && { metricsToken: TOKEN }) };
  const first = await startGw(await freshDatabase(engine), measuredFirst ? settings : {});
  const m = first.merchant;
  const second = await startGw(await freshDatabase(engine), { merchant: m, ...(measuredFirst ? {} : settings) });
  const [measured, plain] = measuredFirst ? [first, second] : [second, first];
  const out = { a: [], b: [], scrapes: 0, scrapeMs: 0, scrapeFailures: 0 };
  try {
    const paths = new Map();
    for (const gw of [plain, measured]) {
      const refs = (await preCreate(gw.url, m, 3000)).refs;
      paths.set(
        gw,
        Array.from({ length: 20_000 }, () => queryPath(m, refs[randomInt(refs.length)])),
      );
    }
    const cpuOf = async (gw) => {
      const c = await gw.ask({ type: 'cpu' });
      return c.user + c.system;
    };
    const load = async (gw, duration) => {
      let k = 0;
      const list = paths.get(gw);
      const before = await cpuOf(gw);
      const r = await runLoad({
        connections: CONNECTIONS,
        url: gw.url,
        duration,
        next: () => ({ method: 'GET', path: list[k++ % list.length] }),
      });
      r.cpuPerQueryUs = ((await cpuOf(gw)) - before) / Math.max(1, r.ok);
      return r;
    };
    const scraper = process.env.BENCH_METRICS_NO_SCRAPE
      ? undefined
      : setInterval(() => {
          const t0 = performance.now();
          fetch(`${measured.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } }).then(
            async (res) => {
              await res.text();
              if (res.status !== 200) out.scrapeFailures++;
              out.scrapes++;
              out.scrapeMs += performance.now() - t0;
            },
            () => out.scrapeFailures++,
          );
        }, 1000);
    try {
      if (WARMUP > 0) {
        await load(plain, WARMUP);
        await load(measured, WARMUP);
      }
      const slice = DURATION / ROUNDS / 2;
      out.a.push(await load(plain, slice));
      for (let i = 0; i < ROUNDS; i++) {
        out.b.push(await load(measured, slice));
        out.a.push(await load(plain, slice));
      }
    } finally {
      clearInterval(scraper);
    }
  } finally {
    await first.stop();
    await second.stop();
  }
  out.ratios = out.b.map((x, i) => x.rps / ((out.a[i].rps + out.a[i + 1].rps) / 2));
  // CPU per query, the same way: without / with (1.00 = no cost; 0.97 = 3 % more CPU a query).
  out.cpuRatios = out.b.map((x, i) => (out.a[i].cpuPerQueryUs + out.a[i + 1].cpuPerQueryUs) / 2 / x.cpuPerQueryUs);
  return out;
}

export async function metricsRuns(engine) {
  // A process's own speed differs from the next one's (same settings): that bias is per process,
  // so only more pairs average it out.
  const pairs = [];
  for (let i = 0; i < PAIRS; i++) pairs.push(await measurePair(engine, i % 2 === 1));
  const ratios = pairs.flatMap((h) => h.ratios);
  const cpuRatios = pairs.flatMap((h) => h.cpuRatios);
  const ratio = median(ratios);
  const cpuRatio = median(cpuRatios);
  const rb = mergeRuns(pairs.flatMap((h) => h.b));
  const ra = mergeRuns(pairs.flatMap((h) => h.a));
  const cpuA = median(pairs.flatMap((h) => h.a.map((x) => x.cpuPerQueryUs)));
  const cpuB = median(pairs.flatMap((h) => h.b.map((x) => x.cpuPerQueryUs)));
  const scrapes = pairs.reduce((n, h) => n + h.scrapes, 0);
  const scrapeMs = pairs.reduce((n, h) => n + h.scrapeMs, 0) / Math.max(1, scrapes);
  const scrapeFailures = pairs.reduce((n, h) => n + h.scrapeFailures, 0);
  const perPair = pairs.map((h) => `${fmt(median(h.ratios), 3)}/${fmt(median(h.cpuRatios), 3)}`).join(', ');
  log(
    `${engine} metrics: query ${fmt(rb.rps, 0)} req/s with metrics and a scraper every 1 s, ${fmt(ra.rps, 0)} without; rate ratios ${ratios.map((x) => fmt(x, 2)).join(' ')} -> ${fmt(ratio, 3)}; CPU per query ${fmt(cpuB, 1)} us with, ${fmt(cpuA, 1)} us without, ratios ${cpuRatios.map((x) => fmt(x, 2)).join(' ')} -> ${fmt(cpuRatio, 3)}; pairs (plain first, measured first, ...) rate/CPU ${perPair}; ${scrapes} scrapes, mean ${fmt(scrapeMs)} ms, ${scrapeFailures} failed`,
  );
  row({
    group: 'metrics',
    name: 'query, metrics on + scraper 1/s',
    engine,
    ...pick(rb),
    ratio,
    floor: 'metrics off',
    floorRps: ra.rps,
    target: '>= 0.97 x without (rate and CPU per query)',
    verdict: ratio >= 0.97 && cpuRatio >= 0.97 && scrapeFailures === 0 ? 'PASS' : 'FAIL',
    note: `without: ${fmt(ra.rps, 0)} req/s; ${PAIRS} pairs ${perPair}; CPU/query ${fmt(cpuB, 1)} vs ${fmt(cpuA, 1)} us (x${fmt(cpuRatio, 3)}); scrape ${fmt(scrapeMs)} ms mean`,
  });
}
