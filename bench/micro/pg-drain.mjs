// Where a notification backlog's time goes on PostgreSQL: pays N orders at once to a local
// receiver that answers `sent`, waits for all, and prints pg_stat_statements (calls, mean and
// total ms) of the statements. Run after `npm run build`: node bench/micro/pg-drain.mjs [N]
// PG_LOG_DIR=/some/dir (writable by postgres): also log the plans of statements over 10 ms there (auto_explain).
import http from 'node:http';
import { Pool } from 'undici';
import pg from 'pg';
import { signRequest } from '../../dist/sdk/signing.js';
import { startPostgres } from '../lib/postgres.mjs';
import { startChild } from '../lib/procs.mjs';

const N = Number(process.argv[2] ?? 500);
let got = 0;
const rx = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    got++;
    res.end('sent');
  });
});
await new Promise((r) => rx.listen(0, '127.0.0.1', r));
const callback = `http://127.0.0.1:${rx.address().port}/n`;
const server = await startPostgres({
  extraConf: [
    'shared_preload_libraries=pg_stat_statements,auto_explain',
    'pg_stat_statements.track=all',
    ...(process.env.PG_LOG_DIR
      ? [
          'logging_collector=on',
          `log_directory=${process.env.PG_LOG_DIR}`,
          'log_filename=pg.log',
          'auto_explain.log_min_duration=10',
          'auto_explain.log_analyze=on',
          'auto_explain.log_nested_statements=on',
        ]
      : []),
  ],
});
const url = await server.createDatabase('drain');
const admin = new pg.Client({ connectionString: url });
await admin.connect();
await admin.query('CREATE EXTENSION pg_stat_statements');
const gw = await startChild(new URL('../gateway-server.mjs', import.meta.url).pathname, {
  database: url,
  logLevel: 'silent',
});
const m = gw.merchant;
const pool = new Pool(gw.url, { connections: 20 });
const call = async (method, path, body, type = 'application/json') =>
  (
    await pool.request({ method, path, headers: { 'content-type': type, accept: 'application/json' }, body })
  ).body.json();
const run = Date.now().toString(36);
const ids = [];
for (let i = 0; i < N; i++) {
  const b = {
    user_id: m.user_id,
    wallet_id: m.wallet_id,
    payment_method: 'alipay',
    amount: '1.00',
    return_url: 'http://127.0.0.1:9/r',
    callback_url: callback,
    merchant_reference: `d${run}-${i}`,
    ip: '122.122.122.1',
    version: '2.0',
    product_name: 'P',
  };
  b.signature = signRequest(b, m.api_key);
  if ((await call('POST', '/v2/transaction', JSON.stringify(b))).code !== 0) throw new Error('create failed');
  const q = { merchant_reference: b.merchant_reference, user_id: m.user_id };
  ids.push(
    (
      await call(
        'GET',
        `/v2/transaction/${b.merchant_reference}?${new URLSearchParams({ user_id: m.user_id, signature: signRequest(q, m.api_key) })}`,
      )
    ).order_id,
  );
}
await admin.query('SELECT pg_stat_statements_reset()');
const t0 = performance.now();
await Promise.all(
  ids.map((id) => call('POST', `/sandbox/pay/${id}`, 'result=paid', 'application/x-www-form-urlencoded')),
);
const paid = performance.now() - t0;
while (got < N) await new Promise((r) => setTimeout(r, 20));
const ms = performance.now() - t0;
console.log(
  `${N} notifications delivered ${ms.toFixed(0)} ms after the first pay (pays ${paid.toFixed(0)} ms): ${(N / (ms / 1000)).toFixed(0)}/s`,
);
const { rows } = await admin.query(
  `SELECT query, calls, mean_exec_time, total_exec_time FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) ORDER BY total_exec_time DESC LIMIT 12`,
);
for (const r of rows)
  console.log(
    `  ${String(r.calls).padStart(6)} calls  mean ${Number(r.mean_exec_time).toFixed(2)} ms  total ${Number(r.total_exec_time).toFixed(0)} ms  ${r.query.replace(/\s+/g, ' ').slice(0, 110)}`,
  );
await pool.close();
await gw.stop();
await admin.end();
await server.stop();
rx.close();
