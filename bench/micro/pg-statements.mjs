// How many SQL statements (database round trips) each API call costs on PostgreSQL, from
// pg_stat_statements. Run after `npm run build`: node bench/micro/pg-statements.mjs [N]
// Starts a throwaway cluster and a gateway, makes N calls of each kind, prints statements per call.
import { Pool } from 'undici';
import pg from 'pg';
import { signRequest } from '../../dist/sdk/signing.js';
import { startPostgres } from '../lib/postgres.mjs';
import { startChild } from '../lib/procs.mjs';

const N = Number(process.argv[2] ?? 500);
const server = await startPostgres({
  extraConf: ['shared_preload_libraries=pg_stat_statements', 'pg_stat_statements.track=all'],
});
const url = await server.createDatabase('stmts');
const admin = new pg.Client({ connectionString: url });
await admin.connect();
await admin.query('CREATE EXTENSION pg_stat_statements');
const gw = await startChild(new URL('../gateway-server.mjs', import.meta.url).pathname, {
  database: url,
  logLevel: 'silent',
});
const m = gw.merchant;
const http = new Pool(gw.url, { connections: 10 });
const call = async (method, path, body, type = 'application/json') => {
  const res = await http.request({ method, path, headers: { 'content-type': type, accept: 'application/json' }, body });
  return res.body.json();
};
const statements = async () => {
  const { rows } = await admin.query(
    `SELECT query, calls FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query NOT ILIKE '%pg_stat_statements%'`,
  );
  return rows;
};
async function measure(name, fn) {
  await admin.query('SELECT pg_stat_statements_reset()');
  for (let i = 0; i < N; i++) await fn(i);
  const rows = (await statements()).filter(
    (r) => !/notification|outbox|LISTEN|pg_notify/i.test(r.query) || name.includes('pay'),
  );
  const total = rows.reduce((s, r) => s + Number(r.calls), 0);
  console.log(`\n${name}: ${(total / N).toFixed(2)} statements per call`);
  for (const r of rows.sort((a, b) => b.calls - a.calls))
    console.log(`  ${(r.calls / N).toFixed(2)}  ${r.query.replace(/\s+/g, ' ').slice(0, 150)}`);
}

const run = Date.now().toString(36);
const refs = [];
await measure('create (hosted)', async (i) => {
  const b = {
    user_id: m.user_id,
    wallet_id: m.wallet_id,
    payment_method: 'alipay',
    amount: '120.00',
    return_url: 'http://127.0.0.1:9/r',
    callback_url: 'http://127.0.0.1:9/n',
    merchant_reference: `s${run}-${i}`,
    ip: '122.122.122.1',
    version: '2.0',
    product_name: 'P',
  };
  b.signature = signRequest(b, m.api_key);
  const r = await call('POST', '/v2/transaction', JSON.stringify(b));
  if (r.code !== 0) throw new Error(JSON.stringify(r));
  refs.push(b.merchant_reference);
});
await measure('query', async (i) => {
  const p = { merchant_reference: refs[i], user_id: m.user_id };
  const qs = new URLSearchParams({ user_id: m.user_id, signature: signRequest(p, m.api_key) });
  const r = await call('GET', `/v2/transaction/${refs[i]}?${qs}`);
  if (r.code !== 0) throw new Error(JSON.stringify(r));
});
const nonces = [];
for (let i = 0; i < N; i++) {
  const b = {
    user_id: m.user_id,
    wallet_id: m.wallet_id,
    payment_method: 'alipay',
    amount: '120.00',
    return_url: 'http://127.0.0.1:9/r',
    callback_url: 'http://127.0.0.1:9/n',
    merchant_reference: `g${run}-${i}`,
    ip: '122.122.122.1',
    version: '2.0',
    product_name: 'P',
    host_type: '1',
  };
  b.signature = signRequest(b, m.api_key);
  nonces.push((await call('POST', '/v2/transaction', JSON.stringify(b))).nonce);
}
await measure('gateway data (nonce use)', async (i) => {
  const r = await call('GET', `/v2/merchanthosted/gatewaydata/${nonces[i]}`);
  if (r.code !== 0) throw new Error(JSON.stringify(r));
});
const { rows: ids } = await admin.query('SELECT order_id FROM transactions WHERE host_type = 0 ORDER BY order_id');
await measure('sandbox pay (settle + outbox, and the notification worker delivering it)', async (i) => {
  await call('POST', `/sandbox/pay/${ids[i].order_id}`, 'result=paid', 'application/x-www-form-urlencoded');
});
await measure('refund', async (i) => {
  const b = { user_id: m.user_id, order_id: ids[i].order_id, refund_amount: '0.01', reference: `r${i}` };
  b.signature = signRequest(b, m.api_key);
  const r = await call('POST', '/refund', JSON.stringify(b));
  if (r.code !== 0) throw new Error(JSON.stringify(r));
});
await http.close();
await gw.stop();
await admin.end();
await server.stop();
process.exit(0);
