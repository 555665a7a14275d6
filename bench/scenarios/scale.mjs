// Query latency against table size: 10,000 against SCALE_ROWS transactions (--scale-rows).
import { randomInt } from 'node:crypto';
import { bulkLoad } from '../lib/db.mjs';
import { freshDatabase, startGw } from '../lib/gateways.mjs';
import { runLoad } from '../lib/load.mjs';
import { CONNECTIONS, DURATION, ROUNDS, SCALE_ROWS, WARMUP, loadavg, log } from '../lib/options.mjs';
import { queryPath } from '../lib/requests.mjs';
import { median, mergeRuns, pick, row } from '../lib/results.mjs';
import { fmt, summarize } from '../lib/stats.mjs';

// Two databases, one with 10,000 and one with SCALE_ROWS transactions (bulk-loaded with SQL while
// their gateway is stopped), each served by its own gateway; queries of random existing references
// alternate between the two in slices (S L, L S, S L, ...), so both sizes see the same machine.
export async function scaleRuns(engine) {
  const sizes = [10_000, SCALE_ROWS];
  const sides = [];
  let m;
  try {
    for (const size of sizes) {
      const database = await freshDatabase(engine);
      const gw0 = await startGw(database, { merchant: m });
      m ??= gw0.merchant;
      await gw0.stop();
      await bulkLoad(engine, database, m, size, log);
      const gw = await startGw(database, { merchant: m });
      const paths = Array.from({ length: 20_000 }, () => queryPath(m, `scale-${1 + randomInt(size)}`));
      let i = 0;
      sides.push({
        size,
        gw,
        opts: { url: gw.url, next: () => ({ method: 'GET', path: paths[i++ % paths.length] }) },
        runs: [],
      });
    }
    if (WARMUP > 0)
      for (const side of sides) await runLoad({ connections: CONNECTIONS, ...side.opts, duration: WARMUP });
    // Twice as many (shorter) rounds as elsewhere: the verdict is the median of per-round ratios,
    // which a single noisy slice on this shared machine cannot move.
    const rounds = 2 * ROUNDS;
    // Alternating order (S L, L S, S L, ...), so a machine that speeds up or slows down during the
    // run does not favour the side that always goes first.
    for (let round = 0; round < rounds; round++) {
      for (const side of round % 2 ? [...sides].reverse() : sides)
        side.runs.push(await runLoad({ connections: CONNECTIONS, ...side.opts, duration: DURATION / rounds }));
    }
    const [small, big] = sides.map((side) => ({ ...side, r: mergeRuns(side.runs) }));
    for (const side of [small, big]) {
      log(
        `${engine} query @ ${side.size} rows: ${fmt(side.r.rps, 0)} req/s ok, p50 ${fmt(side.r.p50)} ms, p99 ${fmt(side.r.p99)} ms, mean ${fmt(side.r.mean)} ms, bad ${side.r.bad}; loadavg ${loadavg()}`,
      );
      row({
        group: 'scale',
        name: `query @ ${side.size.toLocaleString('en')} rows`,
        engine,
        ...pick(side.r),
        note: `mean ${fmt(side.r.mean, 2)} ms; slices ${side.runs.map((x) => fmt(x.rps, 0)).join(' ')} req/s`,
      });
    }
    const perRound = small.runs.map((x, k) => big.runs[k].mean / x.mean);
    // Each slice's p50 from its own latency samples: autocannon's percentiles are whole
    // milliseconds, and at a p50 of 2-3 ms one step would read x1.5.
    const p50Of = (x) => summarize([...x.latencies].sort((a, b) => a - b)).p50;
    const perRoundP50 = small.runs.map((x, k) => p50Of(big.runs[k]) / p50Of(x));
    const p50r = median(perRoundP50);
    const meanr = median(perRound);
    const p99r = big.r.p99 / small.r.p99;
    row({
      group: 'scale',
      name: `query latency ${sizes[1].toLocaleString('en')} vs 10,000 rows`,
      engine,
      note: `medians of ${rounds} rounds: p50 x${fmt(p50r, 2)} (${perRoundP50.map((x) => fmt(x, 2)).join(' ')}), mean x${fmt(meanr, 2)} (${perRound.map((x) => fmt(x, 2)).join(' ')}); merged: p50 x${fmt(big.r.p50 / small.r.p50, 2)}, p99 x${fmt(p99r, 2)}, req/s x${fmt(big.r.rps / small.r.rps, 2)}`,
      target: 'within 20 % (p50, mean)',
      verdict: p50r <= 1.2 && meanr <= 1.2 ? 'PASS' : 'FAIL',
    });
  } finally {
    for (const side of sides) await side.gw.stop();
  }
}
