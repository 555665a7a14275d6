// What retention removes (usecases/retention.ts decides when and how much). Each method removes one
// batch of at most `limit` rows in one atomic unit and returns how many it removed: the caller
// repeats it until a batch comes back short. Instances running them at once on one PostgreSQL
// skip each other's rows instead of waiting for them, and a row is counted by the instance that
// removed it, so nothing is removed or counted twice.

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
  /** Nonces never used that expired before `before`. */
  deleteUnusedNonces(before: number, limit: number): Promise<number>;
  /**
   * Hosted-page visits of nonces that expired before `before`: the visit's page token hash is
   * forgotten; the nonce and when it was used stay.
   */
  forgetVisits(before: number, limit: number): Promise<number>;
}
