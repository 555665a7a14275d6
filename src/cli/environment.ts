import { DEFAULT_NOTIFY_SETTINGS } from '../notify/settings.js';
import { DEFAULT_CONFIG } from '../usecases/context.js';
import { DEFAULT_RETENTION } from '../usecases/retention.js';
import type { EnvSetting } from './command.js';

// Every environment variable the gateway reads, with its default: `gateway serve --help` lists
// those without a flag, and test/docs/coverage.test.ts holds this list, the code that reads the
// variables and docs/operators.md's configuration table to each other.

export const ENVIRONMENT: readonly EnvSetting[] = [
  { name: 'PORT', help: 'the TCP port (--port)', default: '8080' },
  { name: 'HOST', help: 'the address to listen on (--host)', default: '0.0.0.0' },
  { name: 'DATABASE_URL', help: 'the SQLite file, or a postgres:// URL (--database)', default: './data/gateway.db' },
  {
    name: 'PUBLIC_URL',
    help: 'the base URL of host_url and QR links (--public-url)',
    default: 'http://localhost:PORT',
  },
  { name: 'GATEWAY_MODE', help: 'sandbox or live (--mode)', default: 'sandbox' },
  { name: 'LOG_LEVEL', help: "pino's level", default: 'info' },
  { name: 'NONCE_TTL_MS', help: 'how long a nonce stays usable', default: String(DEFAULT_CONFIG.nonceTtlMs) },
  {
    name: 'LONG_POLL_TIMEOUT_MS',
    help: 'how long is_block=1 waits',
    default: String(DEFAULT_CONFIG.longPollTimeoutMs),
  },
  {
    name: 'CANCEL_LOCK_MS',
    help: 'how long a failed cancel (code 1) blocks further cancels',
    default: String(DEFAULT_CONFIG.cancelLockMs),
  },
  {
    name: 'REFUND_WAIT_MS',
    help: 'how long a refund waits for another refund of the order to be answered',
    default: String(DEFAULT_CONFIG.refundWaitMs),
  },
  { name: 'GATEWAY_MASTER_KEY', help: "the key sealing the channel accounts' secrets (32 bytes, base64 or hex)" },
  { name: 'GATEWAY_MASTER_KEY_FILE', help: 'a file holding that key, instead of GATEWAY_MASTER_KEY' },
  {
    name: 'ORDER_EXPIRY_MS',
    help: 'how long a pending order lives before it ends failed',
    default: String(DEFAULT_CONFIG.orderExpiryMs),
  },
  {
    name: 'CHANNEL_RECONCILE_AFTER_MS',
    help: 'when a provider is first asked about an unreported payment',
    default: String(DEFAULT_CONFIG.channelReconcileAfterMs),
  },
  {
    name: 'FEE_PLANS_REQUIRED',
    help: 'true: a create for a wallet and method without a fee plan in effect is refused (305)',
    default: 'false',
  },
  {
    name: 'STATEMENT_IMPORT',
    help: "false: no daily import of the providers' statements (docs/reconciliation.md)",
    default: 'true',
  },
  { name: 'PROVIDER_TIMEOUT_MS', help: 'how long one call to a provider may take (then: unknown)', default: '10000' },
  { name: 'PAYOUT_ABA_USER_ID', help: 'AUD payout file: the 6-digit APCA user id (docs/books.md)' },
  { name: 'PAYOUT_ABA_BANK', help: "AUD payout file: the bank's 3-letter abbreviation" },
  { name: 'PAYOUT_ABA_USER_NAME', help: 'AUD payout file: the user name the bank knows' },
  { name: 'PAYOUT_ABA_REMITTER', help: "AUD payout file: the name on merchants' statements" },
  { name: 'PAYOUT_ABA_TRACE_BSB', help: "AUD payout file: the operator's BSB for returned credits" },
  { name: 'PAYOUT_ABA_TRACE_ACCOUNT', help: "AUD payout file: the operator's account there" },
  { name: 'PAYOUT_ABA_SELF_BALANCE', help: 'AUD payout file: true adds the balancing debit', default: 'false' },
  { name: 'PAYOUT_NZ_ACCOUNT', help: "NZD payout file: the operator's paying account (docs/books.md)" },
  { name: 'PAYOUT_NZ_NAME', help: "NZD payout file: the operator's name on merchants' statements" },
  {
    name: 'CREDENTIAL_CACHE_MS',
    help: 'how long users, wallets and rates are reused in memory (0: off)',
    default: String(DEFAULT_CONFIG.credentialCacheMs),
  },
  { name: 'DATABASE_POOL_SIZE', help: "PostgreSQL: connections in each instance's pool", default: '10' },
  { name: 'SQLITE_SYNCHRONOUS', help: 'SQLite: full (answer once on disk) or normal', default: 'full' },
  { name: 'TRUST_PROXY', help: 'the reverse proxies believed: true, or addresses and CIDRs, comma-separated' },
  { name: 'METRICS_TOKEN', help: '/metrics on the main port to this bearer token (16 characters at least)' },
  { name: 'METRICS_PORT', help: '/metrics on a listener of its own, without a token (0: any free port)' },
  { name: 'METRICS_HOST', help: "that listener's address", default: '127.0.0.1' },
  {
    name: 'SMTP_URL',
    help: "the console's invitations and password links by email: smtp://user:password@host:587 (STARTTLS) or smtps://host:465; unset: the console shows the links",
  },
  { name: 'SMTP_FROM', help: 'the From of those emails', default: 'Payment gateway console <console@PUBLIC_URL host>' },
  { name: 'OTEL_EXPORTER_OTLP_ENDPOINT', help: 'tracing on: OpenTelemetry spans over OTLP/HTTP to this base URL' },
  { name: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', help: 'tracing on: spans to this whole URL' },
  { name: 'OTEL_SERVICE_NAME', help: 'the service name on the spans', default: 'payment-gateway' },
  { name: 'NOTIFY_ALLOW_CIDRS', help: 'callback addresses allowed despite the safety rules (--notify-allow-cidrs)' },
  {
    name: 'NOTIFY_RETRY_SCHEDULE_MS',
    help: 'notification retry waits, e.g. 5000,30000,60000 (the last repeats)',
    default: DEFAULT_NOTIFY_SETTINGS.retryScheduleMs.join(','),
  },
  {
    name: 'NOTIFY_TIMEOUT_MS',
    help: "one notification attempt's timeout",
    default: String(DEFAULT_NOTIFY_SETTINGS.timeoutMs),
  },
  {
    name: 'NOTIFY_LEASE_MS',
    help: 'how long an instance holds a claimed notification',
    default: String(DEFAULT_NOTIFY_SETTINGS.leaseMs),
  },
  {
    name: 'NOTIFY_POLL_MS',
    help: 'how often the worker searches the outbox for due rows',
    default: String(DEFAULT_NOTIFY_SETTINGS.pollIntervalMs),
  },
  {
    name: 'NOTIFY_CONCURRENCY',
    help: 'notification attempts in flight per instance',
    default: String(DEFAULT_NOTIFY_SETTINGS.concurrency),
  },
  {
    name: 'NOTIFY_HOST_CONCURRENCY',
    help: 'notification attempts in flight per callback host to begin with (it adapts)',
    default: String(DEFAULT_NOTIFY_SETTINGS.hostConcurrency),
  },
  {
    name: 'NOTIFY_HOST_CONCURRENCY_MAX',
    help: "the most a callback host's limit of attempts in flight grows to",
    default: String(DEFAULT_NOTIFY_SETTINGS.hostConcurrencyMax),
  },
  {
    name: 'NOTIFY_ENABLED',
    help: 'false queues notifications without delivering them',
    default: String(DEFAULT_NOTIFY_SETTINGS.enabled),
  },
  {
    name: 'NOTIFY_STOP_GRACE_MS',
    help: 'on shutdown, how long attempts in flight may finish',
    default: String(DEFAULT_NOTIFY_SETTINGS.stopGraceMs),
  },
  {
    name: 'RETENTION_INTERVAL_MS',
    help: 'how often old attempts, nonces and visits are removed (0: never)',
    default: String(DEFAULT_RETENTION.intervalMs),
  },
  {
    name: 'RETENTION_ATTEMPTS_DAYS',
    help: "a delivered notification's attempts are kept this many days",
    default: String(DEFAULT_RETENTION.attemptsDays),
  },
];

/** What `gateway serve` reads from the environment beyond its flags' variables. */
export function serveEnvironment(): readonly EnvSetting[] {
  const flagged = new Set(['PORT', 'HOST', 'DATABASE_URL', 'PUBLIC_URL', 'GATEWAY_MODE', 'NOTIFY_ALLOW_CIDRS']);
  return ENVIRONMENT.filter((e) => !flagged.has(e.name));
}
