// What one held long poll (query with is_block=1) keeps in the server's JS heap: heap snapshots
// before and while N polls wait, compared by object kind. Run after `npm run build`:
//   node bench/micro/longpoll-heap.mjs [N=2000]
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Pool } from 'undici';
import { signRequest } from '../../dist/sdk/signing.js';
import { startChild } from '../lib/procs.mjs';

const N = Number(process.argv[2] ?? 2000);
const dir = mkdtempSync('/tmp/gw-heap-');
const gw = await startChild(
  new URL('../gateway-server.mjs', import.meta.url).pathname,
  { database: join(dir, 'g.db'), logLevel: 'info' },
  { execArgv: ['--expose-gc'] },
);
const m = gw.merchant;
const http = new Pool(gw.url, { connections: N + 20 });
const refs = [];
for (let i = 0; i < 20; i++) {
  const b = {
    user_id: m.user_id,
    wallet_id: m.wallet_id,
    payment_method: 'alipay',
    amount: '1.00',
    return_url: 'http://127.0.0.1:9/r',
    callback_url: 'http://127.0.0.1:9/n',
    merchant_reference: `h${i}`,
    ip: '1.2.3.4',
    version: '2.0',
    product_name: 'P',
  };
  b.signature = signRequest(b, m.api_key);
  await (
    await http.request({
      method: 'POST',
      path: '/v2/transaction',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(b),
    })
  ).body.text();
  refs.push(b.merchant_reference);
}
// Warm every code path once (one poll per order, answered by a timeout-free query first).
const path = (ref) =>
  `/v2/transaction/${ref}?${new URLSearchParams({ user_id: m.user_id, is_block: '1', signature: signRequest({ merchant_reference: ref, user_id: m.user_id, is_block: '1' }, m.api_key) })}`;
const snap = async (name) => (await gw.ask({ type: 'heapsnapshot', file: join(dir, name) }, 120_000)).file;
const before = await snap('before.heapsnapshot');
const rss0 = gw.memory().rssMB;
for (let i = 0; i < N; i++)
  http.request({ method: 'GET', path: path(refs[i % refs.length]) }).then(
    (r) => r.body.text(),
    () => {},
  );
while ((await gw.ask({ type: 'waiting' })).n < N) await new Promise((r) => setTimeout(r, 50));
await new Promise((r) => setTimeout(r, 500));
const rss1 = gw.memory().rssMB;
const during = await snap('during.heapsnapshot');

function byKind(file) {
  const s = JSON.parse(readFileSync(file, 'utf8'));
  const f = s.snapshot.meta.node_fields;
  const types = s.snapshot.meta.node_types[0];
  const [iType, iName, iSize] = ['type', 'name', 'self_size'].map((k) => f.indexOf(k));
  const out = new Map();
  let total = 0;
  for (let i = 0; i < s.nodes.length; i += f.length) {
    const type = types[s.nodes[i + iType]];
    let name = s.strings[s.nodes[i + iName]];
    if (type === 'string' || type === 'concatenated string' || type === 'sliced string') name = '(string)';
    else if (type === 'code') name = '(code)';
    else if (type === 'array') name = `(array) ${name}`;
    else if (type === 'closure') name = `(closure) ${name}`;
    else if (type === 'hidden') name = `(hidden) ${name}`;
    const key = `${name}`;
    const e = out.get(key) ?? { count: 0, bytes: 0 };
    e.count++;
    e.bytes += s.nodes[i + iSize];
    total += s.nodes[i + iSize];
    out.set(key, e);
  }
  return { out, total };
}
const a = byKind(before);
const b = byKind(during);
const rows = [...b.out]
  .map(([k, v]) => ({ k, count: v.count - (a.out.get(k)?.count ?? 0), bytes: v.bytes - (a.out.get(k)?.bytes ?? 0) }))
  .filter((r) => r.bytes > 0)
  .sort((x, y) => y.bytes - x.bytes);
console.log(
  `${N} long polls held: RSS ${rss0.toFixed(0)} -> ${rss1.toFixed(0)} MB (+${(((rss1 - rss0) * 1024) / N).toFixed(1)} KB per poll); JS heap (snapshot) +${((b.total - a.total) / N / 1024).toFixed(1)} KB per poll`,
);
console.log('per poll, by object kind (bytes, objects):');
for (const r of rows.slice(0, 40))
  console.log(
    `${(r.bytes / N).toFixed(0).padStart(7)} B ${(r.count / N).toFixed(2).padStart(7)}  ${r.k.slice(0, 100)}`,
  );
await http.destroy();
await gw.stop();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
