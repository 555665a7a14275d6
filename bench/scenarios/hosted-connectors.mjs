// The providers whose payment the hosted page opens (POLi, CoinPayments, Azupay's PayID, UnionPay),
// in the connector scenario (connectors.mjs: its gateway, floors and fakes). A merchant's create
// asks no provider anything for these; the customer's first GET of the hosted page does. So the
// orders are created first (hosted, host_type 0), and what is measured is that first GET, from
// `CONNECTIONS` connections spread over one provider delay: its overhead is the response time less
// the time its call spent at the provider, as the fake measured it. UnionPay's page calls no
// provider (it signs the consume form, which the browser posts to UnionPay): its overhead is the
// whole response time, and the bench then posts the form as the browser would; with no provider's
// delay to pace them, its connections open a page every two provider delays each (half the rate
// the others' could reach), not back to back, which would measure the queue of a saturated CPU
// rather than the time of a page. Then the provider
// pays and notifies as in connectors.mjs, and the notification's round trip is taken less the time
// the gateway's call checking it (POLi GetTransaction, CoinPayments' invoice, Azupay's request,
// UnionPay queryTrans) spent at the provider. Floors (d) and (e) are the same pages and
// notifications on bench/floors/hosted-providers.mjs. Targets (SQLite; PostgreSQL reported):
// overhead p50 at most floor (e)'s p50 + 0.5 ms, p99 at most 1.5 x floor (e)'s, for the page and
// for the notification.
import { Agent, request } from 'undici';
import { runLoad, runSpreadLoad } from '../lib/load.mjs';
import { CONNECTIONS, DURATION, PROVIDER_DELAY_MS, WARMUP, log, loadavg, sleep } from '../lib/options.mjs';
import { createReq } from '../lib/requests.mjs';
import { row } from '../lib/results.mjs';
import { fmt, summarize } from '../lib/stats.mjs';
import { cpuMeter, floorTarget } from './connector-targets.mjs';

export const HOSTED_PROVIDERS = [
  { payment_method: 'polipay', provider: 'poli', currency: 'NZD' },
  { payment_method: 'coin_payments', provider: 'coinpayments', currency: 'NZD' },
  { payment_method: 'payid', provider: 'azupay', currency: 'AUD' },
  { payment_method: 'upi_upop', provider: 'unionpay', currency: 'NZD', form: true },
];

/** The gateway's order_id of an out_trade_no (domain/channel.ts outTradeNo: a letter and an attempt after it). */
const orderOf = (out_trade_no) => String(out_trade_no).replace(/[A-Z]\d*$/, '');
const ORDER_ID = /id="order-id">(\d+)</;

/** The pages of `count` hosted orders created on `target` for `payment_method`: [{ tag, nonce }]. */
async function createPages(target, merchant, payment_method, count) {
  const pages = [];
  await runLoad({
    url: target.url,
    connections: CONNECTIONS,
    amount: count,
    next: createReq(merchant, { payment_method, named: true }),
    onOk: (tag, body) => pages.push({ tag, nonce: JSON.parse(body).nonce }),
  });
  return pages;
}

const pageReq = (pages) => () => {
  const p = pages.pop();
  return p ? { method: 'GET', path: `/v2/checkout/${p.nonce}`, headers: { accept: 'text/html' }, tag: p.tag } : null;
};

const ENTITIES = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", '#x27': "'" };
const unescape = (s) => s.replace(/&(amp|lt|gt|quot|#39|#x27);/g, (_, e) => ENTITIES[e]);

/** The browser's post of UnionPay's consume form, read from the page. */
function formOf(html) {
  const form = /<form id="unionpay-form"[^>]*action="([^"]*)"[^>]*>([\s\S]*?)<\/form>/.exec(html);
  if (!form) return undefined;
  const fields = new URLSearchParams();
  for (const m of form[2].matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g))
    fields.append(unescape(m[1]), unescape(m[2]));
  return { action: unescape(form[1]), body: fields.toString() };
}

/** One measured run of page opens on `target` (the gateway or a floor), and what the fakes saw of it. */
async function measureOpens(target, merchant, fakes, p, { db, duration = DURATION } = {}) {
  const delay = PROVIDER_DELAY_MS;
  const m = { ...merchant, wallet_id: merchant.wallets?.[p.currency] ?? merchant.wallet_id };
  // Enough pages for the run: one per connection per provider delay at most.
  const perSecond = (CONNECTIONS * 1000) / Math.max(delay, 1);
  const pages = await createPages(target, m, p.payment_method, Math.ceil(perSecond * duration * 1.2));
  const made = pages.length;
  await sleep(delay + 500);
  await fakes.ask({ type: 'notifications' });
  const answered = new Map(); // order_id -> the page's response time (ms)
  const posts = { sent: 0, failed: 0, pending: [] };
  const agent = new Agent({ connections: 16 });
  const cpu = cpuMeter(target, fakes, db);
  const r = await runSpreadLoad({
    url: target.url,
    connections: CONNECTIONS,
    duration,
    spreadMs: delay,
    ...(p.form && { connectionRate: 1000 / (2 * Math.max(delay, 1)) }),
    next: pageReq(pages),
    accept: (status) => status === 200,
    onOk: (_tag, body, ms) => {
      const order_id = ORDER_ID.exec(body)?.[1];
      if (order_id === undefined) return;
      answered.set(order_id, ms);
      if (!p.form) return;
      const form = formOf(body);
      if (!form) return void posts.failed++;
      posts.sent++;
      posts.pending.push(
        request(form.action, {
          method: 'POST',
          dispatcher: agent,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: form.body,
        })
          .then((res) => res.body.text().then(() => res.statusCode !== 200 && posts.failed++))
          .catch(() => posts.failed++),
      );
    },
  });
  await Promise.all(posts.pending);
  await agent.close();
  // The last payments opened are paid (and notified, and checked at the provider) after the run: wait for them.
  await sleep(2 * delay + 1500);
  const used = cpu.perOrder(r.ok);
  const notes = (await fakes.ask({ type: 'notifications' }))[p.provider];
  const held = new Map(notes.held.map(([out_trade_no, ms]) => [orderOf(out_trade_no), ms]));
  const overheads = [];
  for (const [order_id, ms] of answered) {
    if (p.form) overheads.push(ms);
    else if (held.has(order_id)) overheads.push(ms - held.get(order_id));
  }
  return {
    r,
    cpu: used,
    notes,
    made,
    posts,
    answered: answered.size,
    load: loadavg(),
    c: summarize(overheads),
    nominal: summarize(r.latencies.map((ms) => ms - (p.form ? 0 : delay))),
    n: summarize(notes.latencies),
  };
}

export async function hostedConnectorRuns({ engine, gw, floor, floorE, fakes, floorMerchant, db }) {
  const delay = PROVIDER_DELAY_MS;
  // The pages' code is warmed up on every process before any is measured (as connectors.mjs does for the creates).
  if (WARMUP > 0)
    for (const p of HOSTED_PROVIDERS)
      for (const [target, m] of [
        [gw, gw.merchant],
        [floor, floorMerchant],
        [floorE, floorMerchant],
      ])
        await measureOpens(target, m, fakes, p, { duration: WARMUP });
  for (const p of HOSTED_PROVIDERS) {
    const g = await measureOpens(gw, gw.merchant, fakes, p, { db });
    const f = await measureOpens(floor, floorMerchant, fakes, p);
    const e = await measureOpens(floorE, floorMerchant, fakes, p, { db });
    const over = p.form
      ? 'the whole response (no provider call: the browser posts the form)'
      : `less the call's time at the provider (${delay} ms delay)`;
    const vsFloor = `floor (d) p50 ${fmt(f.c.p50, 2)}, p99 ${fmt(f.c.p99, 2)}; floor (e) p50 ${fmt(e.c.p50, 2)}, p99 ${fmt(e.c.p99, 2)}`;
    const vsFloorN = `floor (d) p50 ${fmt(f.n.p50, 2)}, p99 ${fmt(f.n.p99, 2)}; floor (e) p50 ${fmt(e.n.p50, 2)}, p99 ${fmt(e.n.p99, 2)}`;
    const forms = p.form ? `; forms posted ${g.posts.sent}, failed ${g.posts.failed}` : '';
    log(
      `${engine} ${p.provider} page open: ${fmt(g.r.rps, 0)} pages/s, overhead p50 ${fmt(g.c.p50, 2)} ms, p99 ${fmt(g.c.p99, 2)} ms, max ${fmt(g.c.max, 1)} ms, ${over} (${g.c.n} of ${g.answered} matched, ${g.made} made); ${vsFloor}; bad ${g.r.bad} ${JSON.stringify(g.r.badCodes)}, errors ${g.r.errors}${forms}; ${g.cpu}; loadavg ${g.load}`,
    );
    log(
      `${engine} ${p.provider} notification: ${g.n.n} taken, p50 ${fmt(g.n.p50, 2)} ms, p99 ${fmt(g.n.p99, 2)} ms, max ${fmt(g.n.max, 1)} ms; not acknowledged ${g.notes.failed}; ${vsFloorN}`,
    );
    for (const [name, x] of [
      ['floor (d)', f],
      ['floor (e)', e],
    ])
      log(
        `${name} ${p.provider} page open: ${fmt(x.r.rps, 0)} pages/s, overhead p50 ${fmt(x.c.p50, 2)} ms, p99 ${fmt(x.c.p99, 2)} ms (${x.c.n} of ${x.answered} matched); notification p50 ${fmt(x.n.p50, 2)}, p99 ${fmt(x.n.p99, 2)}, not acknowledged ${x.notes.failed}; bad ${x.r.bad} ${JSON.stringify(x.r.badCodes)}, errors ${x.r.errors}; ${x.cpu}`,
      );
    row({
      group: 'connectors',
      name: `page open via ${p.provider} (${p.payment_method}): overhead, ${over}`,
      engine,
      rps: g.r.rps,
      p50: g.c.p50,
      p99: g.c.p99,
      max: g.c.max,
      ok: g.r.ok,
      bad: g.r.bad,
      errors: g.r.errors,
      ...floorTarget(engine, g.c, e.c),
      note: `the hosted page's first GET, ${CONNECTIONS} connections; ${vsFloor}${forms}; ${g.cpu}; loadavg ${g.load}`,
    });
    row({
      group: 'connectors',
      name: `pay via ${p.provider}: the provider's notification, less its check at the provider`,
      engine,
      rps: g.n.n / DURATION,
      p50: g.n.p50,
      p99: g.n.p99,
      max: g.n.max,
      ok: g.n.n - g.notes.failed,
      bad: g.notes.failed,
      ...floorTarget(engine, g.n, e.n),
      note: `round trip at the provider less the gateway's call checking it, one per payment opened, paid 50 ms after; ${vsFloorN}`,
    });
    for (const [name, x, what] of [
      ['floor (d)', f, 'the protocol alone'],
      ['floor (e)', e, 'the protocol and the order stored'],
    ])
      row({
        group: 'connectors',
        name: `${name}: page open via ${p.provider}, ${what} (no target)`,
        engine,
        rps: x.r.rps,
        p50: x.c.p50,
        p99: x.c.p99,
        max: x.c.max,
        ok: x.r.ok,
        bad: x.r.bad,
        errors: x.r.errors,
        note: `its notification p50 ${fmt(x.n.p50, 2)}, p99 ${fmt(x.n.p99, 2)}, not acknowledged ${x.notes.failed}; ${x.cpu}`,
      });
  }
}
