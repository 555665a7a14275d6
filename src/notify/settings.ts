import { parseCidrList, type Cidr } from './callback-safety.js';

export interface NotifySettings {
  /** Set false to run the gateway without delivering (notifications still queue in the outbox). */
  enabled: boolean;
  /**
   * Wait before each retry, by failed-attempt count: the first failure waits [0], the second [1],
   * and the last entry repeats for ever. The spec: "about every 30 seconds, no limit".
   */
  retryScheduleMs: readonly number[];
  /** Each retry wait varies by up to this fraction either way, so a merchant back from an outage is not hit all at once. */
  jitter: number;
  /** Connect, response-headers and body timeout of one attempt, and the cap on the whole attempt. */
  timeoutMs: number;
  /** How long a claimed row is reserved for this instance; must comfortably exceed timeoutMs. */
  leaseMs: number;
  /** How often the worker searches the whole outbox for due rows, however often pokes bring it notifications to claim by id. */
  pollIntervalMs: number;
  /** Attempts in flight at once, all merchants together. */
  concurrency: number;
  /**
   * Attempts in flight at once to one callback host (host:port) to begin with. The limit adapts:
   * it grows while the host answers well and notifications wait for it, up to hostConcurrencyMax,
   * and halves on timeouts, connection errors, 5xx and 429 (scheduler.ts).
   */
  hostConcurrency: number;
  /** The most a callback host's limit grows to. */
  hostConcurrencyMax: number;
  /**
   * On shutdown, how long attempts in flight may still finish and be recorded before they are
   * aborted. An aborted attempt is made again by the next run (or another instance): a duplicate
   * the merchant de-duplicates by webhook-id, which a short wait spares it on every deploy.
   */
  stopGraceMs: number;
  /** Addresses opted back in despite the callback safety rules. */
  allowCidrs: readonly Cidr[];
  /** Names this process in outbox.claimed_by; unique per process by default. */
  instanceId?: string;
}

export const DEFAULT_NOTIFY_SETTINGS: NotifySettings = {
  enabled: true,
  retryScheduleMs: [30_000],
  jitter: 0.1,
  timeoutMs: 10_000,
  leaseMs: 60_000,
  pollIntervalMs: 1_000,
  concurrency: 64,
  hostConcurrency: 4,
  hostConcurrencyMax: 32,
  stopGraceMs: 5_000,
  allowCidrs: [],
};

/** Parses a retry schedule such as "1000,2000,30000" (milliseconds). Throws with a fix-it message. */
export function parseRetrySchedule(text: string): number[] {
  const parts = text.split(',').map((s) => s.trim());
  const ms = parts.map(Number);
  if (parts.length === 0 || parts.some((p, i) => p === '' || !Number.isInteger(ms[i]) || ms[i] <= 0)) {
    throw new Error(
      `NOTIFY_RETRY_SCHEDULE_MS must be positive whole milliseconds separated by commas, e.g. 1000,5000,30000 (got "${text}")`,
    );
  }
  return ms;
}

/**
 * Wait after the `failures`-th failed attempt (1-based), with jitter; `random` is in [0, 1).
 */
export function retryDelay(
  failures: number,
  schedule: readonly number[],
  jitter: number,
  random: number = Math.random(),
): number {
  const base = schedule[Math.min(Math.max(failures, 1), schedule.length) - 1];
  return Math.max(1, Math.round(base * (1 - jitter + 2 * jitter * random)));
}

/** Settings from the environment (NOTIFY_*); only the variables that are set. */
export function notifySettingsFromEnv(env: NodeJS.ProcessEnv): Partial<NotifySettings> {
  const out: Partial<NotifySettings> = {};
  const positiveEnv = (name: string): number | undefined => {
    const v = env[name];
    if (v === undefined || v === '') return undefined;
    const n = Number(v);
    if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive whole number, not "${v}"`);
    return n;
  };
  if (env.NOTIFY_RETRY_SCHEDULE_MS) out.retryScheduleMs = parseRetrySchedule(env.NOTIFY_RETRY_SCHEDULE_MS);
  if (env.NOTIFY_ALLOW_CIDRS)
    out.allowCidrs = withName('NOTIFY_ALLOW_CIDRS', () => parseCidrList(env.NOTIFY_ALLOW_CIDRS!));
  const set = <K extends keyof NotifySettings>(key: K, v: NotifySettings[K] | undefined) => {
    if (v !== undefined) out[key] = v;
  };
  set('timeoutMs', positiveEnv('NOTIFY_TIMEOUT_MS'));
  set('leaseMs', positiveEnv('NOTIFY_LEASE_MS'));
  set('pollIntervalMs', positiveEnv('NOTIFY_POLL_MS'));
  set('concurrency', positiveEnv('NOTIFY_CONCURRENCY'));
  set('hostConcurrency', positiveEnv('NOTIFY_HOST_CONCURRENCY'));
  set('hostConcurrencyMax', positiveEnv('NOTIFY_HOST_CONCURRENCY_MAX'));
  const grace = env.NOTIFY_STOP_GRACE_MS;
  if (grace !== undefined && grace !== '') {
    const n = Number(grace);
    if (!Number.isInteger(n) || n < 0)
      throw new Error(`NOTIFY_STOP_GRACE_MS must be a whole number of milliseconds, 0 or more, not "${grace}"`);
    out.stopGraceMs = n;
  }
  if (env.NOTIFY_ENABLED !== undefined && env.NOTIFY_ENABLED !== '') {
    if (!['0', '1', 'true', 'false'].includes(env.NOTIFY_ENABLED))
      throw new Error('NOTIFY_ENABLED must be true or false');
    out.enabled = env.NOTIFY_ENABLED === '1' || env.NOTIFY_ENABLED === 'true';
  }
  return out;
}

function withName<T>(name: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    throw new Error(`${name}: ${(e as Error).message}`, { cause: e });
  }
}

/** Defaults overlaid with the given settings, checked for consistency. */
export function resolveNotifySettings(over: Partial<NotifySettings> = {}): NotifySettings {
  const s: NotifySettings = { ...DEFAULT_NOTIFY_SETTINGS, ...over };
  if (s.retryScheduleMs.length === 0 || s.retryScheduleMs.some((ms) => !Number.isInteger(ms) || ms <= 0)) {
    throw new Error('the notification retry schedule must be a non-empty list of positive milliseconds');
  }
  if (!(s.jitter >= 0 && s.jitter < 1)) throw new Error('notification retry jitter must be in [0, 1)');
  // An attempt can hold a row for up to timeoutMs; a lease that ran out mid-attempt would let
  // another instance deliver the same row at the same time.
  if (s.leaseMs < 2 * s.timeoutMs) {
    throw new Error(`NOTIFY_LEASE_MS (${s.leaseMs}) must be at least twice NOTIFY_TIMEOUT_MS (${s.timeoutMs})`);
  }
  // A starting limit above the cap raises the cap; neither exceeds the global limit.
  s.hostConcurrencyMax = Math.min(Math.max(s.hostConcurrencyMax, s.hostConcurrency), s.concurrency);
  s.hostConcurrency = Math.min(s.hostConcurrency, s.hostConcurrencyMax);
  return s;
}
