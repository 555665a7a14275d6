// Spans for an operator's tracing (src/tracing implements it with OpenTelemetry). Absent from the
// context when tracing is off, so that nothing at all is done for it then.

export interface Tracing {
  /** Runs `work` in a span named `name`, a child of the span active now (if any). */
  span<T>(name: string, attributes: Readonly<Record<string, string | number>>, work: () => Promise<T>): Promise<T>;
  /** The notification `event_id` was queued under the span active now: its delivery attempts join that trace. */
  queued(event_id: string): void;
}
