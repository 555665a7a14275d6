// What the connector scenario's rows share: the CPU an order costs each process, and the target of
// a provider's overhead, which is relative to floor (e) of the same run (docs/performance.md).
import { fmt } from '../lib/stats.mjs';

/** From now: the CPU per order of the target, PostgreSQL (`db`, when the run's engine is), the fakes and the bench. */
export function cpuMeter(target, fakes, db) {
  const t0 = { target: target.cpuMs(), fakes: fakes.cpuMs(), bench: process.cpuUsage(), db: db?.() };
  return {
    perOrder(orders) {
      const bench = process.cpuUsage(t0.bench);
      const per = (ms) => fmt((ms * 1000) / Math.max(orders, 1), 0);
      return `CPU per order, us: server ${per(target.cpuMs() - t0.target)}${db ? `, postgres ${per(db() - t0.db)}` : ''}, fakes ${per(fakes.cpuMs() - t0.fakes)}, bench ${per((bench.user + bench.system) / 1000)}`;
    },
  };
}

/**
 * The gateway's overhead `g` against floor (e)'s `e` (each { p50, p99 }): p50 at most floor (e)'s
 * + 0.5 ms and p99 at most 1.5 x floor (e)'s, on SQLite; on PostgreSQL reported without a verdict.
 * The row's verdict and target.
 */
export function floorTarget(engine, g, e) {
  const maxP50 = e.p50 + 0.5;
  const maxP99 = 1.5 * e.p99;
  const target = `p50 <= floor (e) + 0.5 ms (${fmt(maxP50, 2)}), p99 <= 1.5 x floor (e) (${fmt(maxP99, 2)})`;
  if (engine !== 'sqlite') return { verdict: 'reported', target };
  const pass = Number.isFinite(g.p50) && g.p50 <= maxP50 && g.p99 <= maxP99;
  return { verdict: pass ? 'PASS' : 'FAIL', target };
}
