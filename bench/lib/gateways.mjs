// The gateways under test, each in a process of its own (bench/gateway-server.mjs) on a fresh
// database: a SQLite file in the run's folder, or a database of the bench's PostgreSQL server.
import { join } from 'node:path';
import { GATEWAY, LOG_LEVEL, TMP } from './options.mjs';
import { startChild } from './procs.mjs';

/** The bench's PostgreSQL server (lib/postgres.mjs), when a PostgreSQL engine runs. */
export let pgServer;
export function setPgServer(server) {
  pgServer = server;
}

let dbN = 0;
let gwN = 0;
export async function freshDatabase(engine) {
  return engine === 'sqlite' ? join(TMP, `gateway-${++dbN}.db`) : pgServer.createDatabase('gateway');
}
export async function startGw(
  database,
  { merchant, execArgv, sqliteSynchronous, masterKey, accounts, consolePassword, metricsToken, notify } = {},
) {
  // The request log is written as in production, to /dev/null (BENCH_GATEWAY_LOG=1 keeps it in the run folder).
  const logFile = process.env.BENCH_GATEWAY_LOG ? join(TMP, `gateway-${++gwN}.log`) : '/dev/null';
  // BENCH_GATEWAY_NODE_ARGS: node flags for the gateway, e.g. --trace-gc (which NODE_OPTIONS refuses).
  const extra = (process.env.BENCH_GATEWAY_NODE_ARGS ?? '').split(' ').filter(Boolean);
  return startChild(
    GATEWAY,
    {
      database,
      logLevel: LOG_LEVEL,
      merchant,
      sqliteSynchronous,
      masterKey,
      accounts,
      consolePassword,
      metricsToken,
      notify,
    },
    { execArgv: [...(execArgv ?? []), ...extra], logFile },
  );
}

export async function pendingHostedOrders(db, m) {
  return db.all(
    `SELECT order_id, merchant_reference FROM transactions WHERE user_id = $1 AND status = 'pending' AND host_type = 0 ORDER BY order_id`,
    [m.user_id],
  );
}

/** A fresh file in the run's folder: `{name}-{n}{ext}`. */
export const runFile = (name, ext = '') => join(TMP, `${name}-${++dbN}${ext}`);
