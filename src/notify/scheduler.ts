// The notification worker's decisions, without I/O: what to claim next (the notifications this
// instance has just queued, by id, or a search of every host's due rows), how many attempts each
// callback host may have in flight (a limit that adapts to how the host answers), and when to look
// again. The worker (worker.ts) asks it, claims, sends and records, and tells it what happened;
// every time is passed in, so a test drives it with a clock of its own. (Longer than most files:
// the decisions are one state and belong together.)
import { heapPop, heapPush } from './min-heap.js';

export interface SchedulerSettings {
  /** Attempts in flight at once, all hosts together. */
  concurrency: number;
  /** A host's limit to begin with, and after it has been idle a while. */
  hostConcurrency: number;
  /** The most a host's limit grows to. */
  hostConcurrencyMax: number;
  /** A search of every host's due rows at least this often. */
  pollIntervalMs: number;
}

/** Where an attempt came from: a notification this instance queued (its first attempt), or a search. */
export type Lane = 'fresh' | 'backlog';

/**
 * What an attempt says about its host's capacity. `answered`: it answered (delivered or not) with
 * neither 5xx nor 429; `overloaded`: a timeout, a connection error, 5xx or 429 (with the
 * Retry-After it gave, if any); `neutral`: the gateway stopping, or a notification that could not be prepared, which say nothing.
 */
export type HostSignal = { kind: 'answered' } | { kind: 'overloaded'; retryAfterMs?: number } | { kind: 'neutral' };

/** One search of due rows, as the store's claimDue takes it. */
export interface SearchPlan {
  limit: number;
  /** For a host not in host_limits (none in flight here, its limit its starting one). */
  per_host: number;
  host_limits: Map<string, number>;
}

export interface Started {
  host: string;
  lane: Lane;
  at: number;
}

/** Queued notifications remembered at most to be claimed by id; beyond, pokes search instead. */
export const MAX_QUEUED = 1000;
/** A host paused after failing at a limit of one waits this long at first, doubling to MAX_PAUSE_MS. */
export const FIRST_PAUSE_MS = 250;
export const MAX_PAUSE_MS = 2_000;
/** A Retry-After is honoured up to this. */
export const MAX_RETRY_AFTER_MS = 60_000;
/** A host idle this long is forgotten: it starts again at its starting limit. */
export const IDLE_FORGET_MS = 300_000;

interface HostState {
  /** Attempts allowed in flight; fractional while it grows slowly. */
  limit: number;
  fresh: number;
  backlog: number;
  /** Growing by one per good answer (until its first overload), then by one per limit's worth. */
  slowStart: boolean;
  /** When the limit last fell: answers to attempts started before it do not make it fall again. */
  decreasedAt: number;
  /** No attempt starts before this (Retry-After, or a pause after failing at a limit of one). */
  pausedUntil: number;
  /** Whether the pause is the host's own Retry-After (then not even a first attempt may probe). */
  retryAfterPause: boolean;
  /** Pauses in a row (their length doubles). */
  pauses: number;
  /** Due rows were left behind by the last search for want of this host's room. */
  backlogWaiting: boolean;
  /** The lane of the attempt started last (at a limit of one the lanes take turns). */
  lastLane: Lane;
  lastActive: number;
}

export class NotifyScheduler {
  private readonly hosts = new Map<string, HostState>();
  /** Notifications this instance has queued (event_id -> callback_host), oldest first, to be claimed by id. */
  private readonly queued = new Map<string, string>();
  private readonly queuedByHost = new Map<string, number>();
  private inFlight = 0;
  private searchWanted = true;
  /** When the last search ended: the regular poll comes pollIntervalMs after it. */
  private searchedAt = -Infinity;
  /** Rows were left due behind the global cap by the last search. */
  private globalLeftBehind = false;
  /** While a search runs, the hosts of attempts that ended (a slot it did not count); null otherwise. */
  private endedDuringSearch: Set<string> | null = null;
  /** The next regular poll. */
  private pollAt = Infinity;
  /** Due times of retries ahead (a min-heap): each gets a look when it comes. */
  private readonly retriesDue: number[] = [];

  constructor(private readonly settings: SchedulerSettings) {}

  get active(): number {
    return this.inFlight;
  }

  /** A host's current limit, whole (for tests, logs and metrics). */
  hostLimit(host: string): number {
    return Math.floor(this.hosts.get(host)?.limit ?? this.settings.hostConcurrency);
  }

  /** A notification this instance has just queued, or (none) a reason to search: a resend. */
  poke(queued?: { event_id: string; callback_host: string }): void {
    if (queued && this.queued.size < MAX_QUEUED && !this.queued.has(queued.event_id)) {
      this.queued.set(queued.event_id, queued.callback_host);
      this.queuedByHost.set(queued.callback_host, (this.queuedByHost.get(queued.callback_host) ?? 0) + 1);
    } else this.searchWanted = true;
  }

  /** Found by a search, or taken for a claim by id: no longer queued. */
  unqueue(event_id: string): void {
    const host = this.queued.get(event_id);
    if (host === undefined) return;
    this.queued.delete(event_id);
    const n = (this.queuedByHost.get(host) ?? 1) - 1;
    if (n <= 0) this.queuedByHost.delete(host);
    else this.queuedByHost.set(host, n);
  }

  /** A claim failed: what it had taken from the queue is found by a search. */
  claimFailed(): void {
    this.searchWanted = true;
  }

  /**
   * The queued notifications to claim now, oldest first, within the global room and each host's
   * room for first attempts; taken off the queue (one not claimed after all is found by a search).
   */
  planQueued(now: number): string[] {
    this.pollIfDue(now);
    // A search that is wanted keeps one slot: a stream of fresh notifications must not hold off
    // retries, resends and rows another instance left.
    let free = this.settings.concurrency - this.inFlight - (this.searchWanted ? 1 : 0);
    const taken = new Map<string, number>();
    const ids: string[] = [];
    for (const [event_id, host] of this.queued) {
      if (free <= 0) break;
      const room = this.freshRoom(this.hosts.get(host), now) - (taken.get(host) ?? 0);
      if (room <= 0) continue;
      taken.set(host, (taken.get(host) ?? 0) + 1);
      ids.push(event_id);
      free--;
    }
    for (const id of ids) this.unqueue(id);
    return ids;
  }

  /** The search to run now, or null: none wanted, or no room for one (an attempt's end runs it). */
  planSearch(now: number): SearchPlan | null {
    this.pollIfDue(now);
    const limit = this.settings.concurrency - this.inFlight;
    if (!this.searchWanted || limit <= 0) return null;
    this.forgetIdle(now);
    const host_limits = new Map<string, number>();
    const per_host = Math.min(this.settings.hostConcurrency, this.settings.hostConcurrencyMax);
    // Only the hosts whose room is not per_host's: the statement names each one it is given.
    for (const [host, h] of this.hosts) {
      const room = this.backlogRoom(host, h, now);
      if (room !== per_host) host_limits.set(host, room);
    }
    this.searchWanted = false;
    this.endedDuringSearch = new Set();
    return { limit, per_host, host_limits };
  }

  /**
   * The search's claimed rows, by host. Rows may have been left due behind a cap: the global one,
   * or a host's room as the search counted it; then an attempt's end (anywhere, or at that host)
   * searches again, so a backlog drains at its host's speed, not a limit's worth per poll. Returns
   * whether to claim again at once (an attempt ended during the search, freeing a slot it did not
   * count, where rows were left).
   */
  searched(plan: SearchPlan, claimedHosts: readonly string[], now: number): boolean {
    const ended = this.endedDuringSearch ?? new Set<string>();
    this.endedDuringSearch = null;
    this.searchedAt = now;
    const perHost = new Map<string, number>();
    for (const host of claimedHosts) perHost.set(host, (perHost.get(host) ?? 0) + 1);
    // A host the search gave no room (full, or paused) may have rows due too: counted as waiting,
    // its next attempt's end (or its pause's) searches again and finds out.
    for (const [host, h] of this.hosts)
      h.backlogWaiting = (perHost.get(host) ?? 0) >= (plan.host_limits.get(host) ?? plan.per_host);
    for (const [host, n] of perHost)
      if (!plan.host_limits.has(host) && n >= plan.per_host) this.host(host, now).backlogWaiting = true;
    this.globalLeftBehind = claimedHosts.length >= plan.limit;
    const again =
      (this.globalLeftBehind && ended.size > 0) || [...ended].some((host) => this.hosts.get(host)?.backlogWaiting);
    if (again) this.searchWanted = true;
    return again;
  }

  /** An attempt begins. */
  started(host: string, lane: Lane, now: number): Started {
    const h = this.host(host, now);
    h[lane]++;
    h.lastLane = lane;
    h.lastActive = now;
    this.inFlight++;
    return { host, lane, at: now };
  }

  /**
   * An attempt ended with what it says of its host: the host's limit grows while work waits for it
   * and it answers well, and halves on an overload (once for the attempts in flight together); at a
   * limit of one an overload pauses the host briefly (doubling, to MAX_PAUSE_MS) and a Retry-After
   * pauses it that long. Returns whether to claim again now.
   */
  ended(s: Started, signal: HostSignal, now: number): boolean {
    const h = this.host(s.host, now);
    h[s.lane]--;
    h.lastActive = now;
    this.inFlight--;
    this.endedDuringSearch?.add(s.host);
    const { hostConcurrencyMax } = this.settings;
    if (signal.kind === 'answered') {
      // A probe answered: the pause after failures is over (a Retry-After is kept to its end).
      h.pauses = 0;
      if (!h.retryAfterPause || h.pausedUntil <= now) {
        h.pausedUntil = 0;
        h.retryAfterPause = false;
      }
      if (h.backlogWaiting || this.queuedByHost.has(s.host))
        h.limit = Math.min(hostConcurrencyMax, h.limit + (h.slowStart ? 1 : 1 / Math.floor(h.limit)));
    } else if (signal.kind === 'overloaded') {
      if (signal.retryAfterMs !== undefined && signal.retryAfterMs > 0) {
        h.pausedUntil = Math.max(h.pausedUntil, now + Math.min(signal.retryAfterMs, MAX_RETRY_AFTER_MS));
        h.retryAfterPause = true;
      }
      if (s.at >= h.decreasedAt) {
        h.slowStart = false;
        h.decreasedAt = now;
        if (h.limit >= 2) h.limit = Math.max(1, Math.floor(h.limit / 2));
        else {
          h.limit = 1;
          const pause = Math.min(MAX_PAUSE_MS, FIRST_PAUSE_MS * 2 ** h.pauses);
          h.pauses++;
          if (now + pause > h.pausedUntil) {
            h.pausedUntil = now + pause;
            h.retryAfterPause = false;
          }
        }
      }
    }
    if (this.globalLeftBehind || h.backlogWaiting) this.searchWanted = true;
    return this.starved;
  }

  /** A retry is due at `at`: the worker looks then. */
  retryAt(at: number): void {
    heapPush(this.retriesDue, at);
  }

  /** The worker's timer fired at `now`: retries due by then are looked for by a search. */
  timerFired(now: number): void {
    while ((this.retriesDue[0] ?? Infinity) <= now) heapPop(this.retriesDue);
    if (this.pollAt <= now) this.pollAt = Infinity;
    this.searchWanted = true;
  }

  /** A claim loop ended: the next regular poll is pollIntervalMs after the last search (or now, if one is still wanted). */
  loopEnded(now: number): void {
    this.pollAt = (this.searchWanted ? now : this.searchedAt) + this.settings.pollIntervalMs;
  }

  /** When the worker should look next without being poked: a poll, a retry, a paused host's end. */
  nextWakeAt(now: number): number {
    let at = Math.min(this.pollAt, this.retriesDue[0] ?? Infinity);
    // A paused host's backlog or queued notifications: its pause's end (still ahead) lets them go.
    for (const [host, h] of this.hosts)
      if (h.pausedUntil > now && (h.backlogWaiting || this.queuedByHost.has(host))) at = Math.min(at, h.pausedUntil);
    return at;
  }

  /** Work is held back by a cap or a pause: an attempt's end should claim again. */
  get starved(): boolean {
    if (this.searchWanted || this.globalLeftBehind || this.queued.size > 0) return true;
    for (const h of this.hosts.values()) if (h.backlogWaiting) return true;
    return false;
  }

  private host(host: string, now: number): HostState {
    let h = this.hosts.get(host);
    if (!h) {
      h = {
        limit: Math.min(this.settings.hostConcurrency, this.settings.hostConcurrencyMax),
        fresh: 0,
        backlog: 0,
        slowStart: true,
        decreasedAt: -Infinity,
        pausedUntil: 0,
        retryAfterPause: false,
        pauses: 0,
        backlogWaiting: false,
        lastLane: 'backlog',
        lastActive: now,
      };
      this.hosts.set(host, h);
    }
    return h;
  }

  /**
   * How many of a host's limit first attempts may hold: all of it, but while a backlog may wait for
   * the host (the last search left rows, or a search is wanted) a quarter stays the backlog's, so
   * fresh notifications go first without starving retries.
   */
  private freshShare(h: HostState): number {
    const limit = Math.floor(h.limit);
    if (!h.backlogWaiting && !this.searchWanted) return limit;
    // At a limit of one there is no quarter: the lanes take turns.
    if (limit < 2) return h.lastLane === 'fresh' ? 0 : 1;
    return limit - Math.ceil(limit / 4);
  }

  /** The regular poll: a search at least every pollIntervalMs, however busy the lane of first attempts keeps the worker. */
  private pollIfDue(now: number): void {
    if (now - this.searchedAt >= this.settings.pollIntervalMs) this.searchWanted = true;
  }

  /** Notifications queued and not yet claimed (the worker claims again after a search while there are). */
  get queuedCount(): number {
    return this.queued.size;
  }

  /**
   * Room for a first attempt now. In a pause after failures (not a Retry-After) one first attempt
   * may go when nothing is in flight: the probe that finds the host back.
   */
  private freshRoom(h: HostState | undefined, now: number): number {
    if (!h) return Math.min(this.settings.hostConcurrency, this.settings.hostConcurrencyMax);
    if (now < h.pausedUntil) return h.retryAfterPause || h.fresh + h.backlog > 0 ? 0 : 1;
    return Math.min(this.freshShare(h) - h.fresh, Math.floor(h.limit) - h.fresh - h.backlog);
  }

  /** Room for rows a search finds: the limit less the backlog's attempts and what first attempts hold or wait for. */
  private backlogRoom(host: string, h: HostState, now: number): number {
    if (now < h.pausedUntil) return 0;
    const fresh = Math.max(h.fresh, Math.min(h.fresh + (this.queuedByHost.get(host) ?? 0), this.freshShare(h)));
    return Math.max(0, Math.floor(h.limit) - h.backlog - fresh);
  }

  private forgetIdle(now: number): void {
    for (const [host, h] of this.hosts)
      if (h.fresh + h.backlog === 0 && now - h.lastActive > IDLE_FORGET_MS && now >= h.pausedUntil)
        this.hosts.delete(host);
  }
}
