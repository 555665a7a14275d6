// The gateway's CPU per SQLite create by thread (/proc/PID/task): whether its main thread is the
// bottleneck of the durable create, or the flush and checkpoint threads beside it. 50 connections
// of hosted creates, 3 s of warm-up, then the measured run. Run after `npm run build`:
//   node bench/micro/create-threads.mjs [SECONDS=10]
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { randomInt } from 'node:crypto';
import { signRequest } from '../../dist/sdk/signing.js';
import { startChild } from '../lib/procs.mjs';
import { runLoad } from '../lib/load.mjs';

const SECONDS = Number(process.argv[2] ?? 10);
const dir = mkdtempSync('/tmp/gw-threads-');
const gw = await startChild(new URL('../gateway-server.mjs', import.meta.url).pathname, {
  database: join(dir, 'g.db'),
  logLevel: 'info',
});
const m = gw.merchant;
/** CPU ms of each thread of the gateway, by "tid:name". */
const threads = () =>
  Object.fromEntries(
    readdirSync(`/proc/${gw.pid}/task`).map((tid) => {
      const stat = readFileSync(`/proc/${gw.pid}/task/${tid}/stat`, 'utf8');
      const f = stat.split(') ')[1].split(' ');
      return [
        `${tid}:${stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))}`,
        (Number(f[11]) + Number(f[12])) * 10,
      ];
    }),
  );
const next = () => {
  const b = {
    user_id: m.user_id,
    wallet_id: m.wallet_id,
    payment_method: 'alipay',
    amount: '120.00',
    return_url: 'http://127.0.0.1:9/r',
    callback_url: 'http://127.0.0.1:9/n',
    merchant_reference: `t${Date.now().toString(36)}${randomInt(1e9)}`,
    ip: '122.122.122.1',
    version: '2.0',
    product_name: 'P',
  };
  b.signature = signRequest(b, m.api_key);
  return {
    method: 'POST',
    path: '/v2/transaction',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(b),
  };
};
await runLoad({ url: gw.url, connections: 50, duration: 3, next });
const before = threads();
const self0 = process.cpuUsage();
const r = await runLoad({ url: gw.url, connections: 50, duration: SECONDS, next });
const after = threads();
const self = process.cpuUsage(self0);
console.log(`${r.ok} creates, ${Math.round(r.ok / SECONDS)} req/s`);
for (const [thread, ms] of Object.entries(after)) {
  const used = ms - (before[thread] ?? 0);
  if (used > 0)
    console.log(
      `gateway thread ${thread.padEnd(16)} ${String(used).padStart(6)} ms  ${((used * 1000) / r.ok).toFixed(1)} us per create`,
    );
}
console.log(`load generator ${((self.user + self.system) / r.ok).toFixed(1)} us per create`);
await gw.stop();
rmSync(dir, { recursive: true, force: true });
