// The benchmark suite of issue 4: `npm run bench [-- --only create,query --duration 5 --engines sqlite]`.
//
// Every server under test runs in its own child process; the load generator (autocannon, or wrk
// for the stall test) runs beside it. This machine is shared and noisy, so every target is a
// ratio to a floor measured in the same run with the same generator and the same bodies:
//   (a) bare Fastify: JSON body + schema + one HMAC   (b) a + one SQLite insert (WAL, NORMAL)
//   (c) a + one PostgreSQL insert through a pg Pool of 10
// Floors are measured before and after the gateway runs; ratios use their mean.
// Nothing leaves 127.0.0.1: callback URLs point at a local receiver process.
import { spawnSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { signRequest } from '../dist/sdk/signing.js';
import { runLoad } from './lib/load.mjs';
import { startChild } from './lib/procs.mjs';
import { startPostgres } from './lib/postgres.mjs';
import { openDb } from './lib/db.mjs';
import { fmt, summarize } from './lib/stats.mjs';
import { summarizeProfile, formatProfileSummary } from './lib/cpuprofile.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, '..');
const GATEWAY = join(HERE, 'gateway-server.mjs');
const FLOOR = join(HERE, 'floors', 'floor-server.mjs');
const RECEIVER = join(HERE, 'receiver.mjs');
const POLL_CLIENT = join(HERE, 'poll-client.mjs');

const ALL = ['floors', 'create', 'create-mh', 'gatewaydata', 'query', 'refund', 'notify', 'longpoll', 'scale', 'stalls'];
const { values: args } = parseArgs({
  options: {
    only: { type: 'string' },
    engines: { type: 'string', default: 'sqlite,postgres' },
    duration: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '3' },
    'notify-rate': { type: 'string', default: '20' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '50' },
    longpolls: { type: 'string', default: '10000' },
    'scale-rows': { type: 'string', default: '1000000' },
    'log-level': { type: 'string', default: 'info' },
    'floors-once': { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
    out: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (args.help) {
  console.log(`npm run bench -- [--only ${ALL.join(',')},profile] [--engines sqlite,postgres] [--duration S] [--warmup S]
  [--connections N] [--rounds N] [--notify-rate PAYS_PER_S] [--longpolls N] [--scale-rows N] [--log-level info|silent] [--floors-once] [--profile] [--out FILE.json]`);
  process.exit(0);
}
const only = new Set((args.only ?? ALL.join(',')).split(',').map((s) => s.trim()).filter(Boolean));
if (args.profile) only.add('profile');
for (const s of only) if (![...ALL, 'profile'].includes(s)) throw new Error(`unknown scenario ${s}; known: ${ALL.join(', ')}, profile`);
const ENGINES = args.engines.split(',').map((s) => s.trim()).filter(Boolean);
const DURATION = Number(args.duration);
const WARMUP = Number(args.warmup);
const ROUNDS = Math.max(1, Number(args.rounds));
const NOTIFY_RATE = Number(args['notify-rate']);
const CONNECTIONS = Number(args.connections);
const LONGPOLLS = Number(args['longpolls']);
const SCALE_ROWS = Number(args['scale-rows']);
const LOG_LEVEL = args['log-level'];
const want = (s) => only.has(s);

const RUN = Date.now().toString(36);
const TMP = join(ROOT, '.tmp', 'bench', RUN);
mkdirSync(TMP, { recursive: true });
const now = () => performance.timeOrigin + performance.now();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const log = (...a) => console.log(`[${new Date().toISOString().slice(11, 19)}]`, ...a);

// ---------------------------------------------------------------- request builders
let refSeq = 0;
const JSON_HEADERS = { 'content-type': 'application/json;charset=UTF-8' };
let callbackUrl = 'http://127.0.0.1:9/notify';

function createBody(m, { mh = false } = {}) {
  const b = {
    user_id: m.user_id,
    wallet_id: m.wallet_id,
    payment_method: 'alipay',
    amount: '120.00',
    return_url: 'http://127.0.0.1:9/return',
    callback_url: callbackUrl,
    merchant_reference: `b${RUN}-${++refSeq}`,
    ip: '122.122.122.1',
    version: '2.0',
    product_name: 'Pinot Noir, Otago',
  };
  if (mh) b.host_type = '1';
  b.signature = signRequest(b, m.api_key);
  return b;
}
const createReq = (m, opts) => () => {
  const b = createBody(m, opts);
  return { method: 'POST', path: '/v2/transaction', headers: JSON_HEADERS, body: JSON.stringify(b), tag: b.merchant_reference };
};
function queryPath(m, ref, block = false) {
  const p = { merchant_reference: ref, user_id: m.user_id };
  if (block) p.is_block = '1';
  const qs = new URLSearchParams({ user_id: m.user_id, ...(block && { is_block: '1' }), signature: signRequest(p, m.api_key) });
  return `/v2/transaction/${encodeURIComponent(ref)}?${qs}`;
}

/** Warm-up, then the measured run. */
async function measure(label, opts) {
  if (WARMUP > 0 && !opts.amount) await runLoad({ connections: CONNECTIONS, ...opts, duration: WARMUP, onOk: opts.onOkWarmup ?? opts.onOk });
  const r = await runLoad({ connections: CONNECTIONS, duration: DURATION, ...opts });
  r.load = loadavg();
  log(`${label}: ${fmt(r.rps, 0)} req/s ok, p50 ${fmt(r.p50)} ms, p99 ${fmt(r.p99)} ms, max ${fmt(r.max)} ms, ok ${r.ok}, bad ${r.bad}${r.bad ? ' ' + JSON.stringify(r.badCodes) : ''}, errors ${r.errors}${r.exhausted ? ' (supply used up)' : ''}; loadavg ${r.load}`);
  return r;
}

/** Creates `count` orders as fast as the server takes them; returns their references (and nonces). */
async function preCreate(url, m, count, { mh = false } = {}) {
  const refs = [];
  const nonces = [];
  await runLoad({ url, connections: Math.min(CONNECTIONS, count), amount: count, next: createReq(m, { mh }), onOk: (tag, body) => { refs.push(tag); if (mh) nonces.push(JSON.parse(body).nonce); } });
  return { refs, nonces };
}

/** POST /sandbox/pay/{order_id} result=paid for every order, `concurrency` at a time. */
async function payAll(url, orderIds, concurrency = 50, onPaid) {
  const pool = new Pool(url, { connections: concurrency });
  let i = 0;
  let failed = 0;
  const worker = async () => {
    while (i < orderIds.length) {
      const id = orderIds[i++];
      const t0 = now();
      const res = await pool.request({ method: 'POST', path: `/sandbox/pay/${id}`, headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, body: 'result=paid' });
      const text = await res.body.text();
      if (!text.includes('"code":0')) failed++;
      onPaid?.(id, t0, now());
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  await pool.close();
  return { failed };
}

// ---------------------------------------------------------------- results
const rows = [];
const floorRuns = { a: [], b: [], 'b-full': [], c: [] };
const extra = {};
function row(r) {
  rows.push(r);
  return r;
}

// ---------------------------------------------------------------- floors
const FLOOR_MERCHANT = { user_id: 'U000000001', wallet_id: 'W00000000000000001', api_key: 'A1B2C3D4E5F60718293A4B5C6D7E8F90' };
let pgServer;
let floorN = 0;
const floorServers = {};

/** Floor servers stay up (idle) for the whole run, so a floor can be sampled right beside each gateway run. */
async function floorServer(mode) {
  if (floorServers[mode]) return floorServers[mode];
  const cfg = { mode, key: FLOOR_MERCHANT.api_key };
  if (mode.startsWith('b')) cfg.sqliteFile = join(TMP, `floor-${mode}-${++floorN}.db`);
  if (mode === 'c') cfg.pgUrl = await pgServer.createDatabase('floor');
  floorServers[mode] = await startChild(FLOOR, cfg);
  return floorServers[mode];
}

async function measureFloor(mode, pass) {
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
async function paired(mode, label, opts) {
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
  log(`${label}: ${fmt(r.rps, 0)} req/s ok (floor ${mode} ${fmt(fm.rps, 0)}: ${f.map((x) => fmt(x.rps, 0)).join(' ')}), ratio per round ${ratios.map((x) => fmt(x, 2)).join(' ')} -> ${fmt(ratio, 2)}; p50 ${fmt(r.p50)} ms, p99 ${fmt(r.p99)} ms, max ${fmt(r.max)} ms, ok ${r.ok}, bad ${r.bad}${r.bad ? ' ' + JSON.stringify(r.badCodes) : ''}, errors ${r.errors}; loadavg ${loadavg()}`);
  return { r, floorRps: fm.rps, ratio, ratios };
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}
function mergeRuns(runs) {
  const lat = runs.flatMap((x) => x.latencies).sort((a, b) => a - b);
  const ok = runs.reduce((s, x) => s + x.ok, 0);
  const seconds = runs.reduce((s, x) => s + x.seconds, 0);
  const badCodes = {};
  for (const x of runs) for (const [k, v] of Object.entries(x.badCodes)) badCodes[k] = (badCodes[k] ?? 0) + v;
  const st = summarize(lat);
  return { rps: ok / seconds, ok, bad: runs.reduce((s, x) => s + x.bad, 0), badCodes, errors: runs.reduce((s, x) => s + x.errors, 0), p50: st.p50, p99: st.p99, max: st.max, mean: lat.reduce((s, x) => s + x, 0) / (lat.length || 1), seconds };
}
const loadavg = () => (spawnSync('cat', ['/proc/loadavg'], { encoding: 'utf8' }).stdout ?? '').split(' ').slice(0, 3).join(' ');

function pick(r) {
  return { rps: r.rps, p50: r.p50, p99: r.p99, max: r.max, ok: r.ok, bad: r.bad, errors: r.errors };
}
const floorMean = (mode) => {
  const runs = floorRuns[mode];
  return runs.length ? runs.reduce((s, r) => s + r.rps, 0) / runs.length : NaN;
};
function neededFloors() {
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

// ---------------------------------------------------------------- the gateway
let dbN = 0;
let gwN = 0;
async function freshDatabase(engine) {
  return engine === 'sqlite' ? join(TMP, `gateway-${++dbN}.db`) : pgServer.createDatabase('gateway');
}
async function startGw(database, { merchant, execArgv, sqliteSynchronous } = {}) {
  // The request log is written as in production, to /dev/null (BENCH_GATEWAY_LOG=1 keeps it in the run folder).
  const logFile = process.env.BENCH_GATEWAY_LOG ? join(TMP, `gateway-${++gwN}.log`) : '/dev/null';
  // BENCH_GATEWAY_NODE_ARGS: node flags for the gateway, e.g. --trace-gc (which NODE_OPTIONS refuses).
  const extra = (process.env.BENCH_GATEWAY_NODE_ARGS ?? '').split(' ').filter(Boolean);
  return startChild(GATEWAY, { database, logLevel: LOG_LEVEL, merchant, sqliteSynchronous }, { execArgv: [...(execArgv ?? []), ...extra], logFile });
}

async function pendingHostedOrders(db, m) {
  return db.all(`SELECT order_id, merchant_reference FROM transactions WHERE user_id = $1 AND status = 'pending' AND host_type = 0 ORDER BY order_id`, [m.user_id]);
}

async function engineRuns(engine, receiver) {
  const database = await freshDatabase(engine);
  const gw = await startGw(database);
  const m = gw.merchant;
  const db = await openDb(engine, database);
  const floorFor = engine === 'sqlite' ? 'b' : 'c';
  const created = [];
  const nonces = [];
  try {
    if (want('create')) {
      const { r, floorRps, ratio, ratios } = await paired(floorFor, `${engine} create hosted`, { url: gw.url, next: createReq(m), onOk: (tag) => created.push(tag) });
      row({ group: 'create', name: engine === 'sqlite' ? 'create (hosted), durable' : 'create (hosted)', engine, ...pick(r), floor: floorFor, floorRps, ratio, note: `per-round ratios ${ratios?.map((x) => fmt(x, 2)).join(' ')}`, minRatio: engine === 'sqlite' ? 0.7 : 0.8, maxP99: engine === 'sqlite' ? 25 : undefined });
    }
    if (want('create') && engine === 'sqlite') {
      // The issue's first create target compares like with like: the floor's insert is synchronous=NORMAL,
      // and so is this gateway (SQLITE_SYNCHRONOUS=normal, no flush before the answer).
      const normal = await startGw(await freshDatabase(engine), { merchant: m, sqliteSynchronous: 'normal' });
      try {
        const { r, floorRps, ratio, ratios } = await paired(floorFor, `${engine} create hosted, synchronous=NORMAL`, { url: normal.url, next: createReq(m) });
        row({ group: 'create', name: 'create (hosted), synchronous=NORMAL', engine, ...pick(r), floor: floorFor, floorRps, ratio, note: `per-round ratios ${ratios?.map((x) => fmt(x, 2)).join(' ')}`, minRatio: 0.7, maxP99: 25 });
      } finally {
        await normal.stop();
      }
    }
    if (want('create-mh')) {
      const r = await measure(`${engine} create merchant-hosted`, { url: gw.url, next: createReq(m, { mh: true }), onOk: (_t, body) => nonces.push(JSON.parse(body).nonce) });
      row({ group: 'create', name: 'create (merchant-hosted)', engine, ...pick(r), floor: floorFor });
    }
    if (want('gatewaydata')) {
      const need = Math.ceil((DURATION + WARMUP) * 1200);
      if (nonces.length < need) {
        log(`${engine}: pre-creating ${need - nonces.length} merchant-hosted orders for gateway data`);
        nonces.push(...(await preCreate(gw.url, m, need - nonces.length, { mh: true })).nonces);
      }
      const next = () => {
        const n = nonces.pop();
        return n ? { method: 'GET', path: `/v2/merchanthosted/gatewaydata/${n}` } : null;
      };
      const r = await measure(`${engine} gateway data`, { url: gw.url, next });
      row({ group: 'read', name: 'gateway data (QR)', engine, ...pick(r), floor: 'a', note: r.exhausted ? 'ran out of nonces' : undefined });
    }
    if (want('query') || want('refund') || want('notify')) {
      if (created.length < 5000) {
        log(`${engine}: pre-creating ${5000 - created.length} hosted orders`);
        created.push(...(await preCreate(gw.url, m, 5000 - created.length)).refs);
      }
    }
    if (want('query')) {
      const paths = Array.from({ length: 20_000 }, () => queryPath(m, created[randomInt(created.length)]));
      let i = 0;
      const { r, floorRps, ratio, ratios } = await paired('a', `${engine} query`, { url: gw.url, next: () => ({ method: 'GET', path: paths[i++ % paths.length] }) });
      row({ group: 'read', name: 'query', engine, ...pick(r), floor: 'a', floorRps, ratio, note: `per-round ratios ${ratios?.map((x) => fmt(x, 2)).join(' ')}`, minRatio: 0.6 });
    }
    if (want('refund')) {
      const pending = await pendingHostedOrders(db, m);
      const paid = pending.splice(0, 1000).map((o) => o.order_id);
      log(`${engine}: paying ${paid.length} orders for refunds`);
      await payAll(gw.url, paid);
      let k = 0;
      const next = () => {
        const b = { user_id: m.user_id, order_id: paid[k % paid.length], refund_amount: '0.01', reference: `r${RUN}-${++k}` };
        b.signature = signRequest(b, m.api_key);
        return { method: 'POST', path: '/refund', headers: JSON_HEADERS, body: JSON.stringify(b) };
      };
      const r = await measure(`${engine} refund`, { url: gw.url, next });
      row({ group: 'write', name: 'refund', engine, ...pick(r), floor: floorFor });
    }
  } finally {
    await gw.stop();
    await db.close();
  }
}

// ---------------------------------------------------------------- notification latency under load
// On a database of its own: a backlog of notifications from other scenarios (the refund set-up pays
// 1,000 orders) would otherwise be delivered first.
async function notifyRuns(engine, receiver) {
  const database = await freshDatabase(engine);
  const gw = await startGw(database);
  const m = gw.merchant;
  const db = await openDb(engine, database);
  try {
    const rate = NOTIFY_RATE;
    const count = Math.max(20, Math.round(rate * DURATION));
    const { refs } = await preCreate(gw.url, m, count + 1000);
    const ids = await db.orderIds(m.user_id, refs);
    const orders = refs.map((ref) => ({ merchant_reference: ref, order_id: ids.get(ref) }));
    await notifyLatency(engine, gw, m, orders.slice(0, count), receiver, rate);
    await notifyDrain(engine, gw, orders.slice(count), receiver);
  } finally {
    await gw.stop();
    await db.close();
  }
}

/** How fast a backlog is delivered: pay 1,000 orders at once (no other load), time until the last `sent`. */
async function notifyDrain(engine, gw, orders, receiver) {
  await receiver.ask({ type: 'dump', reset: true });
  const wanted = new Set(orders.map((o) => o.merchant_reference));
  const t0 = now();
  await payAll(gw.url, orders.map((o) => o.order_id), 50);
  const paidMs = now() - t0;
  const deadline = now() + 60_000;
  let got = new Map();
  for (;;) {
    const recs = (await receiver.ask({ type: 'dump', reset: false })).records;
    got = new Map(recs.filter((r) => wanted.has(r.ref)).map((r) => [r.ref, r.t]));
    if (got.size >= wanted.size || now() > deadline) break;
    await sleep(200);
  }
  const lastT = Math.max(...got.values());
  const ms = lastT - t0;
  log(`${engine} notification backlog: ${got.size}/${orders.length} delivered, last ${fmt(ms, 0)} ms after the first pay (pays took ${fmt(paidMs, 0)} ms): ${fmt(got.size / (ms / 1000), 0)} notifications/s`);
  row({ group: 'notify', name: `notification backlog of ${orders.length} (delivery rate)`, engine, rps: got.size / (ms / 1000), ok: got.size, bad: orders.length - got.size,
    note: `req/s = notifications delivered per second; last delivered ${fmt(ms, 0)} ms after the first of ${orders.length} pays (pays took ${fmt(paidMs, 0)} ms)` });
}

async function notifyLatency(engine, gw, m, orders, receiver, rate) {
  await receiver.ask({ type: 'dump', reset: true });
  const sentAt = new Map();
  const paidAt = new Map();
  const pool = new Pool(gw.url, { connections: 10 });
  const load = runLoad({ url: gw.url, connections: CONNECTIONS, duration: DURATION + 1, next: createReq(m) });
  await sleep(500);
  const pays = [];
  const start = now();
  for (let i = 0; i < orders.length; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - now();
    if (wait > 0) await sleep(wait);
    const o = orders[i];
    sentAt.set(o.merchant_reference, now());
    pays.push(pool.request({ method: 'POST', path: `/sandbox/pay/${o.order_id}`, headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, body: 'result=paid' })
      .then((res) => res.body.text()).then(() => paidAt.set(o.merchant_reference, now())));
  }
  await Promise.all(pays);
  const lr = await load;
  log(`${engine} create under notification load: ${fmt(lr.rps, 0)} req/s, p99 ${fmt(lr.p99)} ms`);
  let records = [];
  const deadline = now() + 15_000;
  const wanted = new Set(orders.map((o) => o.merchant_reference));
  for (;;) {
    records = (await receiver.ask({ type: 'dump', reset: false })).records.filter((r) => wanted.has(r.ref));
    if (new Set(records.map((r) => r.ref)).size >= wanted.size || now() > deadline) break;
    await sleep(250);
  }
  await pool.close();
  const first = new Map();
  for (const r of records) if (!first.has(r.ref)) first.set(r.ref, r.t);
  const fromSend = [...first].map(([ref, t]) => t - sentAt.get(ref));
  const fromPaid = [...first].filter(([ref]) => paidAt.has(ref)).map(([ref, t]) => t - paidAt.get(ref));
  const s = summarize(fromSend);
  const sp = summarize(fromPaid);
  const workerPresent = existsSync(join(ROOT, 'dist', 'src', 'notify')) && readdirSync(join(ROOT, 'dist', 'src', 'notify')).length > 0;
  const available = first.size > 0;
  log(`${engine} notifications: ${first.size}/${orders.length} delivered (${records.length} deliveries)` + (available ? `, from pay request p50 ${fmt(s.p50)} ms p99 ${fmt(s.p99)} ms max ${fmt(s.max)} ms; from pay response p50 ${fmt(sp.p50)} p99 ${fmt(sp.p99)}` : ` — not available${workerPresent ? '' : ' (no notification worker in dist/src/notify)'}`));
  row({
    group: 'notify', name: `notification latency (${rate}/s pays under create load)`, engine,
    p50: available ? s.p50 : undefined, p99: available ? s.p99 : undefined, max: available ? s.max : undefined,
    ok: first.size, bad: orders.length - first.size, rps: lr.rps,
    note: available ? `${first.size}/${orders.length} delivered, ${records.length - first.size} duplicate deliveries; req/s = creates alongside` : `not available${workerPresent ? ' (worker present, nothing delivered in 15 s)' : ' (no notification worker yet)'}`,
    maxP99: 1000, verdict: available ? undefined : 'n/a',
  });
  if (available && first.size < orders.length) rows.at(-1).verdict = 'FAIL';
}

// ---------------------------------------------------------------- long polls
async function longPollRuns(engine) {
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
        // paid orders and answered woken polls before, as a gateway holding 10,000 polls has. A
        // process's first 100 pays cost it 2.4-4.4 ms of CPU each against 0.8-1.1 ms afterwards
        // (code not yet compiled); the wake took 937-1,169 ms cold and 639-833 ms after a warm-up
        // in three alternating pairs (performance.md).
        await longPoll(gw, m, await ordersOf(100), 10);
        await sleep(1000);
      }
      await sleep(500);
      const r = await longPoll(gw, m, orders, v.per);
      const label = `${v.orders * v.per} long polls (${v.orders} orders x ${v.per})`;
      log(`${engine} ${label}: held ${r.held}, RSS before ${fmt(r.rssBefore)} MB, with polls ${fmt(r.rssHeld)} MB (peak ${fmt(r.hwm)} MB); all woken ${fmt(r.wakeMs, 0)} ms after first settle (${fmt(r.afterLastPayMs, 0)} ms after the last settle answered); woke paid ${r.paid}/${r.total}, errors ${r.errors}`);
      row({
        group: 'longpoll', name: label, engine, rssMB: r.rssHeld, wakeMs: r.wakeMs, ok: r.paid, bad: r.total - r.paid,
        note: `RSS ${fmt(r.rssBefore, 0)} MB idle -> ${fmt(r.rssHeld, 0)} MB held (anonymous ${fmt(r.anonHeld, 0)} MB, file-backed ${fmt(r.fileHeld, 0)} MB; JS heap ${fmt(r.heapUsedMB, 0)} MB, peak RSS ${fmt(r.hwm, 0)} MB); settle of all orders took ${fmt(r.settleMs, 0)} ms; last wake ${fmt(r.afterLastPayMs, 0)} ms after last settle reply`,
        // Waking 10,000 separate orders is bounded by how fast 10,000 settles go through, so the
        // 1 s wake target applies to the variant with few orders and many polls each.
        maxRss: 250, maxWake: v.per > 1 ? 1000 : undefined,
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
    await payAll(gw.url, orders.map((o) => o.order_id), Math.min(100, orders.length), () => (lastPay = now()));
    const settleMs = now() - t0;
    const r = await client.ask({ type: 'wait', total, timeoutMs: 60_000 }, 70_000);
    if (r.errors) log(`${r.errors} long polls failed, the first: ${r.firstError}`);
    const MB = (b) => (b === undefined ? NaN : b / 1048576);
    return { total, held, rssBefore, rssHeld: mem.rssMB, anonHeld: mem.anonMB, fileHeld: mem.fileMB, heapUsedMB: MB(heap.heapUsed), externalMB: MB(heap.external), hwm: gw.memory().hwmMB, wakeMs: r.last - t0, settleMs, afterLastPayMs: r.last - lastPay, paid: r.paid, errors: r.errors };
  } finally {
    await client.stop();
  }
}

// ---------------------------------------------------------------- query latency vs table size
// Two databases, one with 10,000 and one with SCALE_ROWS transactions (bulk-loaded with SQL while
// their gateway is stopped), each served by its own gateway; queries of random existing references
// alternate between the two in slices (S L, L S, S L, ...), so both sizes see the same machine.
async function scaleRuns(engine) {
  const sizes = [10_000, SCALE_ROWS];
  const sides = [];
  let m;
  try {
    for (const size of sizes) {
      const database = await freshDatabase(engine);
      const gw0 = await startGw(database, { merchant: m });
      m ??= gw0.merchant;
      await gw0.stop();
      const db = await openDb(engine, database);
      const t0 = Date.now();
      for (let from = 1; from <= size; from += 100_000) await db.bulkInsertTransactions(m, from, Math.min(size, from + 99_999));
      await db.analyze();
      const n = await db.countTransactions();
      await db.close();
      log(`${engine}: ${n} transactions stored in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
      const gw = await startGw(database, { merchant: m });
      const paths = Array.from({ length: 20_000 }, () => queryPath(m, `scale-${1 + randomInt(size)}`));
      let i = 0;
      sides.push({ size, gw, opts: { url: gw.url, next: () => ({ method: 'GET', path: paths[i++ % paths.length] }) }, runs: [] });
    }
    if (WARMUP > 0) for (const side of sides) await runLoad({ connections: CONNECTIONS, ...side.opts, duration: WARMUP });
    // Twice as many (shorter) rounds as elsewhere: the verdict is the median of per-round ratios,
    // which a single noisy slice on this shared machine cannot move.
    const rounds = 2 * ROUNDS;
    // Alternating order (S L, L S, S L, ...), so a machine that speeds up or slows down during the
    // run does not favour the side that always goes first.
    for (let round = 0; round < rounds; round++) {
      for (const side of round % 2 ? [...sides].reverse() : sides) side.runs.push(await runLoad({ connections: CONNECTIONS, ...side.opts, duration: DURATION / rounds }));
    }
    const [small, big] = sides.map((side) => ({ ...side, r: mergeRuns(side.runs) }));
    for (const side of [small, big]) {
      log(`${engine} query @ ${side.size} rows: ${fmt(side.r.rps, 0)} req/s ok, p50 ${fmt(side.r.p50)} ms, p99 ${fmt(side.r.p99)} ms, mean ${fmt(side.r.mean)} ms, bad ${side.r.bad}; loadavg ${loadavg()}`);
      row({ group: 'scale', name: `query @ ${side.size.toLocaleString('en')} rows`, engine, ...pick(side.r), note: `mean ${fmt(side.r.mean, 2)} ms; slices ${side.runs.map((x) => fmt(x.rps, 0)).join(' ')} req/s` });
    }
    const perRound = small.runs.map((x, k) => big.runs[k].mean / x.mean);
    // Each slice's p50 from its own latency samples: autocannon's percentiles are whole
    // milliseconds, and at a p50 of 2-3 ms one step would read x1.5.
    const p50Of = (x) => summarize([...x.latencies].sort((a, b) => a - b)).p50;
    const perRoundP50 = small.runs.map((x, k) => p50Of(big.runs[k]) / p50Of(x));
    const p50r = median(perRoundP50);
    const meanr = median(perRound);
    const p99r = big.r.p99 / small.r.p99;
    row({ group: 'scale', name: `query latency ${sizes[1].toLocaleString('en')} vs 10,000 rows`, engine,
      note: `medians of ${rounds} rounds: p50 x${fmt(p50r, 2)} (${perRoundP50.map((x) => fmt(x, 2)).join(' ')}), mean x${fmt(meanr, 2)} (${perRound.map((x) => fmt(x, 2)).join(' ')}); merged: p50 x${fmt(big.r.p50 / small.r.p50, 2)}, p99 x${fmt(p99r, 2)}, req/s x${fmt(big.r.rps / small.r.rps, 2)}`,
      target: 'within 20 % (p50, mean)', verdict: p50r <= 1.2 && meanr <= 1.2 ? 'PASS' : 'FAIL' });
  } finally {
    for (const side of sides) await side.gw.stop();
  }
}

// ---------------------------------------------------------------- stalls (wrk, 200 connections)
function wrkAvailable() {
  return spawnSync('wrk', ['--version'], { encoding: 'utf8' }).error === undefined;
}
function runWrk(url, bodiesFile, seconds) {
  const r = spawnSync('wrk', ['-t2', '-c200', `-d${seconds}s`, '--timeout', '10s', '-s', join(HERE, 'wrk', 'create.lua'), url, '--', bodiesFile, '2'], { encoding: 'utf8', maxBuffer: 10 << 20 });
  const line = (r.stdout ?? '').split('\n').find((l) => l.startsWith('BENCHJSON '));
  if (!line) throw new Error(`wrk failed: ${r.stdout}${r.stderr}`);
  return JSON.parse(line.slice('BENCHJSON '.length));
}
function writeBodies(m, n) {
  const file = join(TMP, `bodies-${++dbN}.txt`);
  const lines = [];
  for (let i = 0; i < n; i++) lines.push(JSON.stringify(createBody(m)));
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
}
async function stallRuns() {
  if (!wrkAvailable()) {
    row({ group: 'stalls', name: 'stalls (wrk)', engine: 'sqlite', note: 'wrk not installed (apt-get install -y wrk)', verdict: 'n/a' });
    return;
  }
  const seconds = Math.max(DURATION, 10);
  const n = Math.ceil(Math.max(floorMean('b') || 8000, 8000) * seconds * 1.5);
  const report = (name, w, ok) => {
    const over = w.over500;
    log(`wrk ${name}: ${fmt(w.requests / w.seconds, 0)} req/s, p50 ${fmt(w.p50)} p99 ${fmt(w.p99)} p99.9 ${fmt(w.p999)} p99.99 ${fmt(w.p9999)} max ${fmt(w.max)} ms; errors ${JSON.stringify(w.errors)}${ok !== undefined ? `; ${ok} rows written` : ''}`);
    return { rps: w.requests / w.seconds, p50: w.p50, p99: w.p99, max: w.max, ok: ok ?? w.requests, bad: ok !== undefined ? w.requests - ok : 0, errors: w.errors.timeout + w.errors.connect + w.errors.read + w.errors.write, note: `p99.9 ${fmt(w.p999)} ms, p99.99 ${fmt(w.p9999)} ms` + (over === undefined ? '' : `, ${over} > 500 ms`) };
  };
  // Floor (a) has no database and nothing else that can block its event loop: whatever tail it shows
  // is this machine's and the generator's at 200 connections, not a stall of the server.
  let floorAMax = NaN;
  {
    const srv = await startChild(FLOOR, { mode: 'a', key: FLOOR_MERCHANT.api_key });
    const w = runWrk(srv.url, writeBodies(FLOOR_MERCHANT, n), seconds);
    await srv.stop();
    floorAMax = w.max;
    row({ group: 'stalls', name: 'floor (a) create, wrk 200 conns', engine: '-', ...report('floor a', w) });
  }
  {
    const srv = await startChild(FLOOR, { mode: 'b', key: FLOOR_MERCHANT.api_key, sqliteFile: join(TMP, `floor-stall-${++floorN}.db`) });
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
    row({ group: 'stalls', name: 'create (hosted), wrk 200 conns', engine: 'sqlite', ...r, note: `${r.note}; event loop blocked at most ${fmt(loop.maxMs)} ms; ${written} transactions in the db`,
      target: 'max < 500 ms, or <= floor (a) max with the event loop never blocked 100 ms', verdict: pass ? 'PASS' : 'FAIL' });
  }
}

// ---------------------------------------------------------------- profile (node --cpu-prof)
async function profileRuns(engine) {
  const database = await freshDatabase(engine);
  const dirs = { create: join(TMP, `profile-${engine}-create`), query: join(TMP, `profile-${engine}-query`), gatewaydata: join(TMP, `profile-${engine}-gatewaydata`) };
  let m;
  const refs = [];
  let nonces = [];
  {
    const gw = await startGw(database, { execArgv: ['--cpu-prof', `--cpu-prof-dir=${dirs.create}`] });
    m = gw.merchant;
    await measure(`${engine} create hosted (profiled)`, { url: gw.url, next: createReq(m), onOk: (tag) => refs.push(tag) });
    // Nonces for the gateway data profile (a few seconds of merchant-hosted creates in this profile too).
    nonces = (await preCreate(gw.url, m, Math.ceil((DURATION + WARMUP) * 400), { mh: true })).nonces;
    await gw.stop();
  }
  {
    const gw = await startGw(database, { merchant: m, execArgv: ['--cpu-prof', `--cpu-prof-dir=${dirs.query}`] });
    const paths = Array.from({ length: 20_000 }, () => queryPath(m, refs[randomInt(refs.length)]));
    let i = 0;
    await measure(`${engine} query (profiled)`, { url: gw.url, next: () => ({ method: 'GET', path: paths[i++ % paths.length] }) });
    await gw.stop();
  }
  {
    const gw = await startGw(database, { merchant: m, execArgv: ['--cpu-prof', `--cpu-prof-dir=${dirs.gatewaydata}`] });
    await measure(`${engine} gateway data (profiled)`, { url: gw.url, next: () => { const n = nonces.pop(); return n ? { path: `/v2/merchanthosted/gatewaydata/${n}` } : null; } });
    await gw.stop();
  }
  for (const [what, dir] of Object.entries(dirs)) {
    const file = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(dir, f))[0];
    if (!file) { log(`no profile written in ${dir}`); continue; }
    const summary = summarizeProfile(file);
    const text = formatProfileSummary(summary, `${engine} ${what}`);
    writeFileSync(join(dir, 'summary.txt'), text);
    extra[`profile_${engine}_${what}`] = { file, summary };
    console.log(text);
  }
}

// ---------------------------------------------------------------- table
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
  if (r.maxP99 !== undefined) { any = true; parts.push(`p99 < ${r.maxP99} ms`); if (!(r.p99 < r.maxP99)) pass = false; }
  if (r.maxRss !== undefined) { any = true; parts.push(`RSS < ${r.maxRss} MB`); if (!(r.rssMB < r.maxRss)) pass = false; }
  if (r.maxWake !== undefined) { any = true; parts.push(`woken < ${r.maxWake} ms`); if (!(r.wakeMs < r.maxWake)) pass = false; }
  // A wake time counts only if every poll was answered with the settled order.
  if (r.group === 'longpoll' && r.bad > 0) pass = false;
  if (r.maxMax !== undefined) { any = true; parts.push(`max < ${r.maxMax} ms`); if (!(r.max < r.maxMax)) pass = false; }
  return { verdict: any ? (pass ? 'PASS' : 'FAIL') : '', target: parts.join(', ') };
}

function printTable() {
  const floorRows = [];
  for (const [mode, runs] of Object.entries(floorRuns)) {
    if (!runs.length) continue;
    const rpss = runs.map((r) => r.rps);
    const avg = (k) => runs.reduce((s, r) => s + r[k], 0) / runs.length;
    const what = { a: 'JSON+schema+HMAC', b: '+ SQLite insert, NORMAL', 'b-full': '+ SQLite insert, FULL', c: '+ PG insert, pool 10' }[mode];
    floorRows.push({ group: 'floor', name: `floor (${mode}) ${what}`, engine: mode === 'c' ? 'postgres' : mode === 'a' ? '-' : 'sqlite', rps: avg('rps'), p50: avg('p50'), p99: avg('p99'), max: Math.max(...runs.map((r) => r.max)),
      ok: runs.reduce((s, r) => s + r.ok, 0), bad: runs.reduce((s, r) => s + r.bad, 0), note: `${runs.length} samples: ${rpss.map((x) => fmt(x, 0)).join(', ')} req/s` });
  }
  rows.unshift(...floorRows);
  const head = ['scenario', 'engine', 'req/s', 'p50 ms', 'p99 ms', 'max ms', 'ok/bad', 'x floor', 'target', 'result', 'notes'];
  const lines = rows.map((r) => {
    const v = verdict(r);
    r.verdict = v.verdict;
    r.target = v.target;
    const ratio = r.ratio !== undefined && Number.isFinite(r.ratio) ? `${fmt(r.ratio, 2)} of ${r.floor} ${fmt(r.floorRps, 0)}` : '';
    let rps = r.rps !== undefined ? fmt(r.rps, 0) : '';
    let p50 = fmt(r.p50);
    let p99 = fmt(r.p99);
    let max = fmt(r.max);
    if (r.group === 'longpoll') { rps = ''; p50 = `RSS ${fmt(r.rssMB, 0)}MB`; p99 = `wake ${fmt(r.wakeMs, 0)}ms`; max = ''; }
    return [r.name, r.engine, rps, p50, p99, max, r.ok !== undefined ? `${r.ok}/${r.bad ?? 0}${r.errors ? `+${r.errors}err` : ''}` : '', ratio, v.target, v.verdict, r.note ?? ''];
  });
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => String(l[i]).length)));
  const line = (cells) => cells.map((c, i) => (i >= 2 && i <= 7 ? String(c).padStart(widths[i]) : String(c).padEnd(widths[i]))).join(' | ');
  console.log('\n' + line(head));
  console.log(widths.map((w) => '-'.repeat(w)).join('-|-'));
  for (const l of lines) console.log(line(l));
  console.log('\nx floor: create and query ran interleaved with their floor (F G F G F G F); their ratio is the median of the per-round ratios. Other rows: req/s over the mean of all samples of that floor.');
}

// ---------------------------------------------------------------- main
function machine() {
  const cpu = cpus()[0]?.model ?? '?';
  return { nproc: cpus().length, cpu, node: process.version, load: (spawnSync('cat', ['/proc/loadavg'], { encoding: 'utf8' }).stdout ?? '').trim() };
}

async function main() {
  const info = machine();
  log(`bench run ${RUN}: ${info.nproc} cpus (${info.cpu}), node ${info.node}, loadavg ${info.load}`);
  log(`scenarios: ${[...only].join(', ')}; engines: ${ENGINES.join(', ')}; ${DURATION} s runs after ${WARMUP} s warm-up, ${CONNECTIONS} connections; gateway log level ${LOG_LEVEL}`);
  const needPg = ENGINES.includes('postgres') && (ALL.some((s) => s !== 'stalls' && want(s)) || want('profile'));
  if (needPg) {
    pgServer = await startPostgres();
    log(`PostgreSQL started (${pgServer.adminUrl})`);
  }
  const receiver = await startChild(RECEIVER, {});
  callbackUrl = `${receiver.url}/notify`;
  const floors = neededFloors();
  try {
    if (want('floors')) for (const f of floors) await measureFloor(f, 'start');
    for (const engine of ENGINES) {
      if (['create', 'create-mh', 'gatewaydata', 'query', 'refund'].some(want)) await engineRuns(engine, receiver);
      if (want('notify')) await notifyRuns(engine, receiver);
    if (want('longpoll')) await longPollRuns(engine);
    if (want('scale')) await scaleRuns(engine);
    }
    if (want('stalls') && ENGINES.includes('sqlite')) await stallRuns();
    if (want('profile')) for (const engine of ENGINES) await profileRuns(engine);
    // Floors named by a row but not sampled yet (e.g. only create-mh was asked for), and a second
    // sample of every floor at the end of a full run.
    for (const f of new Set(rows.map((r) => r.floor).filter(Boolean))) if (!floorRuns[f].length) await measureFloor(f, 'end');
    if (want('floors') && !args['floors-once']) for (const f of floors) await measureFloor(f, 'end');
  } finally {
    for (const srv of Object.values(floorServers)) await srv.stop();
    await receiver.stop();
    await pgServer?.stop();
  }
  printTable();
  const out = args.out ?? join(TMP, 'results.json');
  writeFileSync(out, JSON.stringify({ run: RUN, machine: info, args, rows, floors: Object.fromEntries(Object.entries(floorRuns).map(([k, v]) => [k, v.map(pick)])), extra: Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, { file: v.file }])) }, null, 2));
  log(`results: ${out}`);
  // Keep the run directory small: databases are big after the scale test.
  for (const f of readdirSync(TMP)) if (/\.db(-wal|-shm)?$/.test(f) || f.startsWith('bodies-')) rmSync(join(TMP, f), { force: true });
}

await main();
process.exit(0);
