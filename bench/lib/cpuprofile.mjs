// Summarises a V8 .cpuprofile (node --cpu-prof): self time by function and by area, and
// inclusive ("total") time of functions, each as a share of all sampled time.
import { readFileSync } from 'node:fs';

/** Which part of the stack a frame belongs to, from its script URL. */
export function areaOf(frame) {
  const { url, functionName } = frame;
  if (!url) {
    if (/^\((garbage collector|idle|program|root)\)$/.test(functionName)) return functionName;
    return '(native)';
  }
  const nm = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/);
  if (nm) return nm[1];
  if (url.startsWith('node:')) return url.replace(/^node:(internal\/)?/, 'node:').replace(/\/.*$/, '');
  const src = url.match(/\/dist\/(src|sdk)\/(.*)\.js$/);
  if (src) return `gateway:${src[2]}`;
  return url.replace(/^file:\/\//, '');
}

export function summarizeProfile(file) {
  const p = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const selfUs = new Map();
  let total = 0;
  for (let i = 0; i < p.samples.length; i++) {
    const dt = p.timeDeltas[i] ?? 0;
    selfUs.set(p.samples[i], (selfUs.get(p.samples[i]) ?? 0) + dt);
    total += dt;
  }
  const key = (f) => `${f.functionName || '(anonymous)'} ${areaOf(f)}:${f.lineNumber + 1}`;
  const self = new Map();
  const area = new Map();
  const inclusive = new Map();
  const inclusiveArea = new Map();
  for (const [id, us] of selfUs) {
    const f = byId.get(id).callFrame;
    self.set(key(f), (self.get(key(f)) ?? 0) + us);
    area.set(areaOf(f), (area.get(areaOf(f)) ?? 0) + us);
    // Inclusive: every distinct function / area on the stack of this sample.
    const seen = new Set();
    const seenArea = new Set();
    for (let n = id; n !== undefined; n = parent.get(n)) {
      const fr = byId.get(n).callFrame;
      const k = key(fr);
      if (!seen.has(k)) { seen.add(k); inclusive.set(k, (inclusive.get(k) ?? 0) + us); }
      const a = areaOf(fr);
      if (!seenArea.has(a)) { seenArea.add(a); inclusiveArea.set(a, (inclusiveArea.get(a) ?? 0) + us); }
    }
  }
  const idle = area.get('(idle)') ?? 0;
  const top = (m, n) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, us]) => ({ name: k, ms: us / 1000, pct: (100 * us) / total, pctBusy: (100 * us) / (total - idle) }));
  return {
    file,
    totalMs: total / 1000,
    busyMs: (total - idle) / 1000,
    self: top(self, 40),
    areas: top(area, 30),
    inclusive: top(inclusive, 60).filter((e) => !/^\((root|program)\)/.test(e.name)),
    inclusiveAreas: top(inclusiveArea, 30),
  };
}

export function formatProfileSummary(s, title) {
  const f = (e) => `${e.pctBusy.toFixed(1).padStart(5)}%  ${e.ms.toFixed(0).padStart(7)} ms  ${e.name}`;
  return [
    `== CPU profile: ${title} (${s.file})`,
    `sampled ${(s.totalMs / 1000).toFixed(1)} s, busy (not idle) ${(s.busyMs / 1000).toFixed(1)} s; percentages are of busy time`,
    '-- self time by area', ...s.areas.map(f),
    '-- inclusive time by area (area anywhere on the stack)', ...s.inclusiveAreas.slice(0, 20).map(f),
    '-- self time by function', ...s.self.slice(0, 30).map(f),
    '-- inclusive time by function', ...s.inclusive.slice(0, 45).map(f),
    '',
  ].join('\n');
}

// `node bench/lib/cpuprofile.mjs FILE.cpuprofile` prints a summary.
if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(formatProfileSummary(summarizeProfile(process.argv[2]), process.argv[2]));
}
