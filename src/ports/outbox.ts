// The result notifications (a transactional outbox): rows are written by the settle of their
// order (TransactionsRepo.settle) and delivered by the notification worker, which claims them
// under a lease and records every attempt.

export type DeliveryStatus = 'pending' | 'delivered';

export interface OutboxRow {
  /** The notification's id (webhook-id): `evt_` and 32 hex digits. */
  event_id: string;
  order_id: string;
  /** The order's status_seq this notification reports. */
  seq: number;
  callback_url: string;
  /** `host[:port]` of callback_url: the unit of per-merchant delivery concurrency. */
  callback_host: string;
  /** JSON object of the notification fields without signature, in wire order; signed at each attempt. */
  payload: string;
  delivery_status: DeliveryStatus;
  attempts: number;
  next_attempt_at: number;
  claimed_by: string | null;
  claimed_until: number | null;
  created_at: number;
  delivered_at: number | null;
  /** How many of its attempts retention removed (0 on insert). */
  attempts_pruned: number;
  /** When the latest of those removed attempts was made; null while none was removed. */
  attempts_pruned_until: number | null;
}

export type NewOutboxRow = OutboxRow;

/**
 * A notification as claimed for an attempt: with the key that signs it, the current API key of its
 * order's wallet, read by the claim itself (an attempt starts as soon as its row is claimed, so a
 * rotated key signs the very next attempt); null without the order or its wallet. On SQLite the
 * claim may see a key whose change is committed but still being flushed to disk: a new key is
 * shown to its merchant only once it is on disk, so a key a crash takes back signs nothing the
 * merchant could have verified (that attempt fails and is retried).
 */
export type ClaimedRow = OutboxRow & { api_key: string | null };

export interface NotificationAttempt {
  attempt_id: number;
  event_id: string;
  attempted_at: number;
  http_status: number | null;
  /** The first 200 bytes of the answer. */
  response_excerpt: string | null;
  latency_ms: number;
  error: string | null;
}

/** A claim of named notifications (OutboxRepo.claimQueued): whose lease, from when, for how long. */
export type QueuedClaimInput = Pick<ClaimInput, 'claimed_by' | 'now' | 'lease_ms'> & { event_ids: readonly string[] };

export interface ClaimInput {
  /** This instance's id, written to claimed_by. */
  claimed_by: string;
  now: number;
  /** The claim lasts until now + lease_ms; after that another instance may claim the row again. */
  lease_ms: number;
  /** At most this many rows. */
  limit: number;
  /** At most this many rows for a callback_host not in host_limits... */
  per_host: number;
  /** ...or fewer for these hosts, which already have attempts in flight here (0: none of theirs). */
  host_limits?: ReadonlyMap<string, number>;
}

export interface AttemptRecord {
  event_id: string;
  /** The claim this attempt was made under (claimed_by, claimed_until as returned by the claim). */
  claimed_by: string;
  claimed_until: number;
  attempt: Omit<NotificationAttempt, 'attempt_id' | 'event_id'>;
  /** Acknowledged with `sent`: the row becomes delivered at `now`. Otherwise it is due again at next_attempt_at. */
  delivered: boolean;
  next_attempt_at: number;
  now: number;
}

/** Notifications to one callback host that are failing now (pending, at least one attempt). */
export interface FailingHost {
  callback_host: string;
  failing: number;
  /** When the oldest of them was queued. */
  oldest_created_at: number;
  /** The one of them attempted last (its attempts say how it fails). */
  latest_event_id: string;
}

/** Where failing notifications are looked for: one wallet's orders, one organisation's, or all. */
export type OutboxScope = { wallet_id: string } | { organisation_id: number } | Record<string, never>;

/** The console's notification log: newest first, a page after the last row of the one before. */
export interface OutboxSearch {
  /** Notifications of this organisation's orders only (a merchant's console user); all when absent. */
  organisation_id?: number;
  /** failing: not delivered, its last attempt failed; waiting: not attempted yet; delivered. */
  state?: 'failing' | 'waiting' | 'delivered';
  callback_host?: string;
  /** created_at from (inclusive) and to (exclusive), epoch ms. */
  from?: number;
  to?: number;
  after?: { created_at: number; event_id: string };
  limit: number;
}

/** A page of the notification log: each row with its order's user_id (null if the order is gone). */
export interface OutboxSearchPage {
  rows: Array<OutboxRow & { user_id: string | null }>;
  next?: { created_at: number; event_id: string };
}

export interface OutboxRepo {
  /** The console's notification log (OutboxSearch); `next` is where the next page starts, absent at the end. */
  search(f: OutboxSearch): Promise<OutboxSearchPage>;
  /**
   * Makes every failing notification to this host due now (of one organisation's orders, or all),
   * those being attempted now left alone: the host is back, do not wait for its retries' schedule.
   * Returns how many were made due.
   */
  retryHostNow(f: { callback_host: string; organisation_id?: number }, now: number): Promise<number>;
  /**
   * Claims due, unclaimed (or lease-expired) pending notifications for this instance, oldest due
   * first, within the per-host limits. Concurrent claimers never get the same row within a lease.
   */
  claimDue(input: ClaimInput): Promise<ClaimedRow[]>;
  /**
   * Claims these notifications, those of them still due and unclaimed (or lease-expired), by their
   * event_id: the ones this instance has just queued, without the search of claimDue (the caller
   * keeps within its own caps). Rows that are not claimable are left alone.
   */
  claimQueued(input: QueuedClaimInput): Promise<ClaimedRow[]>;
  /** Frees every claim on a pending notification: only for the sole server of the database, at start. */
  releaseClaims(): Promise<number>;
  /**
   * Records an attempt and, if the claim is still this attempt's, ends it in the same atomic unit:
   * delivered, or due again at next_attempt_at. Returns false when the claim had been lost (a resend
   * or an expired lease): the attempt is recorded and counted but the row is left to its new owner.
   */
  recordAttempt(input: AttemptRecord): Promise<boolean>;
  find(event_id: string): Promise<OutboxRow | undefined>;
  /** An order's notifications, by seq. */
  listByOrder(order_id: string): Promise<OutboxRow[]>;
  /** Notifications not delivered whose last attempt failed: of one organisation's orders, or of all. */
  countFailing(organisation_id?: number): Promise<number>;
  /** The hosts whose notifications are failing now, most failing first (at most `limit`). */
  failingHosts(scope: OutboxScope, limit: number): Promise<FailingHost[]>;
  /** How many callback hosts have a notification failing now (the metrics' gauge: one count, whatever their number). */
  countFailingHosts(): Promise<number>;
  /** Notifications not delivered yet, and when the oldest of them was queued. */
  backlog(): Promise<{ pending: number; oldest_created_at: number | null }>;
  /** A notification's attempts that retention kept, oldest first (attempts_pruned counts the others). */
  listAttempts(event_id: string): Promise<NotificationAttempt[]>;
  /** Makes a notification due now and unclaimed, delivered or not (a resend). */
  requeueNow(event_id: string, now: number): Promise<OutboxRow | undefined>;
}
