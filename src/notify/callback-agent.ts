import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { Agent, buildConnector } from 'undici';
import { CallbackRefusedError, checkAddress, checkResolved, parseIp, type CallbackPolicy } from './callback-safety.js';

/** dns.lookup with `all: true`, injectable so the rules can be tested without a resolver. */
export type Resolver = (
  hostname: string,
  options: LookupAllOptions,
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

const systemResolver: Resolver = (hostname, options, callback) => dnsLookup(hostname, options, callback);

/**
 * A `lookup` for net/tls.connect that resolves the name once, checks every address against the
 * policy and hands exactly those addresses to the socket: the address that is checked is the
 * address that is connected to, so a second DNS answer (rebinding) never gets a say.
 */
export function safeLookup(policy: CallbackPolicy, resolve: Resolver = systemResolver): LookupFunction {
  return ((
    hostname: string,
    options: { family?: number | string; all?: boolean },
    callback: (...args: unknown[]) => void,
  ) => {
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : Number(options.family ?? 0);
    resolve(hostname, { all: true, family: family === 4 || family === 6 ? family : 0 }, (err, addresses) => {
      if (err) return callback(err);
      const verdict = checkResolved(
        hostname,
        addresses.map((a) => a.address),
        policy,
      );
      if (!verdict.allowed) return callback(new CallbackRefusedError(verdict.reason));
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      return callback(null, first.address, first.family);
    });
  }) as LookupFunction;
}

export interface CallbackAgentOptions {
  policy: CallbackPolicy;
  /** Connect, headers and body timeouts, each. */
  timeoutMs: number;
  resolve?: Resolver;
}

/**
 * The undici dispatcher for notifications. Names go through safeLookup; IP literals (which
 * net.connect does not look up) are checked before connecting; and the connected socket's peer
 * address is checked once more before a byte of the request is written.
 */
export function createCallbackAgent(opts: CallbackAgentOptions): Agent {
  const base = buildConnector({ timeout: opts.timeoutMs, lookup: safeLookup(opts.policy, opts.resolve) });
  const connect: buildConnector.connector = (options, callback) => {
    const literal = checkLiteral(options.hostname, opts.policy);
    if (literal) return callback(literal, null);
    base(options, (err, socket) => {
      if (err || !socket) return callback(err ?? new Error('connect failed'), null);
      const peer = socket.remoteAddress;
      const verdict = peer === undefined ? undefined : checkAddress(peer, opts.policy);
      if (!verdict?.allowed) {
        socket.destroy();
        return callback(
          new CallbackRefusedError(verdict?.reason ?? `connected to ${options.hostname} but its address is unknown`),
          null,
        );
      }
      return callback(null, socket);
    });
  };
  return new Agent({
    connect,
    headersTimeout: opts.timeoutMs,
    bodyTimeout: opts.timeoutMs,
    // Merchants' servers are many and mostly idle between notifications.
    keepAliveTimeout: 4_000,
  });
}

function checkLiteral(hostname: string, policy: CallbackPolicy): CallbackRefusedError | undefined {
  if (!parseIp(hostname)) return undefined; // a name: safeLookup checks what it resolves to
  const verdict = checkAddress(hostname, policy);
  return verdict.allowed ? undefined : new CallbackRefusedError(verdict.reason);
}
