import type { BankFileSettings } from './payouts.js';
import type { MasterKey } from '../domain/sealed.js';
import type { Connector, ProviderName } from '../ports/connector.js';
import type { Log } from '../ports/log.js';
import type { ConsoleMailer } from '../ports/mailer.js';
import type { GatewayMetrics } from '../ports/metrics.js';
import type { Tracing } from '../ports/tracing.js';
import type { StatusSignals } from '../ports/signals.js';
import type { Store } from '../ports/store.js';
import type { CredentialCache } from './credentials.js';

export type GatewayMode = 'sandbox' | 'live';

export interface GatewayConfig {
  /** Base URL the gateway is reached at by merchants and customers, without a trailing slash. */
  publicUrl: string;
  mode: GatewayMode;
  /** How long a nonce stays usable after creation. */
  nonceTtlMs: number;
  /** How long a query with is_block=1 waits for a status change. */
  longPollTimeoutMs: number;
  /** How long a failed cancel (code 1) blocks further cancels of that order. */
  cancelLockMs: number;
  /** How long users, wallets and rates read from the store are reused (0: read every time). */
  credentialCacheMs: number;
  /** How long a refund waits for other refunds of its order whose channel outcome decides whether it fits. */
  refundWaitMs: number;
  /** How long a pending order lives (from its creation) before it is closed at its provider and ends failed. */
  orderExpiryMs: number;
  /** How long after a provider payment is opened the provider is first asked about it, if its notification has not come. */
  channelReconcileAfterMs: number;
  /** FEE_PLANS_REQUIRED: a create for a wallet and method without a fee plan in effect is refused (305). */
  feePlansRequired: boolean;
  /** The operator's details for the payout bank files (PAYOUT_ABA_*, PAYOUT_NZ_*): the console's batches. */
  bankFiles?: BankFileSettings;
}

export const DEFAULT_CONFIG: Omit<GatewayConfig, 'publicUrl'> = {
  mode: 'sandbox',
  nonceTtlMs: 30 * 60 * 1000,
  longPollTimeoutMs: 180 * 1000,
  cancelLockMs: 15 * 60 * 1000,
  credentialCacheMs: 1000,
  refundWaitMs: 10_000,
  orderExpiryMs: 24 * 60 * 60 * 1000,
  channelReconcileAfterMs: 60_000,
  feePlansRequired: false,
};

/** What a notification's endpoint answered: delivered only for 200 with body `sent`. */
export interface TestNotificationOutcome {
  delivered: boolean;
  http_status: number | null;
  response_excerpt: string | null;
  latency_ms: number;
  error: string | null;
}

/** One connector per provider; which one serves a wallet's method is the registry's choice (channels.ts). */
export type Connectors = Readonly<Record<ProviderName, Connector>>;

/** Everything a use case may touch. Routes and the CLI build one and pass it in. */
export interface GatewayContext {
  store: Store;
  /** Users, wallets and rates, read through a short-lived cache. */
  credentials: CredentialCache;
  connectors: Connectors;
  signals: StatusSignals;
  config: GatewayConfig;
  /** Where use cases report what providers said and did (the server's logger). */
  log: Log;
  /** The notification worker, told when settle has queued a notification so that it delivers at once. */
  notifier?: {
    poke(queued?: { event_id: string; callback_host: string }): void;
    /** One attempt of a notification that is not stored (the console's test), through the same checks and client as every attempt. */
    sendTest?(
      url: string,
      source: { event_id: string; order_id: string; seq: number; payload: string },
      api_key: string,
    ): Promise<TestNotificationOutcome & { body: string; headers: Readonly<Record<string, string>> }>;
  };
  /** Seals secrets at rest (channel accounts, console users' TOTP secrets); none when not configured. */
  masterKey?: MasterKey;
  /** The operator's metrics (METRICS_TOKEN or METRICS_PORT); none when they are off. */
  metrics?: GatewayMetrics;
  /** The console's email (SMTP_URL): invitations and password links; none: the console shows the links. */
  mailer?: ConsoleMailer;
  /** Spans for the operator's tracing (OTEL_EXPORTER_OTLP_ENDPOINT); none when it is off. */
  tracing?: Tracing;
  now: () => number;
}

/** A logger that writes nothing: for contexts without a server (the CLI, tests). */
export const SILENT_LOG: Log = { info() {}, warn() {}, error() {} };
