import type { Log } from '../ports/log.js';
import type { Store } from '../ports/store.js';
import { CHECKOUT_VISIT_MS } from './checkout-visit.js';
import type { GatewayConfig } from './context.js';
import { noncePrefix } from './random-pool.js';

// Retention: a callback host that never answers adds an attempt every 30 s for ever, and every
// order leaves nonces behind. A pass removes what support no longer needs, in batches, on every
// instance; what it keeps and why is in docs/decisions.md (Retention).

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * A notification not delivered keeps its first attempts (how it started failing) and its latest
 * (how it fails now); those between are counted on the notification and removed.
 */
export const ATTEMPTS_KEPT = { first: 5, last: 20 } as const;

/**
 * How long an unused nonce outlives its expiry, and a hosted-page visit its end: until then a late
 * customer or integrator is told that the link or the visit expired, rather than that the link is
 * unknown or used.
 */
export const NONCE_GRACE_MS = 7 * DAY_MS;

/** Rows per statement: each batch is a short transaction, so no lock is held for long. */
export const RETENTION_BATCH = 1000;

/** The first pass waits this long after start (or one interval, if shorter): out of the way of the start, yet an instance restarted often still runs it. */
export const FIRST_PASS_DELAY_MS = 60_000;

export interface RetentionSettings {
  /** How often each instance runs a pass; 0: never (RETENTION_INTERVAL_MS). */
  intervalMs: number;
  /** Attempts of notifications delivered more than this many days ago are removed (RETENTION_ATTEMPTS_DAYS). */
  attemptsDays: number;
}

export const DEFAULT_RETENTION: RetentionSettings = { intervalMs: 60 * 60 * 1000, attemptsDays: 30 };

/** The settings with their defaults, or an error that names the variable to fix. */
export function resolveRetentionSettings(over: Partial<RetentionSettings> = {}): RetentionSettings {
  const s = {
    intervalMs: over.intervalMs ?? DEFAULT_RETENTION.intervalMs,
    attemptsDays: over.attemptsDays ?? DEFAULT_RETENTION.attemptsDays,
  };
  if (!Number.isInteger(s.intervalMs) || (s.intervalMs !== 0 && s.intervalMs < 1000)) {
    throw new Error(
      `RETENTION_INTERVAL_MS must be whole milliseconds, at least 1000 (or 0 to turn retention off), not ${s.intervalMs}`,
    );
  }
  if (!Number.isInteger(s.attemptsDays) || s.attemptsDays < 1) {
    throw new Error(`RETENTION_ATTEMPTS_DAYS must be a whole number of days, at least 1, not ${s.attemptsDays}`);
  }
  return s;
}

export interface RetentionCounts {
  delivered_attempts: number;
  undelivered_attempts: number;
  nonces: number;
  visits: number;
}

export interface RetentionPass {
  now: number;
  attemptsDays: number;
  /** Rows per statement (default RETENTION_BATCH). */
  batch?: number;
  /** Asked before each batch: true ends the pass there (the gateway is stopping). */
  stopping?: () => boolean;
  /** The longest a nonce lives from its creation to its expiry: nonceLifeMs(config). */
  nonceLifeMs: number;
}

/**
 * The longest a nonce can live: its expiry is NONCE_TTL_MS after its creation, and ORDER_EXPIRY_MS
 * (which the gateway refuses below NONCE_TTL_MS) bounds any link of its order, so a nonce that
 * ever lived longer is still covered.
 */
export function nonceLifeMs(config: Pick<GatewayConfig, 'nonceTtlMs' | 'orderExpiryMs'>): number {
  return Math.max(config.nonceTtlMs, config.orderExpiryMs);
}

/**
 * The nonces, with no index of those due (it would cost every create an entry): a sweep of the
 * primary key, which sorts them by creation time (random-pool.ts, orderNonce), in batches. Whatever
 * is due at `before` (now - NONCE_GRACE_MS) was made before it, so a sweep ends there; it starts
 * where a nonce the previous completed sweep (at `swept`, NONCES_SWEPT_BEFORE) read past without
 * finding it due could have been made: its expiry was at least `swept - CHECKOUT_VISIT_MS` (a
 * visit's cutoff is that much earlier), so its creation at least that less its life. The first
 * sweep, with nothing recorded, reads the whole table, above `before` too, so that nonces made in
 * an earlier format (which do not sort by time) are looked at once. Only a sweep that completes is
 * recorded: a stopped one is done again from the same place.
 */
export async function sweepNonces(
  store: Pick<Store, 'retention'>,
  pass: RetentionPass,
): Promise<{ nonces: number; visits: number }> {
  const r = store.retention;
  const batch = pass.batch ?? RETENTION_BATCH;
  const before = pass.now - NONCE_GRACE_MS;
  // A visit lasts CHECKOUT_VISIT_MS from its nonce's use, which comes before the nonce expires.
  const cutoff = { nonces: before, visits: before - CHECKOUT_VISIT_MS };
  const swept = await r.noncesSweptBefore();
  let after = swept === null ? '' : noncePrefix(swept - CHECKOUT_VISIT_MS - pass.nonceLifeMs);
  const upTo = swept === null ? null : noncePrefix(before);
  const removed = { nonces: 0, visits: 0 };
  for (;;) {
    if (pass.stopping?.()) return removed;
    const done = await r.sweepNonces({ after, before: upTo }, cutoff, batch);
    removed.nonces += done.nonces;
    removed.visits += done.visits;
    if (done.last === null || done.scanned < batch) break;
    after = done.last;
    await new Promise((resolve) => setImmediate(resolve));
  }
  await r.setNoncesSweptBefore(before);
  return removed;
}

/** One pass: the attempts in batches until a batch comes back short, then the nonce sweep. Returns what it removed. */
export async function runRetentionPass(store: Pick<Store, 'retention'>, pass: RetentionPass): Promise<RetentionCounts> {
  const { now } = pass;
  const batch = pass.batch ?? RETENTION_BATCH;
  const r = store.retention;
  const drain = async (removeBatch: () => Promise<number>): Promise<number> => {
    let total = 0;
    while (!pass.stopping?.()) {
      const removed = await removeBatch();
      total += removed;
      // Short: nothing more, or only rows another instance holds, which it removes.
      if (removed < batch) break;
      // Requests and other writers go between batches.
      await new Promise((resolve) => setImmediate(resolve));
    }
    return total;
  };
  const delivered_attempts = await drain(() => r.pruneDeliveredAttempts(now - pass.attemptsDays * DAY_MS, batch));
  const undelivered_attempts = await drain(() => r.pruneUndeliveredAttempts(ATTEMPTS_KEPT, batch));
  const { nonces, visits } = await sweepNonces(store, pass);
  return { delivered_attempts, undelivered_attempts, nonces, visits };
}

/**
 * Runs a pass FIRST_PASS_DELAY_MS after start, then every intervalMs; a pass still running is not
 * joined by another. Returns a stop function: a running pass ends before its next batch.
 */
export function startRetention(
  ctx: { store: Pick<Store, 'retention'>; now(): number; config: Pick<GatewayConfig, 'nonceTtlMs' | 'orderExpiryMs'> },
  log: Log,
  settings: RetentionSettings,
): () => Promise<void> {
  const lifeMs = nonceLifeMs(ctx.config);
  if (settings.intervalMs === 0) return async () => {};
  let running: Promise<void> | null = null;
  let stopping = false;
  const round = () => {
    if (running || stopping) return;
    running = runRetentionPass(ctx.store, {
      now: ctx.now(),
      attemptsDays: settings.attemptsDays,
      nonceLifeMs: lifeMs,
      stopping: () => stopping,
    })
      .then(
        (removed) => {
          if (Object.values(removed).some((n) => n > 0))
            log.info(removed, 'retention: old notification attempts, nonces and visits removed');
        },
        (e: unknown) => log.error({ err: e }, 'retention pass failed; trying again at the next interval'),
      )
      .finally(() => (running = null));
  };
  const first = setTimeout(round, Math.min(FIRST_PASS_DELAY_MS, settings.intervalMs)).unref();
  const every = setInterval(round, settings.intervalMs).unref();
  return async () => {
    stopping = true;
    clearTimeout(first);
    clearInterval(every);
    await running;
  };
}
