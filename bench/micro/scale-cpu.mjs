// Query cost at two table sizes, per request: the gateway's CPU time (/proc) and req/s, alternating
// slices S L, L S, ... on two gateways (10,000 and N transactions, bulk-loaded as in the bench).
//   node bench/micro/scale-cpu.mjs [N=1000000] [rounds=6] [seconds=3]
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomInt } from 'node:crypto';
import { signRequest } from '../../dist/sdk/signing.js';
import { runLoad } from '../lib/load.mjs';
import { startChild } from '../lib/procs.mjs';
import { openDb } from '../lib/db.mjs';

const [N = '1000000', ROUNDS = '6', SECS = '3'] = process.argv.slice(2);
const dir = mkdtempSync(join(tmpdir(), 'gw-scale-'));
const GW = new URL('../gateway-server.mjs', import.meta.url).pathname;
const cpuMs = (pid) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
};
const sides = [];
let m;
for (const size of [10_000, Number(N)]) {
  const database = join(dir, `s${size}.db`);
  const gw0 = await startChild(GW, { database, logLevel: 'info', merchant: m });
  m ??= gw0.merchant;
  await gw0.stop();
  const db = await openDb('sqlite', database);
  for (let from = 1; from <= size; from += 100_000)
    await db.bulkInsertTransactions(m, from, Math.min(size, from + 99_999));
  await db.analyze();
  await db.close();
  const gw = await startChild(GW, { database, logLevel: 'info', merchant: m });
  const paths = Array.from({ length: 20_000 }, () => {
    const ref = `scale-${1 + randomInt(size)}`;
    const qs = new URLSearchParams({
      user_id: m.user_id,
      signature: signRequest({ merchant_reference: ref, user_id: m.user_id }, m.api_key),
    });
    return `/v2/transaction/${ref}?${qs}`;
  });
  let i = 0;
  sides.push({
    size,
    gw,
    opts: { url: gw.url, connections: 50, next: () => ({ method: 'GET', path: paths[i++ % paths.length] }) },
    rps: [],
    us: [],
  });
}
for (const s of sides) await runLoad({ ...s.opts, duration: 2 });
for (let r = 0; r < Number(ROUNDS); r++) {
  for (const s of r % 2 ? [...sides].reverse() : sides) {
    const c0 = cpuMs(s.gw.pid);
    const res = await runLoad({ ...s.opts, duration: Number(SECS) });
    s.rps.push(res.rps);
    s.us.push(((cpuMs(s.gw.pid) - c0) * 1000) / (res.rps * Number(SECS)));
  }
}
const med = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
for (const s of sides)
  console.log(
    `${s.size} rows: req/s ${s.rps.map((x) => x.toFixed(0)).join(' ')} (median ${med(s.rps).toFixed(0)}); CPU us/request ${s.us.map((x) => x.toFixed(0)).join(' ')} (median ${med(s.us).toFixed(1)})`,
  );
for (const s of sides) await s.gw.stop();
