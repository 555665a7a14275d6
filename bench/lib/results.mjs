// The rows of the run's table, their verdicts against the targets, and the table itself.
import { fmt, summarize } from './stats.mjs';

export const rows = [];
export const floorRuns = { a: [], b: [], 'b-full': [], c: [] };
export const extra = {};
export function row(r) {
  rows.push(r);
  return r;
}

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}
export function mergeRuns(runs) {
  const lat = runs.flatMap((x) => x.latencies).sort((a, b) => a - b);
  const ok = runs.reduce((s, x) => s + x.ok, 0);
  const seconds = runs.reduce((s, x) => s + x.seconds, 0);
  const badCodes = {};
  for (const x of runs) for (const [k, v] of Object.entries(x.badCodes)) badCodes[k] = (badCodes[k] ?? 0) + v;
  const st = summarize(lat);
  return {
    rps: ok / seconds,
    ok,
    bad: runs.reduce((s, x) => s + x.bad, 0),
    badCodes,
    errors: runs.reduce((s, x) => s + x.errors, 0),
    p50: st.p50,
    p99: st.p99,
    max: st.max,
    mean: lat.reduce((s, x) => s + x, 0) / (lat.length || 1),
    seconds,
  };
}

export function pick(r) {
  return { rps: r.rps, p50: r.p50, p99: r.p99, max: r.max, ok: r.ok, bad: r.bad, errors: r.errors };
}
export const floorMean = (mode) => {
  const runs = floorRuns[mode];
  return runs.length ? runs.reduce((s, r) => s + r.rps, 0) / runs.length : NaN;
};

function verdict(r) {
  if (r.verdict) return { verdict: r.verdict, target: r.target ?? (r.maxP99 ? `p99 < ${r.maxP99} ms` : '') };
  const parts = [];
  let pass = true;
  let any = false;
  if (r.floor) {
    if (!Number.isFinite(r.floorRps)) r.floorRps = floorMean(r.floor);
    if (!Number.isFinite(r.ratio)) r.ratio = r.rps / r.floorRps;
    if (r.minRatio !== undefined) {
      any = true;
      parts.push(`>= ${r.minRatio} x floor ${r.floor}`);
      if (!(r.ratio >= r.minRatio)) pass = false;
    }
  }
  if (r.maxP50 !== undefined) {
    any = true;
    parts.push(`p50 < ${r.maxP50} ms`);
    if (!(r.p50 < r.maxP50)) pass = false;
  }
  if (r.maxP99 !== undefined) {
    any = true;
    parts.push(`p99 < ${r.maxP99} ms`);
    if (!(r.p99 < r.maxP99)) pass = false;
  }
  if (r.maxRss !== undefined) {
    any = true;
    parts.push(`RSS < ${r.maxRss} MB`);
    if (!(r.rssMB < r.maxRss)) pass = false;
  }
  if (r.maxWake !== undefined) {
    any = true;
    parts.push(`woken < ${r.maxWake} ms`);
    if (!(r.wakeMs < r.maxWake)) pass = false;
  }
  // A wake time counts only if every poll was answered with the settled order.
  if (r.group === 'longpoll' && r.bad > 0) pass = false;
  if (r.maxMax !== undefined) {
    any = true;
    parts.push(`max < ${r.maxMax} ms`);
    if (!(r.max < r.maxMax)) pass = false;
  }
  return { verdict: any ? (pass ? 'PASS' : 'FAIL') : '', target: parts.join(', ') };
}

export function printTable() {
  const floorRows = [];
  for (const [mode, runs] of Object.entries(floorRuns)) {
    if (!runs.length) continue;
    const rpss = runs.map((r) => r.rps);
    const avg = (k) => runs.reduce((s, r) => s + r[k], 0) / runs.length;
    const what = {
      a: 'JSON+schema+HMAC',
      b: '+ SQLite insert, NORMAL',
      'b-full': '+ SQLite insert, FULL',
      c: '+ PG insert, pool 10',
    }[mode];
    floorRows.push({
      group: 'floor',
      name: `floor (${mode}) ${what}`,
      engine: mode === 'c' ? 'postgres' : mode === 'a' ? '-' : 'sqlite',
      rps: avg('rps'),
      p50: avg('p50'),
      p99: avg('p99'),
      max: Math.max(...runs.map((r) => r.max)),
      ok: runs.reduce((s, r) => s + r.ok, 0),
      bad: runs.reduce((s, r) => s + r.bad, 0),
      note: `${runs.length} samples: ${rpss.map((x) => fmt(x, 0)).join(', ')} req/s`,
    });
  }
  rows.unshift(...floorRows);
  const head = [
    'scenario',
    'engine',
    'req/s',
    'p50 ms',
    'p99 ms',
    'max ms',
    'ok/bad',
    'x floor',
    'target',
    'result',
    'notes',
  ];
  const lines = rows.map((r) => {
    const v = verdict(r);
    r.verdict = v.verdict;
    r.target = v.target;
    const ratio =
      r.ratio !== undefined && Number.isFinite(r.ratio) ? `${fmt(r.ratio, 2)} of ${r.floor} ${fmt(r.floorRps, 0)}` : '';
    let rps = r.rps !== undefined ? fmt(r.rps, 0) : '';
    let p50 = fmt(r.p50);
    let p99 = fmt(r.p99);
    let max = fmt(r.max);
    if (r.group === 'longpoll') {
      rps = '';
      p50 = `RSS ${fmt(r.rssMB, 0)}MB`;
      p99 = `wake ${fmt(r.wakeMs, 0)}ms`;
      max = '';
    }
    return [
      r.name,
      r.engine,
      rps,
      p50,
      p99,
      max,
      r.ok !== undefined ? `${r.ok}/${r.bad ?? 0}${r.errors ? `+${r.errors}err` : ''}` : '',
      ratio,
      v.target,
      v.verdict,
      r.note ?? '',
    ];
  });
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => String(l[i]).length)));
  const line = (cells) =>
    cells.map((c, i) => (i >= 2 && i <= 7 ? String(c).padStart(widths[i]) : String(c).padEnd(widths[i]))).join(' | ');
  console.log('\n' + line(head));
  console.log(widths.map((w) => '-'.repeat(w)).join('-|-'));
  for (const l of lines) console.log(line(l));
  console.log(
    '\nx floor: create and query ran interleaved with their floor (F G F G F G F); their ratio is the median of the per-round ratios. Other rows: req/s over the mean of all samples of that floor.',
  );
}
