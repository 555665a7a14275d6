// The books at SCALE_ROWS paid orders (--scale-rows, 1,000,000 by default), each with its payment's
// entry as the gateway posts it (bulk SQL, the gateway stopped): `gateway ledger check` over them
// (target: under 60 s), and a wallet's books page in the console, its statement's first page and a
// page deep in the range, as an operator asks for them in turn (target: p99 under 50 ms).
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { bulkLoad, openDb } from '../lib/db.mjs';
import { freshDatabase, startGw } from '../lib/gateways.mjs';
import { SCALE_ROWS, log } from '../lib/options.mjs';
import { row } from '../lib/results.mjs';
import { fmt } from '../lib/stats.mjs';
import { signIn, timePages } from './console.mjs';

const ROOT = join(import.meta.dirname, '../..');
const PASSWORD = 'bench console password';
const TARGET_P99_MS = 50;
const TARGET_CHECK_S = 60;
const DAY = 86_400_000;

/** Every order paid, each with its payment's entry, lines, the wallet's kept balance and its days. */
async function postPayments(engine, database) {
  const db = await openDb(engine, database);
  const t0 = Date.now();
  const pending = `'wallet:' || wallet_id || ':pending'`;
  const day = `(pay_time / ${DAY}) * ${DAY}`;
  for (const statement of [
    `UPDATE transactions SET status = 'paid', status_seq = 1, pay_time = updated_at WHERE status = 'pending'`,
    `INSERT INTO ledger_entries (entry_key, kind, wallet_id, order_id, memo, created_at)
       SELECT 'payment:' || order_id, 'payment', wallet_id, order_id, NULL, pay_time FROM transactions`,
    `INSERT INTO ledger_lines (entry_key, line_no, account, currency, amount, created_at)
       SELECT 'payment:' || order_id, 1, 'provider:' || channel || ':' || wallet_id, currency, amount, pay_time FROM transactions`,
    `INSERT INTO ledger_lines (entry_key, line_no, account, currency, amount, created_at)
       SELECT 'payment:' || order_id, 2, ${pending}, currency, -amount, pay_time FROM transactions`,
    `INSERT INTO ledger_balances (account, currency, balance, updated_at)
       SELECT ${pending}, currency, -sum(amount), max(pay_time) FROM transactions GROUP BY wallet_id, currency`,
    `INSERT INTO ledger_days (account, currency, day, amount)
       SELECT ${pending}, currency, ${day}, -sum(amount) FROM transactions GROUP BY wallet_id, currency, ${day}`,
  ])
    await db.exec(statement);
  await db.exec(engine === 'sqlite' ? 'ANALYZE' : 'VACUUM ANALYZE');
  await db.close();
  log(`${engine}: the payments' entries posted in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

export async function booksRuns(engine) {
  const database = await freshDatabase(engine);
  const gw0 = await startGw(database, { consolePassword: PASSWORD });
  const m = gw0.merchant;
  await gw0.stop();
  const { n } = await bulkLoad(engine, database, m, SCALE_ROWS, log);
  await postPayments(engine, database);

  // gateway ledger check, as an operator runs it.
  const t0 = performance.now();
  const check = spawnSync(
    process.execPath,
    [join(ROOT, 'bin/gateway.js'), 'ledger', 'check', '--json', '--database', database],
    {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, DATABASE_URL: '' },
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  const seconds = (performance.now() - t0) / 1000;
  const report = JSON.parse(check.stdout || '{}');
  log(
    `${engine} ledger check: ${report.entries} entries, ${report.lines} lines, ${report.paid_orders} paid orders in ${seconds.toFixed(1)} s, exit ${check.status}, ${report.problems?.length} problems`,
  );
  row({
    group: 'books',
    name: `gateway ledger check @ ${n.toLocaleString('en')} paid orders`,
    engine,
    p50: seconds * 1000,
    p99: seconds * 1000,
    max: seconds * 1000,
    note: `exit ${check.status}, ${report.problems?.length ?? '?'} problems`,
    target: `< ${TARGET_CHECK_S} s`,
    verdict: check.status === 0 && seconds < TARGET_CHECK_S ? 'PASS' : 'FAIL',
  });

  const gw = await startGw(database, { merchant: m, consolePassword: PASSWORD });
  try {
    const cookie = await signIn(gw.url, gw.consoleUsers.operator, PASSWORD);
    const today = new Date(Date.now() - (Date.now() % DAY)).toISOString().slice(0, 10);
    const books = `/console/wallets/${m.wallet_id}/books`;
    // A page deep in the range: after the movement in the middle.
    const db = await openDb(engine, database);
    const [mid] = await db.all(
      `SELECT created_at, entry_key FROM ledger_lines WHERE account = $1 ORDER BY created_at, entry_key LIMIT 1 OFFSET ${Math.floor(n / 2)}`,
      [`wallet:${m.wallet_id}:pending`],
    );
    await db.close();
    const cases = [
      ['first page (last 30 days)', [books]],
      ['today', [`${books}?from=${today}&to=${today}`]],
      [
        'page at 50 %',
        [`${books}?from=${today}&to=${today}&after=${mid.created_at}-${encodeURIComponent(mid.entry_key)}`],
      ],
    ];
    for (const [name, paths] of cases) {
      const r = await timePages(gw.url, cookie, paths);
      log(
        `${engine} books page: ${name}: p50 ${fmt(r.p50)} ms, p99 ${fmt(r.p99)} ms (${r.rows} movements with an order on the page)`,
      );
      row({
        group: 'books',
        name: `statement page ${name} @ ${n.toLocaleString('en')}`,
        engine,
        p50: r.p50,
        p99: r.p99,
        max: r.max,
        note: `200 pages in turn; ${r.rows} rows`,
        target: `p99 < ${TARGET_P99_MS} ms`,
        verdict: r.p99 < TARGET_P99_MS ? 'PASS' : 'FAIL',
      });
    }
  } finally {
    await gw.stop();
  }
}
