// Interleaved A/B of two built trees of the gateway under the same load, for changes too small to
// see across separate bench runs on a shared machine (load drifts more between runs than the
// change moves). Both gateways run at once, each in its own process on its own database; only one
// is under load at a time, in alternating order (A B, B A, A B, ...), and the verdict is the median
// of the per-round ratios B/A. Also reports each gateway's CPU time per request (/proc, all threads).
//
//   node bench/micro/ab.mjs A_DIR B_DIR [create|query|mixed|connector] [rounds=6] [seconds=4] [--pg]
//
// A_DIR and B_DIR are checkouts with dist/ built and bench/gateway-server.mjs, e.g.
//   git archive <commit> | tar -x -C /tmp/a && ln -s $PWD/node_modules /tmp/a/ && (cd /tmp/a && npm run build)
// create: 50 connections of creates; query: 50 of queries of existing orders (AB_ORDERS of them, 3000); mixed: 40 + 10.
// connector: 50 connections of merchant-hosted creates through a real connector (AB_METHOD alipay or
// wechat) against the fake providers of the bench (bench/fake-providers.mjs, built to dist/test by
// `npm run bench` or `tsc -p bench/tsconfig.fakes.json`), answering AB_PROVIDER_DELAY_MS (200) after
// each call and paying every payment (so the provider's notifications load the gateway too), the
// connections' first requests spread over one delay; p50 and p99 are shown less the delay.
// AB_CONNECTIONS: the connector kind's connections (50).
// AB_LOG_A / AB_LOG_B: a side's gateway log level (info).
// --pg: on PostgreSQL (a throwaway cluster, as in the bench), otherwise SQLite files.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { signRequest } from '../../dist/sdk/signing.js';
import { runLoad, runSpreadLoad } from '../lib/load.mjs';
import { startChild } from '../lib/procs.mjs';
import { startPostgres } from '../lib/postgres.mjs';

const args = process.argv.slice(2);
const pg = args.includes('--pg');
const [A, B, kind = 'create', ROUNDS = '6', SECS = '4'] = args.filter((a) => a !== '--pg');
if (!A || !B || !['create', 'query', 'mixed', 'connector'].includes(kind)) {
  console.error('usage: node bench/micro/ab.mjs A_DIR B_DIR [create|query|mixed|connector] [rounds] [seconds] [--pg]');
  process.exit(2);
}
const dir = mkdtempSync(join(tmpdir(), 'gw-ab-'));
const server = pg ? await startPostgres() : null;
const side = { A: resolve(A), B: resolve(B) };
const DELAY = Number(process.env.AB_PROVIDER_DELAY_MS ?? 200);
// At 50 connections both sides, their fakes and the generator can saturate a small machine, and the
// queue then hides the gateway's own time: AB_CONNECTIONS makes it fewer.
const CONNECTOR_CONNECTIONS = Number(process.env.AB_CONNECTIONS ?? 50);
// Fake providers of each side's own: both gateways number their orders alike, and one fake would
// take the second side's out_trade_no for the first side's payment.
const fakes = {};
const gws = {};
for (const s of ['A', 'B']) {
  if (kind === 'connector')
    fakes[s] = await startChild(new URL('../fake-providers.mjs', import.meta.url).pathname, {
      delayMs: DELAY,
      payAfterMs: 50,
    });
  const database = server ? await server.createDatabase(`ab_${s.toLowerCase()}`) : join(dir, `${s}.db`);
  gws[s] = await startChild(join(side[s], 'bench', 'gateway-server.mjs'), {
    database,
    logLevel: process.env[`AB_LOG_${s}`] ?? 'info',
    ...(fakes[s] && { masterKey: randomBytes(32).toString('base64'), accounts: Object.values(fakes[s].accounts) }),
  });
}
const cpuMs = (s) => {
  const f = readFileSync(`/proc/${gws[s].pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) * 10; // utime + stime, in clock ticks of 10 ms
};
const run = Date.now().toString(36);
let seq = 0;
const create =
  (s, mh = false) =>
  () => {
    const m = gws[s].merchant;
    const b = {
      user_id: m.user_id,
      wallet_id: m.wallet_id,
      payment_method: mh ? (process.env.AB_METHOD ?? 'alipay') : 'alipay',
      amount: '120.00',
      return_url: 'http://127.0.0.1:9/r',
      callback_url: 'http://127.0.0.1:9/n',
      merchant_reference: `ab${run}-${++seq}`,
      ip: '122.122.122.1',
      version: '2.0',
      product_name: 'P',
      ...(mh && { host_type: '1' }),
    };
    b.signature = signRequest(b, m.api_key);
    return {
      method: 'POST',
      path: '/v2/transaction',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(b),
      tag: b.merchant_reference,
    };
  };
const refs = { A: [], B: [] };
for (const s of kind === 'query' || kind === 'mixed' ? ['A', 'B'] : [])
  await runLoad({
    url: gws[s].url,
    connections: 50,
    amount: Number(process.env.AB_ORDERS ?? 3000),
    next: create(s),
    onOk: (r) => refs[s].push(r),
  });
const query = (s) => () => {
  const m = gws[s].merchant;
  const ref = refs[s][Math.floor(Math.random() * refs[s].length)];
  const qs = new URLSearchParams({
    user_id: m.user_id,
    signature: signRequest({ merchant_reference: ref, user_id: m.user_id }, m.api_key),
  });
  return { method: 'GET', path: `/v2/transaction/${ref}?${qs}` };
};
async function slice(s) {
  const url = gws[s].url;
  const duration = Number(SECS);
  const c0 = cpuMs(s);
  const r = {};
  if (kind === 'create') r.creates = await runLoad({ url, connections: 50, duration, next: create(s) });
  else if (kind === 'connector') {
    r.creates = await runSpreadLoad({
      url,
      connections: CONNECTOR_CONNECTIONS,
      duration,
      spreadMs: DELAY,
      next: create(s, true),
    });
    // The payments of this slice are paid and notified after it: their notifications are its work.
    await new Promise((done) => setTimeout(done, DELAY + 500));
  } else if (kind === 'query') r.queries = await runLoad({ url, connections: 50, duration, next: query(s) });
  else
    [r.creates, r.queries] = await Promise.all([
      runLoad({ url, connections: 40, duration, next: create(s) }),
      runLoad({ url, connections: 10, duration, next: query(s) }),
    ]);
  r.cpuUs = ((cpuMs(s) - c0) * 1000) / ((r.creates?.ok ?? 0) + (r.queries?.ok ?? 0));
  return r;
}
for (const s of ['A', 'B']) await slice(s); // warm-up
const res = { A: [], B: [] };
for (let i = 0; i < Number(ROUNDS); i++) for (const s of i % 2 ? ['B', 'A'] : ['A', 'B']) res[s].push(await slice(s));

const med = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
console.log(`${kind} on ${pg ? 'PostgreSQL' : 'SQLite'}, ${ROUNDS} rounds of ${SECS} s; A = ${side.A}, B = ${side.B}`);
for (const k of ['creates', 'queries']) {
  if (!res.A[0][k]) continue;
  // A connector's create is shown less the provider's delay: the gateway's own part of it.
  const less = kind === 'connector' ? DELAY : 0;
  for (const s of ['A', 'B'])
    for (const r of res[s]) {
      r[k].p50 = +(r[k].p50 - less).toFixed(2);
      r[k].p99 = +(r[k].p99 - less).toFixed(2);
    }
  const line = (s) => res[s].map((r) => `${r[k].rps.toFixed(0)}/${r[k].p50}/${r[k].p99}`).join('  ');
  const ratios = res.B.map((r, i) => r[k].rps / res.A[i][k].rps);
  const m = (s, f) => med(res[s].map((r) => f(r[k])));
  console.log(`${k} (req/s / p50 ms / p99 ms per slice)\n  A ${line('A')}\n  B ${line('B')}`);
  console.log(
    `  B/A per round ${ratios.map((x) => x.toFixed(2)).join(' ')} -> median ${med(ratios).toFixed(2)}; medians A -> B: ${m('A', (x) => x.rps).toFixed(0)} -> ${m('B', (x) => x.rps).toFixed(0)} req/s, p50 ${m('A', (x) => x.p50)} -> ${m('B', (x) => x.p50)} ms, p99 ${m('A', (x) => x.p99)} -> ${m('B', (x) => x.p99)} ms`,
  );
}
console.log(
  `gateway CPU per request, us: A ${res.A.map((r) => r.cpuUs.toFixed(0)).join(' ')} | B ${res.B.map((r) => r.cpuUs.toFixed(0)).join(' ')} -> medians ${med(res.A.map((r) => r.cpuUs)).toFixed(0)} -> ${med(res.B.map((r) => r.cpuUs)).toFixed(0)}`,
);
for (const s of ['A', 'B']) await gws[s].stop();
for (const s of ['A', 'B']) await fakes[s]?.stop();
await server?.stop();
rmSync(dir, { recursive: true, force: true });
