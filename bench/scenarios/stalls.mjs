// Stalls: wrk with 200 connections on floor (a), floor (b) and the gateway on SQLite; the gateway
// reports how long its event loop was held meanwhile.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openDb } from '../lib/db.mjs';
import { FLOOR_MERCHANT, floorFile } from '../lib/floors.mjs';
import { freshDatabase, runFile, startGw } from '../lib/gateways.mjs';
import { DURATION, FLOOR, HERE, log } from '../lib/options.mjs';
import { startChild } from '../lib/procs.mjs';
import { createBody } from '../lib/requests.mjs';
import { floorMean, row } from '../lib/results.mjs';
import { fmt } from '../lib/stats.mjs';

function wrkAvailable() {
  return spawnSync('wrk', ['--version'], { encoding: 'utf8' }).error === undefined;
}
function runWrk(url, bodiesFile, seconds) {
  const r = spawnSync(
    'wrk',
    [
      '-t2',
      '-c200',
      `-d${seconds}s`,
      '--timeout',
      '10s',
      '-s',
      join(HERE, 'wrk', 'create.lua'),
      url,
      '--',
      bodiesFile,
      '2',
    ],
    { encoding: 'utf8', maxBuffer: 10 << 20 },
  );
  const line = (r.stdout ?? '').split('\n').find((l) => l.startsWith('BENCHJSON '));
  if (!line) throw new Error(`wrk failed: ${r.stdout}${r.stderr}`);
  return JSON.parse(line.slice('BENCHJSON '.length));
}
function writeBodies(m, n) {
  const file = runFile('bodies', '.txt');
  const lines = [];
  for (let i = 0; i < n; i++) lines.push(JSON.stringify(createBody(m)));
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
}
export async function stallRuns() {
  if (!wrkAvailable()) {
    row({
      group: 'stalls',
      name: 'stalls (wrk)',
      engine: 'sqlite',
      note: 'wrk not installed (apt-get install -y wrk)',
      verdict: 'n/a',
    });
    return;
  }
  const seconds = Math.max(DURATION, 10);
  const n = Math.ceil(Math.max(floorMean('b') || 8000, 8000) * seconds * 1.5);
  const report = (name, w, ok) => {
    const over = w.over500;
    log(
      `wrk ${name}: ${fmt(w.requests / w.seconds, 0)} req/s, p50 ${fmt(w.p50)} p99 ${fmt(w.p99)} p99.9 ${fmt(w.p999)} p99.99 ${fmt(w.p9999)} max ${fmt(w.max)} ms; errors ${JSON.stringify(w.errors)}${ok !== undefined ? `; ${ok} rows written` : ''}`,
    );
    return {
      rps: w.requests / w.seconds,
      p50: w.p50,
      p99: w.p99,
      max: w.max,
      ok: ok ?? w.requests,
      bad: ok !== undefined ? w.requests - ok : 0,
      errors: w.errors.timeout + w.errors.connect + w.errors.read + w.errors.write,
      note: `p99.9 ${fmt(w.p999)} ms, p99.99 ${fmt(w.p9999)} ms` + (over === undefined ? '' : `, ${over} > 500 ms`),
    };
  };
  // Floor (a) has no database and nothing else that can block its event loop: whatever tail it shows
  // is this machine's and the generator's at 200 connections, not a stall of the server.
  let floorAMax;
  {
    const srv = await startChild(FLOOR, { mode: 'a', key: FLOOR_MERCHANT.api_key });
    const w = runWrk(srv.url, writeBodies(FLOOR_MERCHANT, n), seconds);
    await srv.stop();
    floorAMax = w.max;
    row({ group: 'stalls', name: 'floor (a) create, wrk 200 conns', engine: '-', ...report('floor a', w) });
  }
  {
    const srv = await startChild(FLOOR, { mode: 'b', key: FLOOR_MERCHANT.api_key, sqliteFile: floorFile('stall') });
    const file = writeBodies(FLOOR_MERCHANT, n);
    const w = runWrk(srv.url, file, seconds);
    await srv.stop();
    row({ group: 'stalls', name: 'floor (b) create, wrk 200 conns', engine: 'sqlite', ...report('floor b', w) });
  }
  {
    const database = await freshDatabase('sqlite');
    const gw = await startGw(database);
    const file = writeBodies(gw.merchant, n);
    runWrk(gw.url, writeBodies(gw.merchant, Math.ceil(n / 5)), 2); // warm-up
    await gw.ask({ type: 'eventloop' });
    const w = runWrk(gw.url, file, seconds);
    const loop = await gw.ask({ type: 'eventloop' });
    await gw.stop();
    const db = await openDb('sqlite', database);
    const written = await db.countTransactions();
    await db.close();
    const r = report('gateway sqlite', w, undefined);
    // A stall is the server's when its event loop was blocked; a tail no longer than floor (a)'s is the machine's.
    const pass = w.max < 500 || (w.max <= floorAMax && loop.maxMs < 100);
    row({
      group: 'stalls',
      name: 'create (hosted), wrk 200 conns',
      engine: 'sqlite',
      ...r,
      note: `${r.note}; event loop blocked at most ${fmt(loop.maxMs)} ms; ${written} transactions in the db`,
      target: 'max < 500 ms, or <= floor (a) max with the event loop never blocked 100 ms',
      verdict: pass ? 'PASS' : 'FAIL',
    });
  }
}
