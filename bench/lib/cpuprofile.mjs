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
  // Start-up (loading modules, migrations) is not what we profile: count from the first sample
  // taken inside an HTTP request (node's parserOnIncoming on the stack).
  const inRequest = new Map();
  const isRequest = (id) => {
    if (inRequest.has(id)) return inRequest.get(id);
    const n = byId.get(id);
    const v = n.callFrame.functionName === 'parserOnIncoming' || (parent.has(id) && isRequest(parent.get(id)));
    inRequest.set(id, v);
    return v;
  };
  let first = p.samples.findIndex((id) => isRequest(id));
  if (first < 0) first = 0;
  const skippedMs = p.timeDeltas.slice(0, first).reduce((a, b) => a + b, 0) / 1000;
  const selfUs = new Map();
  let total = 0;
  for (let i = first; i < p.samples.length; i++) {
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
      if (!seen.has(k)) {
        seen.add(k);
        inclusive.set(k, (inclusive.get(k) ?? 0) + us);
      }
      const a = areaOf(fr);
      if (!seenArea.has(a)) {
        seenArea.add(a);
        inclusiveArea.set(a, (inclusiveArea.get(a) ?? 0) + us);
      }
    }
  }
  const idle = area.get('(idle)') ?? 0;
  const top = (m, n) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, us]) => ({ name: k, ms: us / 1000, pct: (100 * us) / total, pctBusy: (100 * us) / (total - idle) }));
  return {
    file,
    skippedMs,
    totalMs: total / 1000,
    busyMs: (total - idle) / 1000,
    self: top(self, 40),
    areas: top(area, 30),
    inclusive: top(inclusive, 60).filter((e) => !/^\((root|program)\)/.test(e.name)),
    inclusiveAreas: top(inclusiveArea, 30).filter((e) => e.name !== '(root)'),
    // Application and library frames only: where the request's time goes, without node internals.
    inclusiveApp: top(
      new Map([...inclusive].filter(([k]) => !/ (node:|\(native\)|\(root\)|\(program\)|\(idle\)|\(garbage)/.test(k))),
      50,
    ),
  };
}

export function formatProfileSummary(s, title) {
  const f = (e) => `${e.pctBusy.toFixed(1).padStart(5)}%  ${e.ms.toFixed(0).padStart(7)} ms  ${e.name}`;
  return [
    `== CPU profile: ${title} (${s.file})`,
    `sampled ${(s.totalMs / 1000).toFixed(1)} s from the first request on (start-up, ${(s.skippedMs / 1000).toFixed(1)} s, left out), busy (not idle) ${(s.busyMs / 1000).toFixed(1)} s; percentages are of busy time`,
    '-- self time by area',
    ...s.areas.map(f),
    '-- inclusive time by area (area anywhere on the stack)',
    ...s.inclusiveAreas.slice(0, 20).map(f),
    '-- self time by function',
    ...s.self.slice(0, 30).map(f),
    '-- inclusive time by function',
    ...s.inclusive.slice(0, 30).map(f),
    '-- inclusive time, gateway and library functions only',
    ...s.inclusiveApp.slice(0, 40).map(f),
    '',
  ].join('\n');
}

// `node bench/lib/cpuprofile.mjs FILE.cpuprofile` prints a summary.
if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(formatProfileSummary(summarizeProfile(process.argv[2]), process.argv[2]));
}
