// The floors (bench/floors/floor-server.mjs): what the gateway's rates are compared with, measured
// in the same run with the same generator and bodies, interleaved with the gateway where a target
// depends on them.
import { join } from 'node:path';
import { runLoad } from './load.mjs';
import { pgServer } from './gateways.mjs';
import { CONNECTIONS, DURATION, ENGINES, FLOOR, ROUNDS, TMP, WARMUP, loadavg, log, want } from './options.mjs';
import { createReq, measure } from './requests.mjs';
import { floorRuns, median, mergeRuns } from './results.mjs';
import { startChild } from './procs.mjs';
import { fmt } from './stats.mjs';

export const FLOOR_MERCHANT = {
  user_id: 'U000000001',
  wallet_id: 'W00000000000000001',
  api_key: 'A1B2C3D4E5F60718293A4B5C6D7E8F90',
};
let floorN = 0;
const floorServers = {};

/** A fresh SQLite file for a floor. */
export const floorFile = (name) => join(TMP, `floor-${name}-${++floorN}.db`);

/** Floor servers stay up (idle) for the whole run, so a floor can be sampled right beside each gateway run. */
export async function floorServer(mode) {
  if (floorServers[mode]) return floorServers[mode];
  const cfg = { mode, key: FLOOR_MERCHANT.api_key };
  if (mode.startsWith('b')) cfg.sqliteFile = floorFile(mode);
  if (mode === 'c') cfg.pgUrl = await pgServer.createDatabase('floor');
  floorServers[mode] = await startChild(FLOOR, cfg);
  return floorServers[mode];
}

export async function measureFloor(mode, pass) {
  const srv = await floorServer(mode);
  const r = await measure(`floor ${mode} (${pass})`, { url: srv.url, next: createReq(FLOOR_MERCHANT) });
  floorRuns[mode].push(r);
  return r;
}

/**
 * Measures a gateway scenario interleaved with its floor: F G F G F G F in slices of
 * DURATION / ROUNDS seconds (after one warm-up of each), so each gateway slice is compared with
 * the floor seconds before and after it; other work on this shared machine comes and goes.
 * The ratio is the median of the per-round ratios g_i / mean(f_i, f_i+1); latencies of all
 * gateway slices are merged.
 */
export async function paired(mode, label, opts) {
  if (!ENGINES.includes('postgres') && mode === 'c') return { r: await measure(label, opts), floorRps: NaN };
  const srv = await floorServer(mode);
  const floorOpts = { url: srv.url, next: createReq(FLOOR_MERCHANT) };
  const slice = DURATION / ROUNDS;
  if (WARMUP > 0) {
    await runLoad({ connections: CONNECTIONS, ...floorOpts, duration: WARMUP });
    await runLoad({ connections: CONNECTIONS, ...opts, duration: WARMUP });
  }
  const f = [];
  const g = [];
  const floorSlice = async () => {
    const r = await runLoad({ connections: CONNECTIONS, ...floorOpts, duration: slice });
    f.push(r);
    floorRuns[mode].push(r);
  };
  await floorSlice();
  for (let i = 0; i < ROUNDS; i++) {
    g.push(await runLoad({ connections: CONNECTIONS, ...opts, duration: slice }));
    await floorSlice();
  }
  const ratios = g.map((x, i) => x.rps / ((f[i].rps + f[i + 1].rps) / 2));
  const r = mergeRuns(g);
  const fm = mergeRuns(f);
  const ratio = median(ratios);
  log(
    `${label}: ${fmt(r.rps, 0)} req/s ok (floor ${mode} ${fmt(fm.rps, 0)}: ${f.map((x) => fmt(x.rps, 0)).join(' ')}), ratio per round ${ratios.map((x) => fmt(x, 2)).join(' ')} -> ${fmt(ratio, 2)}; p50 ${fmt(r.p50)} ms, p99 ${fmt(r.p99)} ms, max ${fmt(r.max)} ms, ok ${r.ok}, bad ${r.bad}${r.bad ? ' ' + JSON.stringify(r.badCodes) : ''}, errors ${r.errors}; loadavg ${loadavg()}`,
  );
  return { r, floorRps: fm.rps, ratio, ratios };
}

export function neededFloors() {
  const f = new Set();
  if (want('floors')) ['a', 'b', 'b-full', 'c'].forEach((m) => f.add(m));
  if (['create', 'create-mh', 'refund', 'notify'].some(want)) {
    if (ENGINES.includes('sqlite')) f.add('b');
    if (ENGINES.includes('postgres')) f.add('c');
  }
  if (['query', 'gatewaydata'].some(want)) f.add('a');
  if (!ENGINES.includes('postgres')) f.delete('c');
  return ['a', 'b', 'b-full', 'c'].filter((m) => f.has(m));
}

export async function stopFloors() {
  for (const srv of Object.values(floorServers)) await srv.stop();
}
