// Queries while creates run, on one SQLite gateway: how long a read waits when writes (and their
// group commits) go on beside it. Run after `npm run build`:
//   node bench/micro/mixed.mjs [seconds=10] [createConnections=40] [queryConnections=10] [rounds=3]
// Each round: creates alone, then creates and queries together (queries of existing orders).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signRequest } from '../../dist/sdk/signing.js';
import { runLoad } from '../lib/load.mjs';
import { startChild } from '../lib/procs.mjs';

const [SECONDS = 10, CREATE_CONN = 40, QUERY_CONN = 10, ROUNDS = 3] = process.argv.slice(2).map(Number);
const run = Date.now().toString(36);
const dir = mkdtempSync(join(tmpdir(), 'gw-mixed-'));
const gw = await startChild(new URL('../gateway-server.mjs', import.meta.url).pathname, {
  database: join(dir, 'g.db'),
  logLevel: 'info',
});
const m = gw.merchant;
let seq = 0;
const create = () => {
  const b = {
    user_id: m.user_id,
    wallet_id: m.wallet_id,
    payment_method: 'alipay',
    amount: '120.00',
    return_url: 'http://127.0.0.1:9/r',
    callback_url: 'http://127.0.0.1:9/n',
    merchant_reference: `m${run}-${++seq}`,
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
    tag: b.merchant_reference,
  };
};
const refs = [];
await runLoad({ url: gw.url, connections: 20, amount: 2000, next: create, onOk: (tag) => refs.push(tag) });
const query = () => {
  const ref = refs[Math.floor(Math.random() * refs.length)];
  const qs = new URLSearchParams({
    user_id: m.user_id,
    signature: signRequest({ merchant_reference: ref, user_id: m.user_id }, m.api_key),
  });
  return { method: 'GET', path: `/v2/transaction/${ref}?${qs}` };
};
const f = (r) => `${r.rps.toFixed(0)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms (bad ${r.bad})`;
for (let round = 1; round <= ROUNDS; round++) {
  const alone = await runLoad({ url: gw.url, connections: CREATE_CONN + QUERY_CONN, duration: SECONDS, next: create });
  const [c, q] = await Promise.all([
    runLoad({ url: gw.url, connections: CREATE_CONN, duration: SECONDS, next: create }),
    runLoad({ url: gw.url, connections: QUERY_CONN, duration: SECONDS, next: query }),
  ]);
  console.log(
    `round ${round}: creates alone (${CREATE_CONN + QUERY_CONN} conn) ${f(alone)} | together: creates (${CREATE_CONN}) ${f(c)}; queries (${QUERY_CONN}) ${f(q)}`,
  );
}
await gw.stop();
rmSync(dir, { recursive: true, force: true });
