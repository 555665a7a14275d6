import { randomBytes } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { hostname } from 'node:os';
import type { FastifyBaseLogger } from 'fastify';
import type { Agent } from 'undici';
import type { ClaimedRow } from '../ports/outbox.js';
import type { Store } from '../ports/store.js';
import { createCallbackAgent } from './callback-agent.js';
import { buildNotificationRequest, type NotificationSource } from './notification-request.js';
import { sendNotification, type AttemptOutcome } from './send-notification.js';
import { retryDelay, type NotifySettings } from './settings.js';

export interface WorkerDeps {
  store: Store;
  mode: 'sandbox' | 'live';
  settings: NotifySettings;
  log: Pick<FastifyBaseLogger, 'debug' | 'info' | 'warn' | 'error'>;
  now?: () => number;
  random?: () => number;
  /** Told each attempt's outcome, and for a delivery the seconds since the notification was queued (metrics). */
  observe?: (outcome: 'delivered' | 'refused' | 'no_answer', deliveredAfterSeconds?: number) => void;
  /** Each attempt as a span in the trace of the change that queued it (tracing). */
  trace?: {
    attempt<T>(
      event_id: string,
      attributes: Readonly<Record<string, string | number>>,
      work: () => Promise<T>,
    ): Promise<T>;
    delivered(event_id: string): void;
  };
}

/**
 * Delivers the outbox. Each poll claims due rows with a lease (so that of several instances on one
 * database exactly one delivers a row), starts one attempt per row within the global and per-host
 * concurrency caps, and records each attempt with its outcome. A settle pokes the worker so the
 * first attempt starts at once; otherwise it polls every pollIntervalMs. Attempts run outside any
 * database transaction; only their result is written, in one.
 */
export class NotificationWorker {
  readonly instanceId: string;
  private readonly agent: Agent;
  /** Attempts in flight by claim (event_id and lease): a row resent or re-leased while an attempt is in flight is claimed anew and gets an attempt of its own. */
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly hostInFlight = new Map<string, number>();
  /** Aborted by stop() once the grace has passed: every attempt still in flight ends on it. One for all, not one per attempt. */
  private readonly stopping = new AbortController();
  private readonly now: () => number;
  private readonly random: () => number;
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;
  /** The next regular poll. */
  private pollAt = Infinity;
  /** Due times of this worker's retries still ahead (a min-heap): each gets a poll when it comes. */
  private readonly retriesDue: number[] = [];
  private polling: Promise<void> | null = null;
  /** A poke waits for its turn (poke). */
  private pokeScheduled = false;
  /**
   * Notifications this instance has queued (event_id -> callback_host), told by poke, that are to
   * be claimed by id: kept while the caps leave no room for them.
   */
  private queued = new Map<string, string>();
  /** Whether the next claim searches every host's due rows (claimDue), before it claims the queued ones. */
  private searchWanted = true;
  /** When the last search ran: the regular poll comes pollIntervalMs after it. */
  private searchedAt = 0;
  /**
   * The caps the last search hit, behind which it may have left due rows: the global one (any
   * attempt's end searches again) and hosts' (an attempt's end at one of them searches again).
   */
  private leftBehind: { global: boolean; hosts: Set<string> } = { global: false, hosts: new Set() };
  /** While a search runs, the hosts of the attempts that end (a slot it did not count); null otherwise. */
  private endedDuringSearch: Set<string> | null = null;
  private again = false;
  /** The last claim was held back by a cap: a finished attempt should look for more work. */
  private starved = false;
  private stopped = false;
  private started = false;

  constructor(private readonly deps: WorkerDeps) {
    const { settings } = deps;
    this.instanceId = settings.instanceId ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
    this.agent = createCallbackAgent({
      policy: { mode: deps.mode, allow: settings.allowCidrs },
      timeoutMs: settings.timeoutMs,
    });
    this.now = deps.now ?? Date.now;
    this.random = deps.random ?? Math.random;
    // An attempt listens on it while in flight: as many listeners as attempts, which is no leak.
    setMaxListeners(0, this.stopping.signal);
  }

  /** Attempts in flight, for tests and metrics. */
  get active(): number {
    return this.inFlight.size;
  }

  /** Started and not stopped: readiness. */
  get running(): boolean {
    return this.started && !this.stopped;
  }

  /** Starts polling; rows left due by a previous run (or a crashed instance, once its lease ends) are picked up. */
  start(): void {
    this.started = true;
    this.wake();
  }

  /**
   * Looks for due rows once the caller's turn of the event loop is over (coalesced with a poll
   * already running or about to). A settle pokes before its request is answered, and the claim is
   * a statement of its own: run at once, it would be run before the answer is written.
   * `queued`: the notification the caller has just queued. Claims take it by its id as soon as the
   * caps leave room, and such a poke does not search every host's due rows (claimDue). What else
   * may be due is searched for at the regular poll (pollIntervalMs after the last search, also
   * while pokes keep the worker busy), at a retry's due time, on a poke without `queued` (a
   * resend), after a failed claim, and on every attempt's end after a search that hit a cap; a
   * wanted search claims before the queued ones. Beyond MAX_QUEUED notifications waiting for room,
   * a poke searches instead.
   */
  poke(queued?: { event_id: string; callback_host: string }): void {
    if (this.stopped) return;
    if (queued && this.queued.size < MAX_QUEUED) this.queued.set(queued.event_id, queued.callback_host);
    else this.searchWanted = true;
    this.wake();
  }

  /**
   * One attempt of a notification that is not in the outbox (the console's test notification):
   * built, signed and sent as every attempt is, through the same client and address checks.
   */
  async sendTest(
    url: string,
    source: NotificationSource,
    api_key: string,
  ): Promise<AttemptOutcome & { body: string; headers: Readonly<Record<string, string>> }> {
    const req = buildNotificationRequest(source, api_key, Math.floor(this.now() / 1000));
    const outcome = await sendNotification(this.agent, url, req, { timeoutMs: this.deps.settings.timeoutMs });
    return { ...outcome, body: req.body, headers: req.headers };
  }

  /** Runs a claim once the caller's turn is over (poke's rules); what it claims is decided then. */
  private wake(): void {
    if (this.stopped || this.pokeScheduled) return;
    this.pokeScheduled = true;
    setImmediate(() => {
      this.pokeScheduled = false;
      if (this.stopped) return;
      if (this.polling) {
        this.again = true;
        return;
      }
      this.polling = this.pollLoop().finally(() => {
        this.polling = null;
        this.scheduleNextPoll();
      });
    });
  }

  /**
   * Stops polling, lets attempts in flight finish for up to stopGraceMs, then aborts the rest (they
   * are recorded and due again at once) and waits for them.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.polling;
    const running = [...this.inFlight.values()];
    const grace = this.deps.settings.stopGraceMs;
    if (running.length > 0 && grace > 0) {
      let timer: NodeJS.Timeout | undefined;
      const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, grace)));
      await Promise.race([Promise.allSettled(running), waited]);
      clearTimeout(timer);
    }
    this.stopping.abort(new Error('gateway shutting down'));
    await Promise.allSettled(running);
    await this.agent.destroy().catch(() => {});
  }

  private scheduleNextPoll(): void {
    const { pollIntervalMs } = this.deps.settings;
    // From the last search, not the last claim: claims of queued notifications alone, however
    // frequent, must not put off the search for everything else. A search still wanted now found
    // no room: an attempt's end runs it, or this poll a full interval on.
    this.pollAt = this.searchWanted ? this.now() + pollIntervalMs : this.searchedAt + pollIntervalMs;
    this.rearm();
  }

  /** Polls at `at` (a retry's due time) unless the next poll comes first. Every retry is remembered, not only the earliest. */
  private wakeAt(at: number): void {
    heapPush(this.retriesDue, at);
    this.rearm();
  }

  /** Sets the timer for the earliest of the next poll and the retries ahead. */
  private rearm(): void {
    const at = Math.min(this.pollAt, this.retriesDue[0] ?? Infinity);
    if (this.stopped || at === this.timerAt) return;
    clearTimeout(this.timer);
    this.timerAt = at;
    if (at !== Infinity) this.armTimer(at);
  }

  private armTimer(at: number): void {
    this.timer = setTimeout(
      () => {
        // A timer can fire a millisecond or two before the wall clock reaches `at` (the event loop's
        // clock is cached), and a claim at that moment would find the retry not yet due and leave it
        // to the next poll, minutes away: wait out the rest first.
        const now = this.now();
        if (now < at) return this.armTimer(at);
        this.timerAt = Infinity;
        // Retries due by now are claimed by this poll; the later ones keep their place.
        while ((this.retriesDue[0] ?? Infinity) <= now) heapPop(this.retriesDue);
        if (this.pollAt <= now) this.pollAt = Infinity;
        this.searchWanted = true;
        this.wake(); // the poll's end re-arms the timer
      },
      Math.max(1, at - this.now()),
    );
    this.timer.unref();
  }

  private async pollLoop(): Promise<void> {
    do {
      this.again = false;
      try {
        await this.claimAndLaunch();
      } catch (e) {
        // The queued notifications taken for the failed claim are found by a search: the next
        // attempt's end runs it, or the next poll.
        this.searchWanted = true;
        this.starved = true;
        this.deps.log.error({ err: e }, 'notification claim failed; retrying at the next poll');
        return;
      }
    } while (this.again && !this.stopped);
  }

  /**
   * Claims the queued notifications, oldest first, as far as the global and per-host caps leave
   * room, and starts them; the others stay queued. One not claimed (delivered, or claimed by a
   * search or another instance, meanwhile) is forgotten, and its slot offered to the next.
   */
  private async claimQueued(): Promise<void> {
    const { settings, store } = this.deps;
    let free = settings.concurrency - this.inFlight.size;
    const taken = new Map<string, number>();
    const event_ids: string[] = [];
    for (const [event_id, host] of this.queued) {
      if (free <= 0) break;
      const busy = (this.hostInFlight.get(host) ?? 0) + (taken.get(host) ?? 0);
      if (busy >= settings.hostConcurrency) continue;
      taken.set(host, (taken.get(host) ?? 0) + 1);
      event_ids.push(event_id);
      free--;
    }
    if (event_ids.length === 0) return;
    for (const id of event_ids) this.queued.delete(id);
    const rows = await store.outbox.claimQueued({
      event_ids,
      claimed_by: this.instanceId,
      now: this.now(),
      lease_ms: settings.leaseMs,
    });
    for (const row of rows) this.launch(row);
    if (rows.length < event_ids.length && this.queued.size > 0) this.again = true;
  }

  private async claimAndLaunch(): Promise<void> {
    // The regular poll, also while pokes keep this loop going (its timer is set when the loop ends).
    if (this.now() - this.searchedAt >= this.deps.settings.pollIntervalMs) this.searchWanted = true;
    // A wanted search goes first: it takes the oldest due rows, the queued ones among them, so
    // that a stream of fresh notifications cannot keep retries, resends and rows left by another
    // instance waiting for room.
    if (this.searchWanted) await this.search();
    if (this.queued.size > 0) await this.claimQueued();
    // Held back by a cap (a search without room, rows left behind, queued ones): an attempt's end claims again.
    this.starved =
      this.searchWanted || this.leftBehind.global || this.leftBehind.hosts.size > 0 || this.queued.size > 0;
  }

  /** Searches every host's due rows (claimDue) within the room left, and starts them. */
  private async search(): Promise<void> {
    const { settings, store } = this.deps;
    const free = settings.concurrency - this.inFlight.size;
    // No room: the search stays wanted, and an attempt's end runs it.
    if (free <= 0) return;
    this.searchWanted = false;
    const host_limits = new Map<string, number>();
    for (const [host, n] of this.hostInFlight) host_limits.set(host, Math.max(0, settings.hostConcurrency - n));
    const ended = new Set<string>();
    this.endedDuringSearch = ended;
    let rows: ClaimedRow[];
    try {
      rows = await store.outbox.claimDue({
        claimed_by: this.instanceId,
        now: this.now(),
        lease_ms: settings.leaseMs,
        limit: free,
        per_host: settings.hostConcurrency,
        host_limits,
      });
    } finally {
      this.endedDuringSearch = null;
      // From its end: a search slower than the interval is not run again at once.
      this.searchedAt = this.now();
    }
    const perHost = new Map<string, number>();
    for (const row of rows) {
      perHost.set(row.callback_host, (perHost.get(row.callback_host) ?? 0) + 1);
      // Found by the search: not to be claimed by id too.
      this.queued.delete(row.event_id);
      this.launch(row);
    }
    // Rows may have been left due behind a cap: the global one, or the limit of a host as this
    // search counted it (a host full before it, or one it filled). Then an attempt that ends, at
    // any host or at that host, searches again, so a backlog to one merchant drains at that
    // merchant's speed rather than hostConcurrency rows per poll; the others' attempts do not.
    // An attempt that ended during the search freed a slot it did not count: search again at once.
    const hosts = new Set<string>();
    for (const [host, limit] of host_limits) if ((perHost.get(host) ?? 0) >= limit) hosts.add(host);
    for (const [host, n] of perHost) if (!host_limits.has(host) && n >= settings.hostConcurrency) hosts.add(host);
    this.leftBehind = { global: rows.length === free, hosts };
    if ((this.leftBehind.global && ended.size > 0) || [...ended].some((host) => hosts.has(host))) {
      this.searchWanted = true;
      this.again = true;
    }
  }

  private launch(row: ClaimedRow): void {
    const claim = `${row.event_id} ${row.claimed_until}`;
    if (this.inFlight.has(claim)) return;
    const host = row.callback_host;
    this.hostInFlight.set(host, (this.hostInFlight.get(host) ?? 0) + 1);
    const trace = this.deps.trace;
    const run = () => this.attempt(row, this.stopping.signal);
    const done = (
      trace
        ? trace.attempt(row.event_id, { order_id: row.order_id, callback_host: host, attempt: row.attempts + 1 }, run)
        : run()
    )
      .catch((e: unknown) =>
        this.deps.log.error(
          { err: e, event_id: row.event_id },
          'notification attempt could not be recorded; it will be retried when its lease ends',
        ),
      )
      .finally(() => {
        this.inFlight.delete(claim);
        const n = (this.hostInFlight.get(host) ?? 1) - 1;
        if (n <= 0) this.hostInFlight.delete(host);
        else this.hostInFlight.set(host, n);
        this.endedDuringSearch?.add(host);
        if (this.leftBehind.global || this.leftBehind.hosts.has(host)) this.searchWanted = true;
        if (this.starved || this.polling) this.wake();
      });
    this.inFlight.set(claim, done);
  }

  private async attempt(row: ClaimedRow, signal: AbortSignal): Promise<void> {
    const { settings, store, log } = this.deps;
    const attemptedAt = this.now();
    let outcome: AttemptOutcome;
    try {
      if (row.api_key === null) throw new Error(`order ${row.order_id} or its wallet not found`);
      const req = buildNotificationRequest(row, row.api_key, Math.floor(attemptedAt / 1000));
      outcome = await sendNotification(this.agent, row.callback_url, req, { timeoutMs: settings.timeoutMs, signal });
    } catch (e) {
      const error = `could not prepare the notification: ${e instanceof Error ? e.message : String(e)}`;
      outcome = { delivered: false, http_status: null, response_excerpt: null, latency_ms: 0, error };
    }
    const finished = this.now();
    // Aborted by shutdown: due again at once, for the next run or another instance.
    const failures = row.attempts + 1;
    const next = signal.aborted
      ? finished
      : finished + retryDelay(failures, settings.retryScheduleMs, settings.jitter, this.random());
    const applied = await store.outbox.recordAttempt({
      event_id: row.event_id,
      claimed_by: row.claimed_by!,
      claimed_until: row.claimed_until!,
      attempt: {
        attempted_at: attemptedAt,
        http_status: outcome.http_status,
        response_excerpt: outcome.response_excerpt,
        latency_ms: outcome.latency_ms,
        error: outcome.error,
      },
      delivered: outcome.delivered,
      next_attempt_at: next,
      now: finished,
    });
    if (applied && !outcome.delivered) this.wakeAt(next);
    if (outcome.delivered) this.deps.trace?.delivered(row.event_id);
    this.deps.observe?.(
      outcome.delivered ? 'delivered' : outcome.http_status === null ? 'no_answer' : 'refused',
      outcome.delivered ? (finished - row.created_at) / 1000 : undefined,
    );
    const fields = {
      event_id: row.event_id,
      order_id: row.order_id,
      callback_host: row.callback_host,
      attempt: failures,
      http_status: outcome.http_status,
      latency_ms: outcome.latency_ms,
    };
    if (outcome.delivered) log.debug(fields, 'notification delivered');
    else
      log.info(
        { ...fields, error: outcome.error, next_attempt_at: applied ? new Date(next).toISOString() : undefined },
        'notification attempt failed',
      );
  }
}

/** Queued notifications remembered at most to be claimed by id; beyond, pokes search instead. */
const MAX_QUEUED = 1000;

/** Adds `v` to the min-heap `h`. */
function heapPush(h: number[], v: number): void {
  let i = h.push(v) - 1;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (h[parent] <= v) break;
    h[i] = h[parent]!;
    i = parent;
  }
  h[i] = v;
}

/** Removes the smallest value of the min-heap `h`. */
function heapPop(h: number[]): void {
  const last = h.pop()!;
  if (h.length === 0) return;
  let i = 0;
  for (;;) {
    const l = 2 * i + 1;
    if (l >= h.length) break;
    const c = l + 1 < h.length && h[l + 1] < h[l] ? l + 1 : l;
    if (h[c] >= last) break;
    h[i] = h[c]!;
    i = c;
  }
  h[i] = last;
}
