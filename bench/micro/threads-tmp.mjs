import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { randomInt } from 'node:crypto';
import { signRequest } from '../../dist/sdk/signing.js';
import { startChild } from '../lib/procs.mjs';
import { runLoad } from '../lib/load.mjs';
const dir = mkdtempSync('/tmp/gw-thr-');
const gw = await startChild(new URL('../gateway-server.mjs', import.meta.url).pathname, { database: join(dir, 'g.db'), logLevel: 'info' });
const m = gw.merchant;
const threads = () => Object.fromEntries(readdirSync(`/proc/${gw.pid}/task`).map((t) => {
  const s = readFileSync(`/proc/${gw.pid}/task/${t}/stat`, 'utf8'); const comm = s.slice(s.indexOf('(') + 1, s.lastIndexOf(')'));
  const f = s.split(') ')[1].split(' '); return [`${t}:${comm}`, (Number(f[11]) + Number(f[12])) * 10];
}));
const next = () => { const b = { user_id: m.user_id, wallet_id: m.wallet_id, payment_method: 'alipay', amount: '120.00', return_url: 'http://127.0.0.1:9/r', callback_url: 'http://127.0.0.1:9/n', merchant_reference: `s${Date.now().toString(36)}${randomInt(1e9)}`, ip: '122.122.122.1', version: '2.0', product_name: 'P' };
  b.signature = signRequest(b, m.api_key); return { method: 'POST', path: '/v2/transaction', headers: { 'content-type': 'application/json' }, body: JSON.stringify(b) }; };
await runLoad({ url: gw.url, connections: 50, duration: 3, next });
const t0 = threads(); const u0 = process.cpuUsage();
const r = await runLoad({ url: gw.url, connections: 50, duration: Number(process.argv[2] ?? 10), next });
const t1 = threads(); const u1 = process.cpuUsage();
const n = r.ok ?? r.requests?.total ?? r.count;
console.log('result keys', Object.keys(r), 'ok', n);
for (const k of Object.keys(t1)) { const d = t1[k] - (t0[k] ?? 0); if (d > 0) console.log(k, d, 'ms', (d * 1000 / n).toFixed(1), 'us/req'); }
console.log('bench', ((u1.user + u1.system - u0.user - u0.system) / n).toFixed(1), 'us/req');
gw.stop ? await gw.stop() : gw.child?.kill();
process.exit(0);
