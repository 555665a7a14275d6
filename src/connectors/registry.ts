import type { Connectors } from '../usecases/context.js';
import { AlipayConnector } from './alipay/connector.js';
import { ProviderHttp } from './http.js';
import { SandboxConnector } from './sandbox/connector.js';
import { WechatPayConnector } from './wechatpay/connector.js';

// Every connector the gateway has, one per provider; which serves a wallet's method is decided
// per order (usecases/channels.ts). A new provider is a folder here and a line below.

export interface ConnectorOptions {
  /** The gateway's public URL: known once the server listens. */
  publicUrl: () => string;
  /** The sandbox's state of an order's payment (its channel_state). */
  sandboxState: (order_id: string) => Promise<string | null | undefined>;
  /** How long a call to a provider may take before its outcome counts as unknown. */
  timeoutMs: number;
}

export function buildConnectors(opts: ConnectorOptions): { connectors: Connectors; close(): Promise<void> } {
  const http = new ProviderHttp(opts.timeoutMs);
  return {
    connectors: {
      sandbox: new SandboxConnector(opts.publicUrl, opts.sandboxState),
      alipay: new AlipayConnector(http),
      wechatpay: new WechatPayConnector(http),
    },
    close: () => http.close(),
  };
}
