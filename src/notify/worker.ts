import { randomBytes } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { hostname } from 'node:os';
import type { FastifyBaseLogger } from 'fastify';
import type { Agent } from 'undici';
import type { ClaimedRow } from '../ports/outbox.js';
import type { Store } from '../ports/store.js';
import { createCallbackAgent } from './callback-agent.js';
import { buildNotificationRequest, type NotificationSource } from './notification-request.js';
import { attemptNotification, hostSignal } from './attempt.js';
import { MAX_RETRY_AFTER_MS, NotifyScheduler, type HostSignal, type Lane, type SearchPlan } from './scheduler.js';
import { sendNotification, type AttemptOutcome } from './send-notification.js';
import type { NotifySettings } from './settings.js';

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
 * Delivers the outbox. What to claim and when is the scheduler's (scheduler.ts); this class claims
 * with a lease (so that of several instances on one database exactly one delivers a row), starts
 * one attempt per row (attempt.ts: prepare, send, record) and tells the scheduler how each ended.
 * A settle pokes the worker so a first attempt starts at once; otherwise it looks when the
 * scheduler says (a poll, a retry, a paused host's end). Attempts run outside any database
 * transaction; only their result is written, in one.
 */
export class NotificationWorker {
  readonly instanceId: string;
  private readonly agent: Agent;
  private readonly scheduler: NotifyScheduler;
  /** Attempts in flight by claim (event_id and lease): a row resent or re-leased while an attempt is in flight is claimed anew and gets an attempt of its own. */
  private readonly inFlight = new Map<string, Promise<void>>();
  /** Aborted by stop() once the grace has passed: every attempt still in flight ends on it. One for all, not one per attempt. */
  private readonly stopping = new AbortController();
  private readonly now: () => number;
  private readonly random: () => number;
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;
  private polling: Promise<void> | null = null;
  /** A wake waits for its turn (wake). */
  private wakeScheduled = false;
  private again = false;
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
    this.scheduler = new NotifyScheduler(settings);
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

  /** A callback host's current limit of attempts in flight (it adapts to how the host answers). */
  hostLimit(callback_host: string): number {
    return this.scheduler.hostLimit(callback_host);
  }

  /** Starts polling; rows left due by a previous run (or a crashed instance, once its lease ends) are picked up. */
  start(): void {
    this.started = true;
    this.wake();
  }

  /**
   * Looks for work once the caller's turn of the event loop is over (coalesced with a claim already
   * running or about to). A settle pokes before its request is answered, and the claim is a
   * statement of its own: run at once, it would be run before the answer is written. `queued`: the
   * notification the caller has just queued, claimed by its id in the lane of first attempts; a poke
   * without it (a resend) searches every host's due rows.
   */
  poke(queued?: { event_id: string; callback_host: string }): void {
    if (this.stopped) return;
    this.scheduler.poke(queued);
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

  /** Runs the claim loop once the caller's turn is over; what it claims is decided then. */
  private wake(): void {
    if (this.stopped || this.wakeScheduled) return;
    this.wakeScheduled = true;
    setImmediate(() => {
      this.wakeScheduled = false;
      if (this.stopped) return;
      if (this.polling) {
        this.again = true;
        return;
      }
      this.polling = this.claimLoop().finally(() => {
        this.polling = null;
        this.scheduler.loopEnded(this.now());
        this.rearm();
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

  /** Sets the timer for the scheduler's next look. */
  private rearm(): void {
    const at = this.scheduler.nextWakeAt(this.now());
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
        // to the next poll: wait out the rest first.
        const now = this.now();
        if (now < at) return this.armTimer(at);
        this.timerAt = Infinity;
        this.scheduler.timerFired(now);
        this.wake(); // the loop's end re-arms the timer
      },
      Math.max(1, at - this.now()),
    );
    this.timer.unref();
  }

  private async claimLoop(): Promise<void> {
    do {
      this.again = false;
      try {
        // First attempts first (their own lane), then a search with the room left, then first
        // attempts again in what the search did not take.
        await this.claimQueued();
        if ((await this.search()) && this.scheduler.queuedCount > 0) await this.claimQueued();
      } catch (e) {
        this.scheduler.claimFailed();
        this.deps.log.error({ err: e }, 'notification claim failed; retrying at the next poll');
        return;
      }
    } while (this.again && !this.stopped);
  }

  private async claimQueued(): Promise<void> {
    const event_ids = this.scheduler.planQueued(this.now());
    if (event_ids.length === 0) return;
    const { settings, store } = this.deps;
    const rows = await store.outbox.claimQueued({
      event_ids,
      claimed_by: this.instanceId,
      now: this.now(),
      lease_ms: settings.leaseMs,
    });
    for (const row of rows) this.launch(row, 'fresh');
    // One not claimed (delivered, or claimed by a search or another instance) freed its slot.
    if (rows.length < event_ids.length) this.again = true;
  }

  /** Runs the search the scheduler wants, if any; whether it ran. */
  private async search(): Promise<boolean> {
    const plan: SearchPlan | null = this.scheduler.planSearch(this.now());
    if (!plan) return false;
    const { settings, store } = this.deps;
    let rows: ClaimedRow[] = [];
    try {
      rows = await store.outbox.claimDue({
        claimed_by: this.instanceId,
        now: this.now(),
        lease_ms: settings.leaseMs,
        ...plan,
      });
    } finally {
      if (
        this.scheduler.searched(
          plan,
          rows.map((r) => r.callback_host),
          this.now(),
        )
      )
        this.again = true;
    }
    for (const row of rows) {
      this.scheduler.unqueue(row.event_id);
      this.launch(row, 'backlog');
    }
    return true;
  }

  private launch(row: ClaimedRow, lane: Lane): void {
    const claim = `${row.event_id} ${row.claimed_until}`;
    if (this.inFlight.has(claim)) return;
    const started = this.scheduler.started(row.callback_host, lane, this.now());
    let signal: HostSignal = { kind: 'neutral' };
    const run = async () => {
      signal = await this.attempt(row);
    };
    const trace = this.deps.trace;
    const done = (
      trace
        ? trace.attempt(
            row.event_id,
            { order_id: row.order_id, callback_host: row.callback_host, attempt: row.attempts + 1 },
            run,
          )
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
        if (this.scheduler.ended(started, signal, this.now()) || this.polling) this.wake();
        // Its retry, or its host's pause, may come before the timer is set for.
        else this.rearm();
      });
    this.inFlight.set(claim, done);
  }

  /** One attempt, its outcome told to metrics, tracing and the log; what it says of the host returned. */
  private async attempt(row: ClaimedRow) {
    const aborting = this.stopping.signal;
    const r = await attemptNotification(
      { store: this.deps.store, agent: this.agent, settings: this.deps.settings, now: this.now, random: this.random },
      row,
      aborting,
      MAX_RETRY_AFTER_MS,
    );
    const { outcome } = r;
    if (r.applied && !outcome.delivered) this.scheduler.retryAt(r.next_attempt_at);
    if (outcome.delivered) this.deps.trace?.delivered(row.event_id);
    this.deps.observe?.(
      outcome.delivered ? 'delivered' : outcome.http_status === null ? 'no_answer' : 'refused',
      outcome.delivered ? (r.finished - row.created_at) / 1000 : undefined,
    );
    const fields = {
      event_id: row.event_id,
      order_id: row.order_id,
      callback_host: row.callback_host,
      attempt: r.attempt,
      http_status: outcome.http_status,
      latency_ms: outcome.latency_ms,
    };
    if (outcome.delivered) this.deps.log.debug(fields, 'notification delivered');
    else
      this.deps.log.info(
        {
          ...fields,
          error: outcome.error,
          next_attempt_at: r.applied ? new Date(r.next_attempt_at).toISOString() : undefined,
        },
        'notification attempt failed',
      );
    return hostSignal(outcome, aborting.aborted);
  }
}
