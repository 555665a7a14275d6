// What use cases report for the operator's metrics (src/metrics implements it with prom-client).
// Every label is from a small fixed set: never an order id, a URL or a merchant's value.

export interface GatewayMetrics {
  /** A long poll (query with is_block=1, or a hosted page's wait) starts; call the result when it ends. */
  longPollHeld(): () => void;
  /** A reconciliation round asked the provider about a payment; `outcome` is the answer's kind. */
  reconciled(provider: string, outcome: string): void;
  /** An order ended by expiry. */
  expired(): void;
}
