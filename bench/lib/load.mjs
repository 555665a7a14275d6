// Load generation with autocannon, in this (the generator's) process.
import autocannon from 'autocannon';
import { percentile } from './stats.mjs';

const CODE = /"code":(-?\d+)/;

/**
 * Runs one load. `next(context)` returns the next request { method, path, headers, body, tag } or
 * null when the supply is used up (the run then stops early). A response counts as `ok` when it
 * is HTTP 200 with JSON `code` 0, or when `accept(status, body)` says so (a page);
 * `onOk(tag, body, ms)` sees each of those (ms: from the request's making, just before it is
 * written, to its answer). `connectionRate`: at most that many requests per second on each
 * connection (otherwise each sends its next as soon as its last is answered).
 * Returns { rps, ok, bad, badCodes, p50, p90, p99, p999, max, mean, seconds }.
 */
export async function runLoad({
  url,
  connections = 50,
  duration = 10,
  amount,
  next,
  onOk,
  accept,
  connectionRate,
  timeout = 30,
}) {
  let ok = 0;
  let bad = 0;
  const badCodes = {};
  let exhausted = false;
  let instance;
  const started = performance.now();
  const opts = {
    url,
    connections,
    timeout,
    ...(connectionRate && { connectionRate }),
    ...(amount ? { amount } : { duration }),
    requests: [
      {
        setupRequest(req, context) {
          const r = exhausted ? null : next(context);
          if (!r) {
            if (!exhausted) {
              exhausted = true;
              setImmediate(() => instance.stop());
            }
            context.tag = undefined;
            context.dead = true;
            return { ...req, method: 'GET', path: '/healthz', body: undefined, headers: {} };
          }
          context.tag = r.tag;
          context.dead = false;
          context.sentAt = performance.now();
          return { ...req, method: r.method ?? 'GET', path: r.path, headers: r.headers ?? {}, body: r.body };
        },
        onResponse(status, body, context) {
          if (context.dead) return;
          const m = accept ? undefined : CODE.exec(body.length > 64 ? body.slice(0, 64) : body);
          const code = accept
            ? accept(status, body)
              ? 0
              : `http${status}`
            : status === 200 && m
              ? Number(m[1])
              : `http${status}`;
          if (code === 0) {
            ok++;
            if (onOk) onOk(context.tag, body, performance.now() - context.sentAt);
          } else {
            bad++;
            badCodes[code] = (badCodes[code] ?? 0) + 1;
            if (bad <= 3 && process.env.BENCH_DEBUG) console.error('bad response', status, body.slice(0, 300));
          }
        },
      },
    ],
  };
  instance = autocannon(opts);
  // Every response time (ms), so runs split into slices can be merged into one distribution.
  const latencies = [];
  instance.on('response', (_client, _status, _bytes, responseTime) => latencies.push(responseTime));
  const result = await instance;
  const seconds = (performance.now() - started) / 1000;
  const L = result.latency;
  return {
    rps: ok / seconds,
    ok,
    bad,
    badCodes,
    errors: result.errors + result.timeouts,
    p50: L.p50,
    p90: L.p90,
    p99: L.p99,
    p999: L.p99_9,
    max: L.max,
    mean: L.mean,
    seconds,
    exhausted,
    latencies,
  };
}

/**
 * `connections` closed-loop connections whose first requests are spread evenly over `spreadMs`
 * (connection i starts at i * spreadMs / connections), each its own load of one connection, all
 * for `duration` seconds. Against a server whose every call takes the same time (a provider's fake
 * with a fixed delay), connections started together stay together: every request of a run then
 * arrives in waves of `connections` at once, and the tail measures the queue of a wave. Spread over
 * one call's time they arrive as independent customers would. Returns what runLoad does (the
 * percentiles of every response).
 */
export async function runSpreadLoad({
  url,
  connections = 50,
  duration = 10,
  spreadMs,
  next,
  onOk,
  accept,
  connectionRate,
  timeout = 30,
}) {
  const started = performance.now();
  const step = spreadMs / connections;
  const runs = await Promise.all(
    Array.from({ length: connections }, (_, i) =>
      new Promise((resolve) => setTimeout(resolve, i * step)).then(() =>
        runLoad({ url, connections: 1, duration, next, onOk, accept, connectionRate, timeout }),
      ),
    ),
  );
  const seconds = (performance.now() - started) / 1000;
  const latencies = runs.flatMap((r) => r.latencies).sort((a, b) => a - b);
  const sum = (k) => runs.reduce((a, r) => a + r[k], 0);
  const badCodes = {};
  for (const r of runs) for (const [code, n] of Object.entries(r.badCodes)) badCodes[code] = (badCodes[code] ?? 0) + n;
  return {
    rps: sum('ok') / seconds,
    ok: sum('ok'),
    bad: sum('bad'),
    badCodes,
    errors: sum('errors'),
    p50: percentile(latencies, 50),
    p90: percentile(latencies, 90),
    p99: percentile(latencies, 99),
    p999: percentile(latencies, 99.9),
    max: latencies[latencies.length - 1] ?? NaN,
    mean: latencies.reduce((a, b) => a + b, 0) / Math.max(latencies.length, 1),
    seconds,
    exhausted: runs.some((r) => r.exhausted),
    latencies,
  };
}
