// Where the CPU goes under load: the gateway's and the load generator's CPU time per request, for
// query (pre-signed paths, as in the bench) and for floor (a), each in its own 10 s run. Shows
// whether a ratio is held by the gateway or by the generator. Run after `npm run build`:
//   node bench/micro/cpu-split.mjs [SECONDS=10]      (CPU_PROF_DIR=dir for CPU profiles of both servers)
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { randomInt } from 'node:crypto';
import { signRequest } from '../../dist/sdk/signing.js';
import { startChild } from '../lib/procs.mjs';
import { runLoad } from '../lib/load.mjs';

const SECONDS = Number(process.argv[2] ?? 10);
const dir = mkdtempSync('/tmp/gw-split-');
const execArgv = process.env.CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.CPU_PROF_DIR}`] : [];
const cpuMs = (pid) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
};
const selfMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

const gw = await startChild(
  new URL('../gateway-server.mjs', import.meta.url).pathname,
  { database: join(dir, 'g.db'), logLevel: 'info' },
  { execArgv },
);
const m = gw.merchant;
const createBody = () => {
  const b = {
    user_id: m.user_id,
    wallet_id: m.wallet_id,
    payment_method: 'alipay',
    amount: '120.00',
    return_url: 'http://127.0.0.1:9/r',
    callback_url: 'http://127.0.0.1:9/n',
    merchant_reference: `s${Date.now().toString(36)}${randomInt(1e9)}`,
    ip: '122.122.122.1',
    version: '2.0',
    product_name: 'P',
  };
  b.signature = signRequest(b, m.api_key);
  return b;
};
const refs = [];
await runLoad({
  url: gw.url,
  connections: 50,
  amount: 5000,
  next: () => {
    const b = createBody();
    return {
      method: 'POST',
      path: '/v2/transaction',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(b),
      tag: b.merchant_reference,
    };
  },
  onOk: (tag) => refs.push(tag),
});
const paths = Array.from({ length: 20_000 }, () => {
  const ref = refs[randomInt(refs.length)];
  const sig = signRequest({ merchant_reference: ref, user_id: m.user_id }, m.api_key);
  return `/v2/transaction/${ref}?user_id=${m.user_id}&signature=${sig}`;
});
const floor = await startChild(
  new URL('../floors/floor-server.mjs', import.meta.url).pathname,
  { mode: 'a', key: m.api_key },
  { execArgv },
);

async function run(label, server, next) {
  await runLoad({ url: server.url, connections: 50, duration: 2, next });
  const [s0, c0] = [cpuMs(server.pid), selfMs()];
  const r = await runLoad({ url: server.url, connections: 50, duration: SECONDS, next });
  const [s, c] = [cpuMs(server.pid) - s0, selfMs() - c0];
  const n = r.ok + r.bad;
  console.log(
    `${label.padEnd(10)} ${r.rps.toFixed(0).padStart(6)} req/s; server ${((s * 1000) / n).toFixed(1)} us/req (${(s / 10 / r.seconds).toFixed(0)}% of a core); generator ${((c * 1000) / n).toFixed(1)} us/req (${(c / 10 / r.seconds).toFixed(0)}%); loadavg ${readFileSync('/proc/loadavg', 'utf8').split(' ')[0]}`,
  );
}
let i = 0;
for (let round = 0; round < 2; round++) {
  await run('floor (a)', floor, () => {
    const b = createBody();
    return {
      method: 'POST',
      path: '/v2/transaction',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(b),
    };
  });
  await run('query', gw, () => ({ method: 'GET', path: paths[i++ % paths.length] }));
}
await floor.stop();
await gw.stop();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
