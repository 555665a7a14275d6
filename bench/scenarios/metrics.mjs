// The cost of metrics: the query rate of a gateway with metrics on (every request counted and
// timed) and a scraper reading /metrics every second, against the same gateway without metrics,
// in alternating slices (A, B, A, B, ..., A) so that the machine's drift falls on both alike.
// Target (issue 18): under 3 % difference.
import { randomInt } from 'node:crypto';
import { freshDatabase, startGw } from '../lib/gateways.mjs';
import { runLoad } from '../lib/load.mjs';
import { CONNECTIONS, DURATION, ROUNDS, WARMUP, log } from '../lib/options.mjs';
import { preCreate, queryPath } from '../lib/requests.mjs';
import { median, mergeRuns, pick, row } from '../lib/results.mjs';
import { fmt } from '../lib/stats.mjs';

const TOKEN = 'bench-metrics-token-0123456789';

export async function metricsRuns(engine) {
  const plain = await startGw(await freshDatabase(engine));
  const m = plain.merchant;
  const measured = await startGw(await freshDatabase(engine), { merchant: m, metricsToken: TOKEN });
  let scrapes = 0;
  let scrapeMs = 0;
  let scrapeFailures = 0;
  try {
    const paths = [];
    for (const gw of [plain, measured]) {
      const refs = (await preCreate(gw.url, m, 3000)).refs;
      paths.push(Array.from({ length: 20_000 }, () => queryPath(m, refs[randomInt(refs.length)])));
    }
    const load = (gw, i, duration) => {
      let k = 0;
      return runLoad({ connections: CONNECTIONS, url: gw.url, duration, next: () => ({ method: 'GET', path: paths[i][k++ % paths[i].length] }) });
    };
    const scraper = setInterval(() => {
      const t0 = performance.now();
      fetch(`${measured.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } }).then(
        async (res) => {
          await res.text();
          if (res.status !== 200) scrapeFailures++;
          scrapes++;
          scrapeMs += performance.now() - t0;
        },
        () => scrapeFailures++,
      );
    }, 1000);
    try {
      if (WARMUP > 0) {
        await load(plain, 0, WARMUP);
        await load(measured, 1, WARMUP);
      }
      const slice = DURATION / ROUNDS;
      const a = [await load(plain, 0, slice)];
      const b = [];
      for (let i = 0; i < ROUNDS; i++) {
        b.push(await load(measured, 1, slice));
        a.push(await load(plain, 0, slice));
      }
      const ratios = b.map((x, i) => x.rps / ((a[i].rps + a[i + 1].rps) / 2));
      const ratio = median(ratios);
      const rb = mergeRuns(b);
      const ra = mergeRuns(a);
      log(`${engine} metrics: query ${fmt(rb.rps, 0)} req/s with metrics and a scraper every 1 s, ${fmt(ra.rps, 0)} without; per-round ratios ${ratios.map((x) => fmt(x, 3)).join(' ')} -> ${fmt(ratio, 3)}; ${scrapes} scrapes, mean ${fmt(scrapeMs / Math.max(1, scrapes))} ms, ${scrapeFailures} failed`);
      row({ group: 'metrics', name: 'query, metrics on + scraper 1/s', engine, ...pick(rb), ratio, floor: 'metrics off', floorRps: ra.rps, target: '>= 0.97 x without metrics', verdict: ratio >= 0.97 && scrapeFailures === 0 ? 'PASS' : 'FAIL', note: `without: ${fmt(ra.rps, 0)} req/s; per-round ${ratios.map((x) => fmt(x, 3)).join(' ')}; scrape ${fmt(scrapeMs / Math.max(1, scrapes))} ms mean` });
    } finally {
      clearInterval(scraper);
    }
  } finally {
    await plain.stop();
    await measured.stop();
  }
}
