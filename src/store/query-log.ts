import type { LogEvent } from 'kysely';

/** Kysely's statement log, when statements are to be timed (tracing); nothing at all otherwise. */
export function queryLog(onQuery: ((ms: number) => void) | undefined): { log?: (event: LogEvent) => void } {
  return onQuery ? { log: (event) => onQuery(event.queryDurationMillis) } : {};
}
