// The cost of waking many long polls at once: ORDERS orders x PER held `is_block=1` queries, then
// every order paid (all pays at once), and the time from the first pay to the last answer, with the
// CPU time the gateway process spent meanwhile (from /proc). Run after `npm run build`:
//   node bench/micro/longpoll-wake.mjs [ORDERS=100] [PER=100]      (PG=1 for PostgreSQL; CPU_PROF_DIR=dir for a CPU profile of the gateway;
//   WAKE_PROF=file.cpuprofile for a profile of the wake window alone, from the first pay to the last answer)
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Pool } from 'undici';
import { signRequest } from '../../dist/sdk/signing.js';
import { startChild } from '../lib/procs.mjs';
import { startPostgres } from '../lib/postgres.mjs';

const ORDERS = Number(process.argv[2] ?? 100);
const PER = Number(process.argv[3] ?? 100);
const dir = mkdtempSync('/tmp/gw-wake-');
const pgs = process.env.PG ? await startPostgres() : null;
const database = pgs ? await pgs.createDatabase() : join(dir, 'g.db');
const gw = await startChild(new URL('../gateway-server.mjs', import.meta.url).pathname, { database, logLevel: 'info' }, { execArgv: process.env.CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.CPU_PROF_DIR}`] : [] });
const cpuMs = (pid) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) * 10; // utime + stime, in clock ticks of 10 ms
};
const m = gw.merchant;
const http = new Pool(gw.url, { connections: ORDERS * PER + 20, headersTimeout: 0, bodyTimeout: 0 });
const text = async (req) => (await http.request(req)).body.text();
const ids = [];
const refs = [];
for (let i = 0; i < ORDERS; i++) {
  const b = { user_id: m.user_id, wallet_id: m.wallet_id, payment_method: 'alipay', amount: '1.00', return_url: 'http://127.0.0.1:9/r', callback_url: 'http://127.0.0.1:9/n', merchant_reference: `wake-${i}`, ip: '1.2.3.4', version: '2.0', product_name: 'P' };
  b.signature = signRequest(b, m.api_key);
  await text({ method: 'POST', path: '/v2/transaction', headers: { 'content-type': 'application/json' }, body: JSON.stringify(b) });
  const sig = signRequest({ merchant_reference: b.merchant_reference, user_id: m.user_id }, m.api_key);
  ids.push(JSON.parse(await text({ method: 'GET', path: `/v2/transaction/${b.merchant_reference}?user_id=${m.user_id}&signature=${sig}` })).order_id);
  refs.push(b.merchant_reference);
}
const pollPath = refs.map((ref) => `/v2/transaction/${ref}?${new URLSearchParams({ user_id: m.user_id, is_block: '1', signature: signRequest({ merchant_reference: ref, user_id: m.user_id, is_block: '1' }, m.api_key) })}`);
let answered = 0;
let paid = 0;
let last = 0;
let allAnswered;
const all = new Promise((r) => (allAnswered = r));
for (let i = 0; i < ORDERS * PER; i += 500) {
  const n = Math.min(500, ORDERS * PER - i);
  for (let j = i; j < i + n; j++) {
    text({ method: 'GET', path: pollPath[j % ORDERS] }).then((t) => {
      if (t.includes('"status":"paid"')) paid++;
      last = performance.now();
      if (++answered === ORDERS * PER) allAnswered();
    });
  }
  while ((await gw.ask({ type: 'waiting' })).n < i + n) await new Promise((r) => setTimeout(r, 20));
}
await new Promise((r) => setTimeout(r, 1000));
const pays = new Pool(gw.url, { connections: ORDERS });
if (process.env.WAKE_PROF) await gw.ask({ type: 'profile-start' });
const cpu0 = cpuMs(gw.pid);
const t0 = performance.now();
let lastPay = 0;
await Promise.all(ids.map(async (id) => {
  await (await pays.request({ method: 'POST', path: `/sandbox/pay/${id}`, headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, body: 'result=paid' })).body.text();
  lastPay = performance.now();
}));
await all;
const cpu = cpuMs(gw.pid) - cpu0;
if (process.env.WAKE_PROF) {
  await gw.ask({ type: 'profile-stop', file: process.env.WAKE_PROF });
  const { summarizeProfile, formatProfileSummary } = await import('../lib/cpuprofile.mjs');
  console.log(formatProfileSummary(summarizeProfile(process.env.WAKE_PROF), 'wake window'));
}
console.log(`${pgs ? 'postgres' : 'sqlite'} ${ORDERS} orders x ${PER} polls: pays answered after ${(lastPay - t0).toFixed(0)} ms, all ${answered} polls (${paid} paid) after ${(last - t0).toFixed(0)} ms; gateway CPU meanwhile ${cpu} ms; loadavg ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
await http.destroy();
await pays.destroy();
await gw.stop();
await pgs?.stop();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
