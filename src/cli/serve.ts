import { bankFileSettings } from './payouts.js';
import { requestSignature } from '../domain/signing.js';
import { parseCidrList } from '../notify/callback-safety.js';
import { notifySettingsFromEnv, resolveNotifySettings } from '../notify/settings.js';
import type { Store } from '../ports/store.js';
import type { ConsoleKind, ConsoleRole } from '../domain/console.js';
import { ConsoleError, inviteUser, passwordLink, type ConsoleDeps } from '../usecases/console-auth.js';
import { resolveRetentionSettings } from '../usecases/retention.js';
import { createMerchant, type MerchantCredentials } from './admin.js';
import { UsageError, databaseOf, positiveEnv } from './args.js';
import type { Command, Values } from './command.js';
import { serveEnvironment } from './environment.js';
import { DATABASE_FLAG } from './shared.js';
import { masterKeyFromEnv } from './channels.js';

const DEMO_USER = 'U000000001';
const DEMO_WALLET = 'W00000000000000001';

export const serve: Command = {
  name: 'serve',
  summary: 'start the gateway',
  description:
    'Serves the merchant API, the hosted pages and the console, and runs the notification worker, the\nreconciliation with the providers and retention. Settings come from the flags, then the environment.\nStops on SIGINT or SIGTERM, finishing what is in flight.',
  flags: [
    { name: 'port', type: 'string', value: 'N', help: 'the TCP port', env: 'PORT', default: '8080' },
    {
      name: 'host',
      type: 'string',
      value: 'ADDRESS',
      help: 'the address to listen on',
      env: 'HOST',
      default: '0.0.0.0',
    },
    DATABASE_FLAG,
    {
      name: 'public-url',
      type: 'string',
      value: 'URL',
      help: 'the base URL of host_url, QR links and notification addresses',
      env: 'PUBLIC_URL',
      default: 'http://localhost:PORT',
    },
    {
      name: 'mode',
      type: 'string',
      value: 'sandbox|live',
      help: 'sandbox: methods without a provider account use the sandbox; live: only provider accounts',
      env: 'GATEWAY_MODE',
      default: 'sandbox',
    },
    {
      name: 'demo',
      type: 'boolean',
      help: 'create (once) and print a demo merchant with a signed curl and console links',
    },
    {
      name: 'notify-allow-cidrs',
      type: 'string',
      value: 'LIST',
      help: 'callback addresses allowed despite the callback safety rules (CIDRs, comma-separated)',
      env: 'NOTIFY_ALLOW_CIDRS',
    },
  ],
  environment: serveEnvironment(),
  examples: [
    'gateway serve --demo',
    'GATEWAY_MASTER_KEY_FILE=/run/secrets/master-key gateway serve --mode live --database postgres://gateway@db/gateway --public-url https://pay.psp.example',
  ],
  run: serveCommand,
};

async function serveCommand(v: Values): Promise<number> {
  const portText = (v.port as string | undefined) ?? '8080';
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new UsageError(`--port must be a port number, not ${portText}`);
  const mode = (v.mode as string | undefined) ?? 'sandbox';
  if (mode !== 'sandbox' && mode !== 'live') throw new UsageError(`--mode must be sandbox or live, not ${mode}`);
  const publicUrl = v['public-url'] as string | undefined;
  if (publicUrl !== undefined && !/^https?:\/\/[^\s/]+/.test(publicUrl))
    throw new UsageError('--public-url must be an http(s) URL');
  const notify = settingsOrUsage(() => {
    const cidrs = v['notify-allow-cidrs'];
    const settings = {
      ...notifySettingsFromEnv(process.env),
      ...(typeof cidrs === 'string' && {
        allowCidrs: settingsOrUsage(() => parseCidrList(cidrs), '--notify-allow-cidrs (or NOTIFY_ALLOW_CIDRS): '),
      }),
    };
    resolveNotifySettings(settings);
    return settings;
  });
  const retention = settingsOrUsage(() =>
    resolveRetentionSettings({
      intervalMs: wholeEnv('RETENTION_INTERVAL_MS'),
      attemptsDays: wholeEnv('RETENTION_ATTEMPTS_DAYS'),
    }),
  );

  // Loaded here: the server (Fastify, the connectors, the pages) is a second of start-up that no
  // other command needs.
  const { startGateway } = await import('../server.js');
  const gateway = await startGateway({
    port,
    host: v.host as string | undefined,
    database: databaseOf(v),
    publicUrl,
    mode,
    logLevel: process.env.LOG_LEVEL ?? 'info',
    nonceTtlMs: wholeEnv('NONCE_TTL_MS'),
    longPollTimeoutMs: wholeEnv('LONG_POLL_TIMEOUT_MS'),
    cancelLockMs: wholeEnv('CANCEL_LOCK_MS'),
    credentialCacheMs: wholeEnv('CREDENTIAL_CACHE_MS'),
    refundWaitMs: wholeEnv('REFUND_WAIT_MS'),
    orderExpiryMs: positiveEnv('ORDER_EXPIRY_MS'),
    feePlansRequired: booleanEnv('FEE_PLANS_REQUIRED'),
    statementImport: booleanEnv('STATEMENT_IMPORT'),
    bankFiles: bankFileSettings(),
    channelReconcileAfterMs: positiveEnv('CHANNEL_RECONCILE_AFTER_MS'),
    providerTimeoutMs: positiveEnv('PROVIDER_TIMEOUT_MS'),
    masterKey: masterKeyFromEnv(),
    poolSize: positiveEnv('DATABASE_POOL_SIZE'),
    sqliteSynchronous: sqliteSynchronousEnv(),
    notify,
    retentionIntervalMs: retention.intervalMs,
    retentionAttemptsDays: retention.attemptsDays,
    ...trustProxyEnv(),
    ...metricsEnv(),
    ...smtpEnv(publicUrl),
    // OpenTelemetry's own variables: its exporter reads the endpoint, headers and the rest.
    ...((process.env.OTEL_EXPORTER_OTLP_ENDPOINT || process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) && { tracing: {} }),
  });
  if (v.demo) {
    try {
      const m = await ensureDemoMerchant(gateway.store);
      printDemo(m, gateway.ctx.config.publicUrl, await demoConsoleLinks(gateway.ctx, m));
    } catch (e) {
      // Without this the server would keep listening after the error is printed.
      await gateway.close();
      throw e;
    }
  }

  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await gateway.close();
  return 0;
}

function settingsOrUsage<T>(fn: () => T, prefix = ''): T {
  try {
    return fn();
  } catch (e) {
    throw e instanceof UsageError ? e : new UsageError(prefix + (e as Error).message);
  }
}

/** SMTP_URL (smtp:// or smtps://) and SMTP_FROM: the console's email; none, and the console shows its links. */
function smtpEnv(publicUrl: string | undefined): { smtp?: { url: string; from: string } } {
  const url = process.env.SMTP_URL;
  if (!url) return {};
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError('SMTP_URL must be a URL: smtp://user:password@host:587 or smtps://host:465');
  }
  if (parsed.protocol !== 'smtp:' && parsed.protocol !== 'smtps:')
    throw new UsageError(`SMTP_URL must start smtp:// or smtps://, not ${parsed.protocol}//`);
  // The gateway's own name is the natural sender's domain; the SMTP server's name is a relay's.
  const domain = publicUrl ? new URL(publicUrl).hostname : parsed.hostname;
  const from = process.env.SMTP_FROM || `Payment gateway console <console@${domain}>`;
  return { smtp: { url, from } };
}

/** METRICS_TOKEN (at least 16 characters: it guards the figures on the public port), METRICS_PORT, METRICS_HOST. */
function metricsEnv(): { metricsToken?: string; metricsPort?: number; metricsHost?: string } {
  const token = process.env.METRICS_TOKEN;
  const portText = process.env.METRICS_PORT;
  const host = process.env.METRICS_HOST;
  if (token !== undefined && token !== '' && (token.length < 16 || /\s/.test(token)))
    throw new UsageError('METRICS_TOKEN must be at least 16 characters without spaces (e.g. openssl rand -hex 24)');
  const port = portText === undefined || portText === '' ? undefined : Number(portText);
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535))
    throw new UsageError(`METRICS_PORT must be a port number, not ${portText}`);
  return {
    ...(token !== undefined && token !== '' && { metricsToken: token }),
    ...(port !== undefined && { metricsPort: port }),
    ...(host !== undefined && host !== '' && { metricsHost: host }),
  };
}

function sqliteSynchronousEnv(): 'full' | 'normal' | undefined {
  const text = process.env.SQLITE_SYNCHRONOUS;
  if (text === undefined || text === '') return undefined;
  const value = text.toLowerCase();
  if (value !== 'full' && value !== 'normal')
    throw new UsageError(`SQLITE_SYNCHRONOUS must be full or normal, not ${text}`);
  return value;
}

function wholeEnv(name: string): number | undefined {
  const text = process.env[name];
  if (text === undefined || text === '') return undefined;
  const n = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(n))
    throw new UsageError(`${name} must be a whole number, not ${text}`);
  return n;
}

async function ensureDemoMerchant(store: Store): Promise<MerchantCredentials> {
  const existing = await findDemoMerchant(store);
  if (existing) return existing;
  try {
    const m = await createMerchant(store, {
      name: 'Demo Merchant',
      currency: 'NZD',
      user_id: DEMO_USER,
      wallet_id: DEMO_WALLET,
    });
    await store.accounts.setRate('NZD', 'CNY', 4_644_300, Date.now());
    return m;
  } catch (e) {
    // Another instance starting at the same moment on the same database created it first.
    const created = await findDemoMerchant(store);
    if (created) return created;
    throw e;
  }
}

async function findDemoMerchant(store: Store): Promise<MerchantCredentials | undefined> {
  const wallet = await store.accounts.findWallet(DEMO_WALLET);
  const user = await store.accounts.findUser(DEMO_USER);
  if (wallet && user) {
    return {
      organisation_id: user.organisation_id,
      organisation_name: user.organisation_name,
      user_id: user.user_id,
      wallet_id: wallet.wallet_id,
      api_key: wallet.api_key,
      currency: wallet.currency,
    };
  }
  return undefined;
}

/**
 * The demo's console users, an operator and the demo merchant's owner: for each, a fresh one-time
 * link while its password is not set (a link, never a password), or a line saying it is.
 */
async function demoConsoleLinks(ctx: ConsoleDeps, m: MerchantCredentials): Promise<string[]> {
  const users: Array<[string, ConsoleKind, ConsoleRole, number | null]> = [
    ['admin@demo.example', 'operator', 'admin', null],
    ['owner@demo.example', 'merchant', 'owner', m.organisation_id],
  ];
  const lines: string[] = [];
  for (const [email, kind, role, organisation_id] of users) {
    const label = `${email} (${kind} ${role})`.padEnd(42);
    const existing = await ctx.store.console.findUserByEmail(email);
    if (existing?.password_hash) {
      lines.push(`  ${label} password set: sign in at ${ctx.config.publicUrl}/console`);
      continue;
    }
    try {
      const { link } = existing
        ? await passwordLink(ctx, existing)
        : await inviteUser(ctx, { kind: 'cli', name: 'demo' }, { email, kind, role, organisation_id });
      lines.push(`  ${label} set its password: ${link}`);
    } catch (e) {
      // Another instance starting at the same moment made the user first: its link is printed there.
      if (!(e instanceof ConsoleError && e.key === 'error.email_taken')) throw e;
      lines.push(`  ${label} made by another instance starting now: see its output`);
    }
  }
  return lines;
}

function printDemo(m: MerchantCredentials, base: string, consoleLines: readonly string[]): void {
  const body: Record<string, string> = {
    user_id: m.user_id,
    wallet_id: m.wallet_id,
    payment_method: 'alipay',
    amount: '0.01',
    return_url: 'https://merchant.example/return',
    callback_url: 'http://localhost:9999/callback',
    merchant_reference: `demo-${Date.now()}`,
    ip: '127.0.0.1',
    version: '2.0',
    product_name: 'Demo product',
  };
  body.signature = requestSignature(body, m.api_key);
  const json = JSON.stringify(body).replaceAll("'", "'\\''");
  const ref = body.merchant_reference;
  const querySignature = requestSignature({ merchant_reference: ref, user_id: m.user_id }, m.api_key);
  const query = `${base}/v2/transaction/${ref}?user_id=${m.user_id}&signature=${querySignature}`;
  console.log(`
Demo merchant (sandbox):
  user_id    ${m.user_id}
  wallet_id  ${m.wallet_id}
  api_key    ${m.api_key}
  currency   ${m.currency}

Create a transaction (signed for you):
  curl -s -X POST ${base}/v2/transaction -H 'Content-Type: application/json;charset=UTF-8' -d '${json}'

Then open {host_url}/{nonce} from the reply in a browser and pay in the sandbox payment app.
Or, without a browser: query the order (add &is_block=1 to wait for a change),
  curl -s '${query}'
and settle it with the order_id from that reply:
  curl -s -X POST ${base}/sandbox/pay/{order_id} -H 'Accept: application/json' -d result=paid

Console (${base}/console)${consoleLines.some((l) => l.includes(' set its password: ')) ? ', one-time links valid 72 h' : ''}:
${consoleLines.join('\n')}
`);
}

/** TRUST_PROXY: unset (no proxy believed), `true`, or a comma-separated list of addresses and CIDRs. */
function trustProxyEnv(): { trustProxy?: boolean | string } {
  const v = process.env.TRUST_PROXY?.trim();
  if (!v || v === 'false') return {};
  return { trustProxy: v === 'true' ? true : v };
}

/** A true/false variable; undefined when unset. */
function booleanEnv(name: string): boolean | undefined {
  const v = process.env[name];
  if (v === undefined || v === '') return undefined;
  if (v === 'true') return true;
  if (v === 'false') return false;
  throw new UsageError(`${name} must be true or false, not ${v}`);
}
