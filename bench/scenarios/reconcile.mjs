// Reconciliation at scale: WeChat Pay's trade bill of a day with STATEMENT_LINES payments
// (--statement-lines, 100,000 by default), each an order the gateway has paid through that account,
// written in WeChat Pay's format by the tests' fake and served by it (bench/fake-providers.mjs);
// a few hundred lines disagree on purpose (amounts changed, payments left out) so that exceptions are
// raised too. The gateway imports it as its job does (fetched, SHA1 checked, read, matched, saved
// with its fee entries; bench/gateway-server.mjs 'import-statement').
// Targets: the import of a quiet gateway under 30 s, its own memory (RssAnon; the database pages
// SQLite maps are the file cache, reported beside it) at most 100 MB above what it was before;
// then the next day's statement imported while creates run against the gateway, and the creates
// held to the API's create targets (ratio to floor (b)/(c) measured before and after; p99), with
// the same creates just before the import beside them.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { wechatBillCsv } from '../../dist/test/support/fake-wechatpay-bill.js';
import { bulkLoad, openDb } from '../lib/db.mjs';
import { floorServer } from '../lib/floors.mjs';
import { freshDatabase, runFile, startGw } from '../lib/gateways.mjs';
import { runLoad } from '../lib/load.mjs';
import { CONNECTIONS, FAKE_PROVIDERS, STATEMENT_LINES, log, sleep } from '../lib/options.mjs';
import { startChild } from '../lib/procs.mjs';
import { FLOOR_MERCHANT } from '../lib/floors.mjs';
import { createReq } from '../lib/requests.mjs';
import { mergeRuns, row } from '../lib/results.mjs';
import { fmt } from '../lib/stats.mjs';

const DAY = 86_400_000;
const BEIJING = 8 * 3_600_000;
const TARGET_IMPORT_S = 30;
const TARGET_MEMORY_MB = 100;
/** Lines of each day's bill that disagree with the gateway: amounts changed, payments left out. */
const EDITS = 100;
const CNY = 55_732;

/** The Beijing day `back` days before today's, and when it starts (epoch ms). */
function beijingDay(back) {
  const start = Math.floor((Date.now() + BEIJING) / DAY) * DAY - back * DAY;
  return { date: new Date(start).toISOString().slice(0, 10), start: start - BEIJING };
}

/**
 * Orders 1..2n paid through WeChat Pay (n on each day), each with its payment and its ledger entry,
 * as the gateway records them (bulk SQL, the gateway stopped).
 */
async function payThroughWechat(engine, database, m, n, days) {
  const db = await openDb(engine, database);
  const t0 = Date.now();
  const i = `CAST(substr(order_id, 9) AS INTEGER)`;
  const paidAt = `CASE WHEN ${i} <= ${n} THEN ${days[0].start} + ${i} * 800 ELSE ${days[1].start} + (${i} - ${n}) * 800 END`;
  for (const statement of [
    `UPDATE transactions SET status = 'paid', status_seq = 1, payment_method = 'wechat', channel = 'wechatpay',
       channel_ref = '42000' || order_id, pay_time = ${paidAt}, updated_at = ${paidAt}`,
    `INSERT INTO channel_payments (out_trade_no, order_id, provider, flow, attempt, charged_amount, charged_currency,
       state, provider_ref, created_at, updated_at, next_check_at)
       SELECT order_id || 'W1', order_id, 'wechatpay', 'qr', 1, ${CNY}, 'CNY', 'paid', '42000' || order_id, pay_time, pay_time, pay_time
       FROM transactions`,
    `INSERT INTO ledger_entries (entry_key, kind, wallet_id, order_id, memo, created_at)
       SELECT 'payment:' || order_id, 'payment', wallet_id, order_id, NULL, pay_time FROM transactions`,
    `INSERT INTO ledger_lines (entry_key, line_no, account, currency, amount, created_at)
       SELECT 'payment:' || order_id, 1, 'provider:wechatpay:' || wallet_id, currency, amount, pay_time FROM transactions`,
    `INSERT INTO ledger_lines (entry_key, line_no, account, currency, amount, created_at)
       SELECT 'payment:' || order_id, 2, 'wallet:' || wallet_id || ':pending', currency, -amount, pay_time FROM transactions`,
  ])
    await db.exec(statement);
  await db.exec(engine === 'sqlite' ? 'ANALYZE' : 'VACUUM ANALYZE');
  const rows = await db.all(
    `SELECT out_trade_no, provider_ref, created_at FROM channel_payments ORDER BY created_at, out_trade_no`,
  );
  await db.close();
  log(`${engine}: ${rows.length} WeChat Pay payments recorded in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return rows;
}

/** The day's bill, written by the fake's own writer: every payment of the day, EDITS changed and EDITS left out. */
function billOf(account, date, payments) {
  const orders = payments.map((p) => ({
    transaction_id: p.provider_ref,
    out_trade_no: p.out_trade_no,
    trade_type: 'NATIVE',
    total: CNY,
    currency: 'CNY',
    paid_at: Number(p.created_at),
    refunds: [],
  }));
  const amounts = new Map(orders.slice(0, EDITS).map((o) => [o.out_trade_no, CNY + 1]));
  const omit = new Set(orders.slice(EDITS, 2 * EDITS).map((o) => o.out_trade_no));
  const file = runFile(`wechat-bill-${date}`, '.csv');
  writeFileSync(file, wechatBillCsv(account.config.appid, account.config.mchid, date, orders, { amounts, omit }));
  return file;
}

/** Imports in the gateway while sampling its memory every 100 ms (from /proc): the peak above `before`. */
async function importWatched(gw, wallet_id, date) {
  // The process's own memory (RssAnon): SQLite's reader maps the database file, and the pages it
  // maps (RssFile) are the operating system's file cache, which it drops when it needs to.
  const before = gw.memory();
  let peak = before.anonMB;
  let peakFile = before.fileMB;
  // What the RSS is made of at its peak: V8's heap, or memory outside it (buffers, SQLite's).
  const parts = { heapMB: 0, externalMB: 0 };
  const timer = setInterval(() => {
    const m = gw.memory();
    peakFile = Math.max(peakFile, m.fileMB);
    if (m.anonMB < peak) return;
    peak = m.anonMB;
    gw.ask({ type: 'memory' })
      .then((u) => Object.assign(parts, { heapMB: u.heapUsed / 1e6, externalMB: u.external / 1e6 }))
      .catch(() => {});
  }, 100);
  try {
    const r = await gw.ask({ type: 'import-statement', wallet_id, method: 'wechat', date }, 600_000);
    peak = Math.max(peak, gw.memory().anonMB);
    if (r.kind !== 'imported') throw new Error(`import of ${date}: ${r.kind} ${r.reason ?? ''}`);
    return {
      ...r,
      growthMB: peak - before.anonMB,
      beforeMB: before.anonMB,
      peakMB: peak,
      fileMB: [before.fileMB, peakFile],
      ...parts,
    };
  } finally {
    clearInterval(timer);
  }
}

export async function reconcileRuns(engine) {
  const n = STATEMENT_LINES;
  const days = [beijingDay(1), beijingDay(2)];
  const fakes = await startChild(FAKE_PROVIDERS, { delayMs: 0 });
  const masterKey = randomBytes(32).toString('base64');
  const accounts = [fakes.accounts.wechatpay];
  const database = await freshDatabase(engine);
  try {
    const gw0 = await startGw(database, { masterKey, accounts });
    const m = gw0.merchant;
    await gw0.stop();
    await bulkLoad(engine, database, m, 2 * n, log);
    const payments = await payThroughWechat(engine, database, m, n, days);
    for (const day of days) {
      const ofDay = payments.filter((p) => Number(p.created_at) >= day.start && Number(p.created_at) < day.start + DAY);
      const file = billOf(fakes.accounts.wechatpay, day.date, ofDay);
      await fakes.ask({ type: 'bill', provider: 'wechatpay', date: day.date, file });
    }
    const gw = await startGw(database, { masterKey, accounts, merchant: m });
    try {
      // The quiet gateway's import: time and memory.
      await sleep(2000);
      const quiet = await importWatched(gw, m.wallet_id, days[0].date);
      const seconds = quiet.ms / 1000;
      log(
        `${engine} import of ${days[0].date}: ${quiet.lines} lines, ${quiet.matched} matched, ${quiet.exceptions} exceptions in ${seconds.toFixed(1)} s; own memory (RssAnon) ${fmt(quiet.beforeMB, 0)} -> peak ${fmt(quiet.peakMB, 0)} MB (then V8 heap ${fmt(quiet.heapMB, 0)} MB, buffers ${fmt(quiet.externalMB, 0)} MB); mapped database pages ${fmt(quiet.fileMB[0], 0)} -> ${fmt(quiet.fileMB[1], 0)} MB`,
      );
      const wantExceptions = 2 * EDITS;
      row({
        group: 'reconcile',
        name: `statement import @ ${n.toLocaleString('en')} lines`,
        engine,
        p50: quiet.ms,
        p99: quiet.ms,
        max: quiet.ms,
        note: `${quiet.matched} matched, ${quiet.exceptions} exceptions (${wantExceptions} written in)`,
        target: `< ${TARGET_IMPORT_S} s`,
        verdict: seconds < TARGET_IMPORT_S && quiet.exceptions === wantExceptions ? 'PASS' : 'FAIL',
      });
      row({
        group: 'reconcile',
        name: `gateway memory during the import @ ${n.toLocaleString('en')} lines`,
        engine,
        note: `RssAnon ${fmt(quiet.beforeMB, 0)} MB before, peak ${fmt(quiet.peakMB, 0)} MB: +${fmt(quiet.growthMB, 0)} MB`,
        target: `+ < ${TARGET_MEMORY_MB} MB`,
        verdict: quiet.growthMB < TARGET_MEMORY_MB ? 'PASS' : 'FAIL',
      });

      // The next day's import while creates run: the creates against the floor before and after.
      const floorMode = engine === 'sqlite' ? 'b' : 'c';
      const floor = await floorServer(floorMode);
      const floorOpts = { url: floor.url, next: createReq(FLOOR_MERCHANT), connections: CONNECTIONS };
      const f0 = await runLoad({ ...floorOpts, duration: 3 });
      // The same creates on the same gateway before the import (after a warm-up): what the import costs them.
      await runLoad({
        url: gw.url,
        next: createReq(m, { payment_method: 'wechat' }),
        connections: CONNECTIONS,
        duration: 2,
      });
      const quietCreates = await runLoad({
        url: gw.url,
        next: createReq(m, { payment_method: 'wechat' }),
        connections: CONNECTIONS,
        duration: 3,
      });
      const slices = [];
      let done = false;
      const busy = importWatched(gw, m.wallet_id, days[1].date).finally(() => (done = true));
      while (!done || slices.length === 0)
        slices.push(
          await runLoad({
            url: gw.url,
            next: createReq(m, { payment_method: 'wechat' }),
            connections: CONNECTIONS,
            duration: 2,
          }),
        );
      const loaded = await busy;
      const f1 = await runLoad({ ...floorOpts, duration: 3 });
      const r = mergeRuns(slices);
      const floorRps = (f0.rps + f1.rps) / 2;
      log(
        `${engine} creates during the import of ${days[1].date} (${fmt(loaded.ms / 1000, 1)} s, +${fmt(loaded.growthMB, 0)} MB): ${fmt(r.rps, 0)} req/s ok (before it: ${fmt(quietCreates.rps, 0)}, p99 ${fmt(quietCreates.p99)} ms) against floor ${floorMode} ${fmt(f0.rps, 0)}/${fmt(f1.rps, 0)}; p99 ${fmt(r.p99)} ms, bad ${r.bad}, errors ${r.errors}`,
      );
      row({
        group: 'reconcile',
        name: 'create (hosted) during a statement import',
        engine,
        rps: r.rps,
        p50: r.p50,
        p99: r.p99,
        max: r.max,
        ok: r.ok,
        bad: r.bad,
        errors: r.errors,
        floor: floorMode,
        floorRps,
        ratio: r.rps / floorRps,
        note: `import ${fmt(loaded.ms / 1000, 1)} s meanwhile; before it ${fmt(quietCreates.rps, 0)} req/s, p99 ${fmt(quietCreates.p99)} ms`,
        minRatio: engine === 'sqlite' ? 0.7 : 0.8,
        maxP99: engine === 'sqlite' ? 25 : undefined,
      });
    } finally {
      await gw.stop();
    }
  } finally {
    await fakes.stop();
  }
}
