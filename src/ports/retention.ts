// What retention removes (usecases/retention.ts decides when and how much), and where its nonce
// sweep got to. Each removing method removes one batch of at most `limit` rows in one atomic unit
// and returns how many it removed: the caller repeats it until a batch comes back short. Instances
// running them at once on one PostgreSQL skip each other's rows instead of waiting for them, and a
// row is counted by the instance that removed it, so nothing is removed or counted twice.

/** The name, in console_settings, of the `before` of the latest completed nonce sweep (ms, decimal). */
export const NONCES_SWEPT_BEFORE = 'retention.nonces_swept_before';

export interface RetentionRepo {
  /**
   * The attempts of notifications delivered before `before`. Each notification counts the attempts
   * removed from it (attempts_pruned) and when the latest of them was made (attempts_pruned_until).
   */
  pruneDeliveredAttempts(before: number, limit: number): Promise<number>;
  /**
   * Of each notification not delivered, the attempts after its first `keep.first` and before its
   * last `keep.last`; counted as pruneDeliveredAttempts counts them.
   */
  pruneUndeliveredAttempts(keep: { first: number; last: number }, limit: number): Promise<number>;
  /**
   * One batch of the nonce sweep: the first `limit` nonces (by primary key) after `range.after`
   * and, if `range.before` is set, below it. Of those, the ones never used that expired before
   * `cutoff.nonces` are removed, and the hosted-page visits of those that expired before
   * `cutoff.visits` forget their page token hash (the nonce and when it was used stay). `scanned`
   * is how many nonces the batch looked at (fewer than `limit`: the range is done), `last` the
   * greatest of them, where the next batch starts.
   */
  sweepNonces(
    range: { after: string; before: string | null },
    cutoff: { nonces: number; visits: number },
    limit: number,
  ): Promise<{ scanned: number; last: string | null; nonces: number; visits: number }>;
  /** The `before` of the latest nonce sweep that completed (NONCES_SWEPT_BEFORE), if any. */
  noncesSweptBefore(): Promise<number | null>;
  /** Records a completed sweep's `before`; a later one already recorded (another instance's) stays. */
  setNoncesSweptBefore(before: number): Promise<void>;
}
