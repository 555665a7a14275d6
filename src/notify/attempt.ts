import type { Dispatcher } from 'undici';
import type { ClaimedRow } from '../ports/outbox.js';
import type { Store } from '../ports/store.js';
import { buildNotificationRequest } from './notification-request.js';
import type { HostSignal } from './scheduler.js';
import { sendNotification, type AttemptOutcome } from './send-notification.js';
import { retryDelay, type NotifySettings } from './settings.js';

export interface AttemptDeps {
  store: Store;
  agent: Dispatcher;
  settings: Pick<NotifySettings, 'timeoutMs' | 'retryScheduleMs' | 'jitter'>;
  now: () => number;
  random: () => number;
}

export interface AttemptResult {
  outcome: AttemptOutcome;
  /** The attempt's number (1 for the first). */
  attempt: number;
  /** When it is due again if not delivered. */
  next_attempt_at: number;
  /** Whether the record was written under this claim (false: the lease had passed to another). */
  applied: boolean;
  finished: number;
}

/**
 * One attempt of a claimed notification: prepared (built and signed), sent, and recorded with its
 * outcome in one write, outside any other transaction. Not delivered, it is due again after the
 * retry schedule's wait, or the host's Retry-After if longer (up to maxRetryAfterMs); aborted by
 * shutdown, due again at once (for the next run or another instance).
 */
export async function attemptNotification(
  deps: AttemptDeps,
  row: ClaimedRow,
  signal: AbortSignal,
  maxRetryAfterMs: number,
): Promise<AttemptResult> {
  const { settings, store } = deps;
  const attemptedAt = deps.now();
  let outcome: AttemptOutcome;
  try {
    if (row.api_key === null) throw new Error(`order ${row.order_id} or its wallet not found`);
    const req = buildNotificationRequest(row, row.api_key, Math.floor(attemptedAt / 1000));
    outcome = await sendNotification(deps.agent, row.callback_url, req, { timeoutMs: settings.timeoutMs, signal });
  } catch (e) {
    const error = `could not prepare the notification: ${e instanceof Error ? e.message : String(e)}`;
    outcome = { delivered: false, http_status: null, response_excerpt: null, latency_ms: 0, error };
  }
  const finished = deps.now();
  const attempt = row.attempts + 1;
  const wait = Math.max(
    retryDelay(attempt, settings.retryScheduleMs, settings.jitter, deps.random()),
    Math.min(outcome.retry_after_ms ?? 0, maxRetryAfterMs),
  );
  const next_attempt_at = signal.aborted ? finished : finished + wait;
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
    next_attempt_at,
    now: finished,
  });
  return { outcome, attempt, next_attempt_at, applied, finished };
}

/**
 * What an attempt says of its host's capacity: no answer (timeout, refused or reset connection), a
 * 5xx or a 429 is an overload; any other answer, delivered or not, is an answer. A notification
 * that could not even be prepared, or one aborted by shutdown, says nothing.
 */
export function hostSignal(outcome: AttemptOutcome, aborted: boolean): HostSignal {
  if (aborted || (outcome.http_status === null && outcome.latency_ms === 0)) return { kind: 'neutral' };
  const status = outcome.http_status;
  if (status === null || status >= 500 || status === 429)
    return {
      kind: 'overloaded',
      ...(outcome.retry_after_ms !== undefined && { retryAfterMs: outcome.retry_after_ms }),
    };
  return { kind: 'answered' };
}
