import type { ProviderDescriptor } from '../ports/provider.js';
import type { Connectors } from '../usecases/context.js';
import { alipay } from './alipay/index.js';
import { azupay } from './azupay/index.js';
import { coinpayments } from './coinpayments/index.js';
import { ProviderHttp } from './http.js';
import { poli } from './poli/index.js';
import { unionpay } from './unionpay/index.js';
import type { ProviderEntry } from './provider-entry.js';
import { SandboxConnector } from './sandbox/connector.js';
import { wechatpay } from './wechatpay/index.js';

// Every provider the gateway has: a folder here and a line in PROVIDERS. The CLI's `channel set`,
// the console's provider forms, the accounts' validation and the notification addresses are made
// from their descriptors; which provider serves a wallet's method is decided per order
// (usecases/channels.ts). The sandbox is built in: it has no accounts.

export const PROVIDERS: readonly ProviderEntry[] = [alipay, wechatpay, poli, coinpayments, azupay, unionpay];

export const PROVIDER_DESCRIPTORS: readonly ProviderDescriptor[] = PROVIDERS.map((p) => p.descriptor);

export interface ConnectorOptions {
  /** The gateway's public URL: known once the server listens. */
  publicUrl: () => string;
  /** The sandbox's state of an order's payment (its channel_state). */
  sandboxState: (order_id: string) => Promise<string | null | undefined>;
  /** How long a call to a provider may take before its outcome counts as unknown. */
  timeoutMs: number;
  /** The providers to build (a test adds one of its own); the registry's by default. */
  providers?: readonly ProviderEntry[];
}

export function buildConnectors(opts: ConnectorOptions): { connectors: Connectors; close(): Promise<void> } {
  const http = new ProviderHttp(opts.timeoutMs);
  const providers = opts.providers ?? PROVIDERS;
  return {
    connectors: {
      sandbox: new SandboxConnector(opts.publicUrl, opts.sandboxState),
      ...Object.fromEntries(providers.map((p) => [p.descriptor.name, p.connector({ http })])),
    },
    close: () => http.close(),
  };
}
