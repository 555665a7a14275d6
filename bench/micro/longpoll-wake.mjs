// The cost of waking many long polls at once: ORDERS orders x PER held `is_block=1` queries, then
// every order paid (all pays at once), and the time from the first pay to the last answer, with the
// CPU time the gateway process spent meanwhile (from /proc). Notifications go to a real receiver.
// As in `npm run bench`, a warm-up round (ORDERS other orders x 10 polls, held, paid, woken) comes
// first; WARMUP=0 measures a process that has never paid an order. Run after `npm run build`:
//   node bench/micro/longpoll-wake.mjs [ORDERS=100] [PER=100]      (PG=1 for PostgreSQL; CPU_PROF_DIR=dir for a CPU profile of the gateway;
//   WAKE_PROF=file.cpuprofile for a profile of the wake window alone, from the first pay to the last answer)
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Pool } from 'undici';
import { signRequest } from '../../dist/sdk/signing.js';
import { startChild } from '../lib/procs.mjs';
import { RawRequests } from '../lib/raw-polls.mjs';
import { startPostgres } from '../lib/postgres.mjs';

const ORDERS = Number(process.argv[2] ?? 100);
const PER = Number(process.argv[3] ?? 100);
const dir = mkdtempSync('/tmp/gw-wake-');
const pgs = process.env.PG ? await startPostgres() : null;
const database = pgs ? await pgs.createDatabase() : join(dir, 'g.db');
const gw = await startChild(
  new URL('../gateway-server.mjs', import.meta.url).pathname,
  { database, logLevel: 'info' },
  { execArgv: process.env.CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.CPU_PROF_DIR}`] : [] },
);
const cpuMs = (pid) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) * 10; // utime + stime, in clock ticks of 10 ms
};
const m = gw.merchant;
const http = new Pool(gw.url, { connections: 4 });
const text = async (req) => (await http.request(req)).body.text();
const polls = new RawRequests(gw.url);
const receiver = await startChild(new URL('../receiver.mjs', import.meta.url).pathname, {});
const pays = new Pool(gw.url, { connections: ORDERS });

/** Creates `count` orders; their order_ids and the paths of their long polls. */
async function createOrders(prefix, count) {
  const orders = [];
  for (let i = 0; i < count; i++) {
    const b = {
      user_id: m.user_id,
      wallet_id: m.wallet_id,
      payment_method: 'alipay',
      amount: '1.00',
      return_url: 'http://127.0.0.1:9/r',
      callback_url: `${receiver.url}/notify`,
      merchant_reference: `${prefix}-${i}`,
      ip: '1.2.3.4',
      version: '2.0',
      product_name: 'P',
    };
    b.signature = signRequest(b, m.api_key);
    await text({
      method: 'POST',
      path: '/v2/transaction',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(b),
    });
    const ref = b.merchant_reference;
    const sig = signRequest({ merchant_reference: ref, user_id: m.user_id }, m.api_key);
    const order_id = JSON.parse(
      await text({ method: 'GET', path: `/v2/transaction/${ref}?user_id=${m.user_id}&signature=${sig}` }),
    ).order_id;
    const poll = `/v2/transaction/${ref}?${new URLSearchParams({ user_id: m.user_id, is_block: '1', signature: signRequest({ merchant_reference: ref, user_id: m.user_id, is_block: '1' }, m.api_key) })}`;
    orders.push({ order_id, poll });
  }
  return orders;
}

/**
 * Holds `per` long polls of each order, then pays every order at once; `measure` runs around the
 * pays and the answers. Returns when every poll has its answer.
 */
async function round(orders, per, measure = async (wake) => wake()) {
  const total = orders.length * per;
  const base = (await gw.ask({ type: 'waiting' })).n;
  const r = { answered: 0, paid: 0, errors: 0, last: 0, lastPay: 0 };
  let allAnswered;
  const all = new Promise((res) => (allAnswered = res));
  for (let i = 0; i < total; i += 500) {
    const n = Math.min(500, total - i);
    for (let j = i; j < i + n; j++) {
      const answered = () => {
        r.last = performance.now();
        if (++r.answered === total) allAnswered();
      };
      polls.get(
        orders[j % orders.length].poll,
        (status, body) => {
          if (status === 200 && body.includes('"status":"paid"')) r.paid++;
          answered();
        },
        (e) => {
          if (++r.errors <= 3) console.error('long poll failed:', e.message);
          answered();
        },
      );
    }
    while ((await gw.ask({ type: 'waiting' })).n < base + i + n) await new Promise((res) => setTimeout(res, 20));
  }
  await new Promise((res) => setTimeout(res, 1000));
  await measure(async () => {
    await Promise.all(
      orders.map(async ({ order_id }) => {
        await (
          await pays.request({
            method: 'POST',
            path: `/sandbox/pay/${order_id}`,
            headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
            body: 'result=paid',
          })
        ).body.text();
        r.lastPay = performance.now();
      }),
    );
    await all;
  });
  return r;
}

const orders = await createOrders('wake', ORDERS);
if (process.env.WARMUP !== '0') {
  await round(await createOrders('warm', ORDERS), 10);
  await new Promise((res) => setTimeout(res, 1000));
}
let cpu0 = 0;
let t0 = 0;
let client0 = process.cpuUsage();
const { answered, paid, errors, last, lastPay } = await round(orders, PER, async (wake) => {
  if (process.env.WAKE_PROF) await gw.ask({ type: 'profile-start' });
  cpu0 = cpuMs(gw.pid);
  client0 = process.cpuUsage();
  t0 = performance.now();
  await wake();
});
const cpu = cpuMs(gw.pid) - cpu0;
const client = process.cpuUsage(client0);
if (process.env.WAKE_PROF) {
  await gw.ask({ type: 'profile-stop', file: process.env.WAKE_PROF });
  const { summarizeProfile, formatProfileSummary } = await import('../lib/cpuprofile.mjs');
  console.log(formatProfileSummary(summarizeProfile(process.env.WAKE_PROF), 'wake window'));
}
console.log(
  `${pgs ? 'postgres' : 'sqlite'} ${ORDERS} orders x ${PER} polls${process.env.WARMUP === '0' ? ', no warm-up' : ''}: pays answered after ${(lastPay - t0).toFixed(0)} ms, all ${answered} polls (${paid} paid, ${errors} failed) after ${(last - t0).toFixed(0)} ms; gateway CPU meanwhile ${cpu} ms, this client's ${((client.user + client.system) / 1000).toFixed(0)} ms; loadavg ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`,
);
await http.destroy();
polls.destroy();
await pays.destroy();
await gw.stop();
await receiver.stop();
await pgs?.stop();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
