import type { Connector } from '../ports/connector.js';
import type { Connectors } from './context.js';

// The connectors with every provider call passed through `around` (metrics time and count them,
// tracing makes each a span). Everything else (provider, capabilities, pure helpers) is the
// connector's own, through the prototype.

export const CALL_OPERATIONS = [
  'open',
  'query',
  'close',
  'refund',
  'queryRefund',
  'readNotification',
  'probe',
] as const;
export type CallOperation = (typeof CALL_OPERATIONS)[number];

export type AroundCall = (
  provider: string,
  operation: CallOperation,
  call: () => Promise<{ kind: string }>,
) => Promise<{ kind: string }>;

export function wrapConnectors(connectors: Connectors, around: AroundCall): Connectors {
  const out: Record<string, Connector> = {};
  for (const [name, connector] of Object.entries(connectors)) {
    const wrapped = Object.create(connector) as Connector;
    const methods = wrapped as unknown as Record<string, unknown>;
    for (const operation of CALL_OPERATIONS) {
      // eslint-disable-next-line @typescript-eslint/unbound-method -- called with `connector` as `this` below
      const call = connector[operation] as (...args: unknown[]) => Promise<{ kind: string }>;
      methods[operation] = (...args: unknown[]) =>
        around(connector.provider, operation, () => call.apply(connector, args));
    }
    out[name] = wrapped;
  }
  return out;
}
