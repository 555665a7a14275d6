// Create and pay through each real connector, against the fake providers of the tests in a process
// of their own (bench/fake-providers.mjs), answering every call `--provider-delay` ms after it came.
// Create: merchant-hosted creates (host_type 1: one precreate / Native order at the provider each),
// 50 connections, their first requests spread over one provider delay (runSpreadLoad: started
// together, every request would arrive in waves of 50 and p99 would be a wave's queue; that case is
// measured too, as a row without a target). The gateway's overhead is each create's response time
// less the time its call spent at the provider, as the fake measured it (its request's arrival to
// its answer's end: the delay, and the fake's own signing and waiting for its CPU, which shares
// this machine); the response time less the nominal delay is reported beside it. Pay: the provider
// pays every payment shortly after it was opened and notifies the gateway (signed, and for WeChat
// Pay encrypted); the notification's round trip, measured by the provider, is all the gateway's
// (no provider call is on that path). Targets (SQLite; PostgreSQL reported): overhead p50 at most
// floor (e)'s p50 + 0.5 ms, p99 at most 1.5 x floor (e)'s, for the create and for the notification
// (connector-targets.mjs). The providers whose payment the hosted page opens (POLi, CoinPayments,
// Azupay, UnionPay) are measured after these, on the same processes (hosted-connectors.mjs).
// Floor (d) (bench/floors/connector-floor.mjs: the provider's protocol and nothing else, no
// database) is measured the same way right after the gateway, for each provider, with the same
// fakes: what this machine's processes, loopback and CPUs cost a call before any gateway work.
// Floor (e) (the same server with a store of the run's engine) adds the least storage a gateway
// that keeps its orders needs: the order committed durably before the provider is asked, its QR
// after, the payment durably before the notification is acknowledged. Neither floor has a target.
import { randomBytes } from 'node:crypto';
import { freshDatabase, pgServer, startGw } from '../lib/gateways.mjs';
import { runLoad, runSpreadLoad } from '../lib/load.mjs';
import {
  CONNECTIONS,
  CONNECTOR_FLOOR,
  DURATION,
  FAKE_PROVIDERS,
  PROVIDER_DELAY_MS,
  WARMUP,
  loadavg,
  log,
  sleep,
} from '../lib/options.mjs';
import { FLOOR_MERCHANT, floorFile } from '../lib/floors.mjs';
import { startChild } from '../lib/procs.mjs';
import { createReq } from '../lib/requests.mjs';
import { row } from '../lib/results.mjs';
import { fmt, summarize } from '../lib/stats.mjs';
import { cpuMeter, floorTarget } from './connector-targets.mjs';
import { hostedConnectorRuns } from './hosted-connectors.mjs';

const PROVIDERS = [
  { payment_method: 'alipay', provider: 'alipay' },
  { payment_method: 'wechat', provider: 'wechatpay' },
];

export async function connectorRuns(engine) {
  const delay = PROVIDER_DELAY_MS;
  const fakes = await startChild(FAKE_PROVIDERS, { delayMs: delay, payAfterMs: 50 });
  const gw = await startGw(await freshDatabase(engine), {
    masterKey: randomBytes(32).toString('base64'),
    accounts: Object.values(fakes.accounts),
  });
  const floor = await startChild(CONNECTOR_FLOOR, { key: FLOOR_MERCHANT.api_key, accounts: fakes.accounts });
  const store =
    engine === 'sqlite' ? { engine, file: floorFile('e') } : { engine, url: await pgServer.createDatabase('floor_e') };
  const floorE = await startChild(CONNECTOR_FLOOR, { key: FLOOR_MERCHANT.api_key, accounts: fakes.accounts, store });
  // PostgreSQL's own CPU per order goes beside the server's (on SQLite the database is in the server process).
  const db = engine === 'postgres' ? () => pgServer.cpuMs() : undefined;
  try {
    // Both providers are warmed up before either is measured: the first seconds after a start are
    // slower (compiling, the database's files growing), and the first provider measured would pay
    // for them alone. The warm-up runs at 50 connections at least, so that a run at a few is of
    // compiled code too.
    if (WARMUP > 0) {
      for (const { payment_method } of PROVIDERS) {
        for (const [target, m] of [
          [gw, gw.merchant],
          [floor, FLOOR_MERCHANT],
          [floorE, FLOOR_MERCHANT],
        ]) {
          await runLoad({
            url: target.url,
            connections: Math.max(CONNECTIONS, 50),
            duration: WARMUP,
            next: createReq(m, { mh: true, payment_method, named: true }),
          });
        }
      }
    }
    for (const { payment_method, provider } of PROVIDERS) {
      const g = await measureCalls(gw, gw.merchant, fakes, payment_method, provider, { db });
      const f = await measureCalls(floor, FLOOR_MERCHANT, fakes, payment_method, provider);
      const e = await measureCalls(floorE, FLOOR_MERCHANT, fakes, payment_method, provider, { db });
      const together = await measureCalls(gw, gw.merchant, fakes, payment_method, provider, { together: true, db });
      const vsFloor = `floor (d) p50 ${fmt(f.c.p50, 2)}, p99 ${fmt(f.c.p99, 2)}; floor (e) p50 ${fmt(e.c.p50, 2)}, p99 ${fmt(e.c.p99, 2)}`;
      log(
        `${engine} ${provider} create: ${fmt(g.r.rps, 0)} req/s, overhead p50 ${fmt(g.c.p50, 2)} ms, p99 ${fmt(g.c.p99, 2)} ms, max ${fmt(g.c.max, 1)} ms over each call's time at the provider (${g.c.n} of ${g.answered} matched); ${vsFloor}; over the nominal ${delay} ms: p50 ${fmt(g.nominal.p50, 2)}, p99 ${fmt(g.nominal.p99, 2)}; the fake's own lateness p50 ${fmt(g.atFake.p50, 2)}, p99 ${fmt(g.atFake.p99, 2)}; bad ${g.r.bad} ${JSON.stringify(g.r.badCodes)}, errors ${g.r.errors}; ${g.cpu}; loadavg ${g.load}`,
      );
      const vsFloorN = `floor (d) p50 ${fmt(f.n.p50, 2)}, p99 ${fmt(f.n.p99, 2)}; floor (e) p50 ${fmt(e.n.p50, 2)}, p99 ${fmt(e.n.p99, 2)}`;
      log(
        `${engine} ${provider} notification: ${g.n.n} taken, p50 ${fmt(g.n.p50, 2)} ms, p99 ${fmt(g.n.p99, 2)} ms, max ${fmt(g.n.max, 1)} ms; not acknowledged ${g.notes.failed}; ${vsFloorN}`,
      );
      log(
        `floor (d) ${provider} create: ${fmt(f.r.rps, 0)} req/s, overhead p50 ${fmt(f.c.p50, 2)} ms, p99 ${fmt(f.c.p99, 2)} ms, max ${fmt(f.c.max, 1)} ms (${f.c.n} of ${f.answered} matched); bad ${f.r.bad} ${JSON.stringify(f.r.badCodes)}, errors ${f.r.errors}; notifications not acknowledged ${f.notes.failed}; ${f.cpu}; loadavg ${f.load}`,
      );
      row({
        group: 'connectors',
        name: `create via ${provider} (host_type 1): overhead over the call's time at the provider (${delay} ms delay)`,
        engine,
        rps: g.r.rps,
        p50: g.c.p50,
        p99: g.c.p99,
        max: g.c.max,
        ok: g.r.ok,
        bad: g.r.bad,
        errors: g.r.errors,
        ...floorTarget(engine, g.c, e.c),
        note: `response time less the call's time at the fake, ${CONNECTIONS} connections; ${vsFloor}; less the nominal delay: p50 ${fmt(g.nominal.p50, 1)}, p99 ${fmt(g.nominal.p99, 1)}; ${g.cpu}; loadavg ${g.load}`,
      });
      row({
        group: 'connectors',
        name: `pay via ${provider}: the provider's notification`,
        engine,
        rps: g.n.n / DURATION,
        p50: g.n.p50,
        p99: g.n.p99,
        max: g.n.max,
        ok: g.n.n - g.notes.failed,
        bad: g.notes.failed,
        ...floorTarget(engine, g.n, e.n),
        note: `round trip at the provider, one per payment opened, paid 50 ms after its QR was shown; ${vsFloorN}`,
      });
      row({
        group: 'connectors',
        name: `floor (d): create via ${provider}, the protocol alone (no target)`,
        engine,
        rps: f.r.rps,
        p50: f.c.p50,
        p99: f.c.p99,
        max: f.c.max,
        ok: f.r.ok,
        bad: f.r.bad,
        errors: f.r.errors,
        note: `measured right after the row above, same fakes and load; its notification p50 ${fmt(f.n.p50, 2)}, p99 ${fmt(f.n.p99, 2)}; ${f.cpu}`,
      });
      log(
        `floor (e) ${provider} create: ${fmt(e.r.rps, 0)} req/s, overhead p50 ${fmt(e.c.p50, 2)} ms, p99 ${fmt(e.c.p99, 2)} ms, max ${fmt(e.c.max, 1)} ms (${e.c.n} of ${e.answered} matched); its notification p50 ${fmt(e.n.p50, 2)}, p99 ${fmt(e.n.p99, 2)}; bad ${e.r.bad} ${JSON.stringify(e.r.badCodes)}, errors ${e.r.errors}; notifications not acknowledged ${e.notes.failed}; ${e.cpu}; loadavg ${e.load}`,
      );
      row({
        group: 'connectors',
        name: `floor (e): create via ${provider}, the protocol and the order stored (no target)`,
        engine,
        rps: e.r.rps,
        p50: e.c.p50,
        p99: e.c.p99,
        max: e.c.max,
        ok: e.r.ok,
        bad: e.r.bad,
        errors: e.r.errors,
        note: `floor (d) with the order committed durably before the provider's call, its QR after, the payment durably before the notification's answer; its notification p50 ${fmt(e.n.p50, 2)}, p99 ${fmt(e.n.p99, 2)}; ${e.cpu}`,
      });
      log(
        `${engine} ${provider} create, the ${CONNECTIONS} connections started together: overhead p50 ${fmt(together.c.p50, 2)} ms, p99 ${fmt(together.c.p99, 2)} ms, max ${fmt(together.c.max, 1)} ms; ${together.cpu}`,
      );
      row({
        group: 'connectors',
        name: `create via ${provider}, the connections started together (waves; no target)`,
        engine,
        rps: together.r.rps,
        p50: together.c.p50,
        p99: together.c.p99,
        max: together.c.max,
        ok: together.r.ok,
        bad: together.r.bad,
        errors: together.r.errors,
        note: `every request of the run arrives in waves of ${CONNECTIONS}; ${together.cpu}`,
      });
    }
    await hostedConnectorRuns({ engine, gw, floor, floorE, fakes, floorMerchant: FLOOR_MERCHANT, db });
  } finally {
    await floorE.stop();
    await floor.stop();
    await gw.stop();
    await fakes.stop();
  }
}

/** One measured run of creates against `target` (the gateway or floor (d)), and what the fakes saw of it. */
async function measureCalls(target, merchant, fakes, payment_method, provider, { together = false, db } = {}) {
  const delay = PROVIDER_DELAY_MS;
  const next = createReq(merchant, { mh: true, payment_method, named: true });
  await sleep(delay + 500);
  await fakes.ask({ type: 'notifications' });
  const answered = new Map(); // merchant_reference (the order's product_name) -> the create's response time (ms)
  const meter = cpuMeter(target, fakes, db);
  const onOk = (tag, _body, ms) => answered.set(tag, ms);
  const r = together
    ? await runLoad({ url: target.url, connections: CONNECTIONS, duration: DURATION, next, onOk })
    : await runSpreadLoad({
        url: target.url,
        connections: CONNECTIONS,
        duration: DURATION,
        spreadMs: delay,
        next,
        onOk,
      });
  // The last payments opened are paid (and notified) after the run: wait for them.
  await sleep(delay + 1000);
  // CPU per order, everything it caused included (create, the provider's notification, the merchant's).
  const cpu = meter.perOrder(r.ok);
  const notes = (await fakes.ask({ type: 'notifications' }))[provider];
  const held = new Map(notes.held);
  const overheads = [];
  for (const [ref, ms] of answered) if (held.has(ref)) overheads.push(ms - held.get(ref));
  return {
    r,
    cpu,
    notes,
    answered: answered.size,
    load: loadavg(),
    c: summarize(overheads),
    nominal: summarize(r.latencies.map((ms) => ms - delay)),
    atFake: summarize([...held.values()].map((ms) => ms - delay)),
    n: summarize(notes.latencies),
  };
}
