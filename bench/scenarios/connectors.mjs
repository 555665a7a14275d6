// Create and pay through each real connector, against the fake providers of the tests in a process
// of their own (bench/fake-providers.mjs), answering every call `--provider-delay` ms after it came.
// Create: merchant-hosted creates (host_type 1: one precreate / Native order at the provider each),
// 50 connections. The gateway's overhead is each create's response time less the time its call
// spent at the provider, as the fake measured it (its request's arrival to its answer's end: the
// delay, and the fake's own signing and waiting for its CPU, which shares this machine); the
// response time less the nominal delay is reported beside it. Pay: the
// provider pays every payment shortly after it was opened and notifies the gateway (signed, and
// for WeChat Pay encrypted); the notification's round trip, measured by the provider, is all the
// gateway's (no provider call is on that path). Targets: overhead p50 < 2 ms, p99 < 10 ms.
import { randomBytes } from 'node:crypto';
import { freshDatabase, startGw } from '../lib/gateways.mjs';
import { runLoad } from '../lib/load.mjs';
import { CONNECTIONS, DURATION, FAKE_PROVIDERS, PROVIDER_DELAY_MS, WARMUP, loadavg, log, sleep } from '../lib/options.mjs';
import { startChild } from '../lib/procs.mjs';
import { createReq } from '../lib/requests.mjs';
import { row } from '../lib/results.mjs';
import { fmt, summarize } from '../lib/stats.mjs';

const PROVIDERS = [
  { payment_method: 'alipay', provider: 'alipay' },
  { payment_method: 'wechat', provider: 'wechatpay' },
];

export async function connectorRuns(engine) {
  const delay = PROVIDER_DELAY_MS;
  const fakes = await startChild(FAKE_PROVIDERS, { delayMs: delay, payAfterMs: 50 });
  const gw = await startGw(await freshDatabase(engine), { masterKey: randomBytes(32).toString('base64'), accounts: Object.values(fakes.accounts) });
  try {
    // Both providers are warmed up before either is measured: the first seconds after a start are
    // slower (compiling, the database's files growing), and the first provider measured would pay
    // for them alone. The warm-up runs at 50 connections at least, so that a run at a few is of
    // compiled code too.
    if (WARMUP > 0) {
      for (const { payment_method } of PROVIDERS) {
        await runLoad({ url: gw.url, connections: Math.max(CONNECTIONS, 50), duration: WARMUP, next: createReq(gw.merchant, { mh: true, payment_method, named: true }) });
      }
    }
    for (const { payment_method, provider } of PROVIDERS) {
      const next = createReq(gw.merchant, { mh: true, payment_method, named: true });
      await sleep(delay + 500);
      await fakes.ask({ type: 'notifications' });
      const answered = new Map(); // merchant_reference (the order's product_name) -> the create's response time (ms)
      const cpu0 = { gw: gw.cpuMs(), fakes: fakes.cpuMs(), bench: process.cpuUsage() };
      const r = await runLoad({ url: gw.url, connections: CONNECTIONS, duration: DURATION, next, onOk: (tag, _body, ms) => answered.set(tag, ms) });
      // The last payments opened are paid (and notified) after the run: wait for them.
      await sleep(delay + 1000);
      // CPU per order, everything it caused included (create, the provider's notification, the merchant's).
      const bench = process.cpuUsage(cpu0.bench);
      const perOrder = (ms) => fmt((ms * 1000) / Math.max(r.ok, 1), 0);
      const cpu = `CPU per order, us: gateway ${perOrder(gw.cpuMs() - cpu0.gw)}, fakes ${perOrder(fakes.cpuMs() - cpu0.fakes)}, bench ${perOrder((bench.user + bench.system) / 1000)}`;
      const notes = (await fakes.ask({ type: 'notifications' }))[provider];
      const held = new Map(notes.held);
      const overheads = [];
      for (const [ref, ms] of answered) if (held.has(ref)) overheads.push(ms - held.get(ref));
      const c = summarize(overheads);
      const nominal = summarize(r.latencies.map((ms) => ms - delay));
      const atFake = summarize([...held.values()].map((ms) => ms - delay));
      const n = summarize(notes.latencies);
      const load = loadavg();
      log(`${engine} ${provider} create: ${fmt(r.rps, 0)} req/s, overhead p50 ${fmt(c.p50, 2)} ms, p99 ${fmt(c.p99, 2)} ms, max ${fmt(c.max, 1)} ms over each call's time at the provider (${c.n} of ${answered.size} matched); over the nominal ${delay} ms: p50 ${fmt(nominal.p50, 2)}, p99 ${fmt(nominal.p99, 2)}; the fake's own lateness p50 ${fmt(atFake.p50, 2)}, p99 ${fmt(atFake.p99, 2)}; bad ${r.bad} ${JSON.stringify(r.badCodes)}, errors ${r.errors}; ${cpu}; loadavg ${load}`);
      log(`${engine} ${provider} notification: ${n.n} taken, p50 ${fmt(n.p50, 2)} ms, p99 ${fmt(n.p99, 2)} ms, max ${fmt(n.max, 1)} ms; not acknowledged ${notes.failed}`);
      row({ group: 'connectors', name: `create via ${provider} (host_type 1): overhead over the call's time at the provider (${delay} ms delay)`, engine, rps: r.rps, p50: c.p50, p99: c.p99, max: c.max, ok: r.ok, bad: r.bad, errors: r.errors, maxP50: 2, maxP99: 10,
        note: `response time less the call's time at the fake, ${CONNECTIONS} connections; less the nominal delay: p50 ${fmt(nominal.p50, 1)}, p99 ${fmt(nominal.p99, 1)}; ${cpu}; loadavg ${load}` });
      row({ group: 'connectors', name: `pay via ${provider}: the provider's notification`, engine, rps: n.n / DURATION, p50: n.p50, p99: n.p99, max: n.max, ok: n.n - notes.failed, bad: notes.failed, maxP50: 2, maxP99: 10,
        note: `round trip at the provider, one per payment opened, paid 50 ms after its QR was shown` });
    }
  } finally {
    await gw.stop();
    await fakes.stop();
  }
}
