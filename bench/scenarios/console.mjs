// The console at SCALE_ROWS orders (--scale-rows, 1,000,000 by default): the transaction list and
// search, one page at a time as a signed-in user asks for them (one connection, in turn), for the
// merchant's owner (their organisation's orders) and for an operator (everyone's); then a full CSV
// export of them: its time, and the gateway's peak memory while it streams.
import { bulkLoad } from '../lib/db.mjs';
import { freshDatabase, startGw } from '../lib/gateways.mjs';
import { SCALE_ROWS, log } from '../lib/options.mjs';
import { row } from '../lib/results.mjs';
import { fmt, summarize } from '../lib/stats.mjs';

const PASSWORD = 'bench console password';
const SAMPLES = 200;
const TARGET_P99_MS = 50;

/** A signed-in browser: its cookies, the CSRF token of the last page. */
export async function signIn(url, email, password = PASSWORD) {
  const jar = new Map();
  const keep = (res) => {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair.indexOf('=');
      jar.set(pair.slice(0, at), pair.slice(at + 1));
    }
  };
  const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  const form = await fetch(`${url}/console/sign-in`);
  keep(form);
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())[1];
  const res = await fetch(`${url}/console/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: cookie(), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: csrf, email, password }).toString(),
  });
  keep(res);
  if (res.headers.get('location') !== '/console') throw new Error(`sign-in as ${email} answered ${res.status}`);
  return cookie();
}

/** Each path in turn, SAMPLES times after 20 to warm up: the pages' times, and the rows with an order link on the last. */
export async function timePages(url, cookie, paths) {
  const ms = [];
  let rows = 0;
  for (let i = 0; i < SAMPLES + 20; i++) {
    const path = paths[i % paths.length];
    const t0 = performance.now();
    const res = await fetch(url + path, { headers: { cookie } });
    const body = await res.text();
    const t = performance.now() - t0;
    if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${body.slice(0, 300)}`);
    if (i >= 20) ms.push(t);
    rows = (body.match(/<td[^>]*><a href="\/console\/transactions\//g) ?? []).length;
  }
  return { ...summarize(ms.sort((a, b) => a - b)), rows };
}

export async function consoleRuns(engine) {
  const database = await freshDatabase(engine);
  const gw0 = await startGw(database, { consolePassword: PASSWORD });
  const m = gw0.merchant;
  await gw0.stop();
  // The cursor of the row in the middle: a page deep in the list.
  const { n, seen: mid } = await bulkLoad(
    engine,
    database,
    m,
    SCALE_ROWS,
    log,
    async (db, count) =>
      (
        await db.all(
          `SELECT created_at, order_id FROM transactions ORDER BY created_at DESC, order_id DESC LIMIT 1 OFFSET ${Math.floor(count / 2)}`,
        )
      )[0],
  );
  const gw = await startGw(database, { merchant: m, consolePassword: PASSWORD });
  try {
    const day = new Date(Date.now() - (Date.now() % 86_400_000)).toISOString().slice(0, 10);
    const refs = Array.from({ length: 50 }, (_, k) => `scale-${1 + Math.floor(((k + 1) * n) / 51)}`);
    const cases = [
      ['first page', ['/console/transactions']],
      ['status=paid', ['/console/transactions?status=paid']],
      ['status=failed (none)', ['/console/transactions?status=failed']],
      ['method=wechat (none)', ['/console/transactions?payment_method=wechat']],
      ['today', [`/console/transactions?from=${day}&to=${day}`]],
      ['page at 50 %', [`/console/transactions?after=${mid.created_at}_${mid.order_id}`]],
      ['refunds', ['/console/refunds']],
      ['notification log, failing', ['/console/notifications?state=failing']],
      ['search merchant_reference', refs.map((r) => `/console/transactions?q=${r}`)],
      [
        'search order_id',
        refs.map(
          (_, k) => `/console/transactions?q=20000101${String(1 + Math.floor(((k + 1) * n) / 51)).padStart(8, '0')}`,
        ),
      ],
    ];
    for (const [who, kind] of [
      ['merchant owner', 'merchant'],
      ['operator', 'operator'],
    ]) {
      const cookie = await signIn(gw.url, gw.consoleUsers[kind]);
      for (const [name, paths] of cases) {
        const r = await timePages(gw.url, cookie, paths);
        log(
          `${engine} console ${who}: ${name}: p50 ${fmt(r.p50)} ms, p99 ${fmt(r.p99)} ms (${r.rows} rows on the page); gateway's own memory ${gw.memory().anonMB.toFixed(0)} MB`,
        );
        row({
          group: 'console',
          name: `list ${name} (${who}) @ ${n.toLocaleString('en')}`,
          engine,
          p50: r.p50,
          p99: r.p99,
          max: r.max,
          note: `${SAMPLES} pages in turn; ${r.rows} rows`,
          target: `p99 < ${TARGET_P99_MS} ms`,
          verdict: r.p99 < TARGET_P99_MS ? 'PASS' : 'FAIL',
        });
      }
    }
    // The full export, as the operator (every order), reading as fast as the gateway writes.
    const cookie = await signIn(gw.url, gw.consoleUsers.operator);
    // The process's own memory (RssAnon), sampled while it streams: the database's pages that
    // SQLite maps count in RSS too, but they are the file cache's, not the export's.
    const before = gw.memory();
    let peakAnon = before.anonMB;
    const sampler = setInterval(() => (peakAnon = Math.max(peakAnon, gw.memory().anonMB)), 50);
    const t1 = performance.now();
    const res = await fetch(`${gw.url}/console/transactions/export.csv`, { headers: { cookie } });
    let bytes = 0;
    let lines = 0;
    for await (const chunk of res.body) {
      bytes += chunk.length;
      for (const b of chunk) if (b === 10) lines++;
    }
    const seconds = (performance.now() - t1) / 1000;
    clearInterval(sampler);
    log(
      `${engine} console export: ${lines - 1} rows, ${(bytes / 1e6).toFixed(0)} MB in ${seconds.toFixed(1)} s; gateway's own memory ${before.anonMB.toFixed(0)} MB before, peak ${peakAnon.toFixed(0)} MB (RSS ${before.rssMB.toFixed(0)} MB before)`,
    );
    row({
      group: 'console',
      name: `CSV export of ${n.toLocaleString('en')} orders`,
      engine,
      note: `${(bytes / 1e6).toFixed(0)} MB in ${seconds.toFixed(1)} s (${fmt((lines - 1) / seconds, 0)} rows/s); gateway's own memory (RssAnon) ${before.anonMB.toFixed(0)} MB before, peak ${peakAnon.toFixed(0)} MB`,
      target: 'flat memory (+ < 100 MB)',
      verdict: peakAnon - before.anonMB < 100 ? 'PASS' : 'FAIL',
    });
  } finally {
    await gw.stop();
  }
}
