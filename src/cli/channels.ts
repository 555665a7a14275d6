import { readFileSync } from 'node:fs';
import { buildConnectors } from '../connectors/registry.js';
import { privateKeyPem, publicKeyPem } from '../connectors/pem.js';
import { walletAccepts } from '../domain/account.js';
import { CURRENCY_MODES, notifyAddress } from '../domain/channel.js';
import { parseMasterKey, type MasterKey } from '../domain/sealed.js';
import { isPaymentMethod, type PaymentMethod } from '../domain/transaction.js';
import type { ChannelAccount } from '../ports/connector.js';
import type { Store } from '../ports/store.js';
import {
  AccountInputError,
  accountFromFields,
  certificateWarning,
  describeAccount,
  expiringCertificates,
  openAccount,
  setChannelAccount,
  type AccountFields,
} from '../usecases/channel-accounts.js';
import { auditCli } from './console-users.js';
import { DATABASE_OPTION, UsageError, parse, required } from './args.js';

// gateway channel set | list | remove | test: a wallet's accounts with the payment providers.
// The flag names are the operator guide's (README, "Payment providers"); keep them.

const USAGE = `usage:
  gateway channel set --wallet-id W --method alipay --provider alipay --app-id ID --private-key-file PEM
                      (--alipay-public-key-file PEM | --app-cert-file CRT --alipay-cert-file CRT --alipay-root-cert-file CRT)
                      [--endpoint URL] [--currency-mode domestic|cross-border]
  gateway channel set --wallet-id W --method wechat --provider wechatpay --mchid ID --appid ID --serial-no SERIAL
                      --private-key-file PEM --apiv3-key-file FILE --platform-public-key-file PEM
                      --platform-public-key-id ID [--endpoint URL] [--currency-mode domestic|cross-border] [--mcc CODE]
                      [--platform-certificate-file PEM] [--jsapi on --appsecret-file FILE [--oauth-endpoint URL]]
  gateway channel list [--wallet-id W] [--json]
  gateway channel remove --wallet-id W --method M
  gateway channel test --wallet-id W --method M`;

/** The master key from GATEWAY_MASTER_KEY or the file GATEWAY_MASTER_KEY_FILE names; undefined when neither is set. */
export function masterKeyFromEnv(env: NodeJS.ProcessEnv = process.env): MasterKey | undefined {
  const text = env.GATEWAY_MASTER_KEY;
  const file = env.GATEWAY_MASTER_KEY_FILE;
  if (text && file) throw new UsageError('set GATEWAY_MASTER_KEY or GATEWAY_MASTER_KEY_FILE, not both');
  try {
    if (text) return parseMasterKey(text);
    if (file) return parseMasterKey(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new UsageError(
      `${text ? 'GATEWAY_MASTER_KEY' : `GATEWAY_MASTER_KEY_FILE (${file})`}: ${(e as Error).message}`,
    );
  }
  return undefined;
}

function requireMasterKey(): MasterKey {
  const key = masterKeyFromEnv();
  if (!key)
    throw new UsageError(
      'channel accounts are sealed with the master key: set GATEWAY_MASTER_KEY (or GATEWAY_MASTER_KEY_FILE); make one with `openssl rand -base64 32`',
    );
  return key;
}

function readFile(values: Record<string, unknown>, name: string): string {
  const path = required(values, name);
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw new UsageError(
      `--${name} ${path}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`,
    );
  }
}

function pem(values: Record<string, unknown>, name: string, kind: 'private' | 'public'): string {
  const text = readFile(values, name);
  try {
    return kind === 'private' ? privateKeyPem(text) : publicKeyPem(text);
  } catch (e) {
    throw new UsageError(`--${name}: ${(e as Error).message}`);
  }
}

const CERT_FLAGS = ['app-cert-file', 'alipay-cert-file', 'alipay-root-cert-file'] as const;

/** Alipay's public key, or in certificate mode the three certificates (the connector checks them). */
function alipayKeys(values: Record<string, unknown>): AccountFields {
  const given = CERT_FLAGS.filter((f) => values[f] !== undefined);
  if (given.length === 0) return { alipay_public_key: pem(values, 'alipay-public-key-file', 'public') };
  if (values['alipay-public-key-file'] !== undefined)
    throw new UsageError(
      'give --alipay-public-key-file (public-key mode) or the three certificate files (certificate mode), not both',
    );
  const missing = CERT_FLAGS.filter((f) => values[f] === undefined);
  if (missing.length > 0)
    throw new UsageError(
      `certificate mode needs --app-cert-file, --alipay-cert-file and --alipay-root-cert-file; missing ${missing.map((f) => `--${f}`).join(', ')}`,
    );
  return {
    app_cert: readFile(values, 'app-cert-file'),
    alipay_cert: readFile(values, 'alipay-cert-file'),
    alipay_root_cert: readFile(values, 'alipay-root-cert-file'),
  };
}

function methodOf(values: Record<string, unknown>): PaymentMethod {
  const m = required(values, 'method');
  if (!isPaymentMethod(m))
    throw new UsageError(
      `--method must be one of wechat, alipay, moneymore, polipay, payid, upi_upop, coin_payments, not ${m}`,
    );
  return m;
}

function jsapiOf(values: Record<string, unknown>): boolean {
  const v = values.jsapi;
  if (v === undefined) return false;
  if (v !== 'on' && v !== 'off')
    throw new UsageError(`--jsapi must be on or off, not ${typeof v === 'string' ? v : JSON.stringify(v)}`);
  return v === 'on';
}

function connectors() {
  return buildConnectors({
    publicUrl: () => '',
    sandboxState: async () => undefined,
    timeoutMs: Number(process.env.PROVIDER_TIMEOUT_MS) || 10_000,
  });
}

const SET_OPTIONS = {
  ...DATABASE_OPTION,
  'wallet-id': { type: 'string' },
  method: { type: 'string' },
  provider: { type: 'string' },
  'app-id': { type: 'string' },
  'private-key-file': { type: 'string' },
  'alipay-public-key-file': { type: 'string' },
  'app-cert-file': { type: 'string' },
  'alipay-cert-file': { type: 'string' },
  'alipay-root-cert-file': { type: 'string' },
  mchid: { type: 'string' },
  appid: { type: 'string' },
  'serial-no': { type: 'string' },
  'apiv3-key-file': { type: 'string' },
  'platform-public-key-file': { type: 'string' },
  'platform-public-key-id': { type: 'string' },
  'platform-certificate-file': { type: 'string' },
  mcc: { type: 'string' },
  jsapi: { type: 'string' },
  'appsecret-file': { type: 'string' },
  endpoint: { type: 'string' },
  'oauth-endpoint': { type: 'string' },
  'currency-mode': { type: 'string' },
  'public-url': { type: 'string' },
  json: { type: 'boolean' },
} as const;

async function set(store: Store, values: Record<string, unknown>): Promise<Record<string, string>> {
  const wallet_id = required(values, 'wallet-id');
  const payment_method = methodOf(values);
  const provider = required(values, 'provider');
  const mode = (values['currency-mode'] as string | undefined) ?? 'domestic';
  if (!(CURRENCY_MODES as readonly string[]).includes(mode))
    throw new UsageError(`--currency-mode must be domestic or cross-border, not ${mode}`);
  const wallet = await store.accounts.findWallet(wallet_id);
  if (!wallet) throw new UsageError(`no wallet ${wallet_id}`);
  if (provider !== 'alipay' && provider !== 'wechatpay')
    throw new UsageError(`--provider must be alipay or wechatpay, not ${provider}`);
  const str = (name: string) => (typeof values[name] === 'string' ? values[name] : undefined);
  // Each flag read (and its file) as the flag's own message says; the account is then made as the console makes it.
  const fields: AccountFields =
    provider === 'alipay'
      ? {
          app_id: required(values, 'app-id'),
          ...alipayKeys(values),
          private_key: pem(values, 'private-key-file', 'private'),
        }
      : {
          mchid: required(values, 'mchid'),
          appid: required(values, 'appid'),
          serial_no: required(values, 'serial-no'),
          platform_public_key: pem(values, 'platform-public-key-file', 'public'),
          platform_public_key_id: required(values, 'platform-public-key-id'),
          ...(typeof values['platform-certificate-file'] === 'string' && {
            platform_certificate: readFile(values, 'platform-certificate-file'),
          }),
          mcc: str('mcc'),
          jsapi: jsapiOf(values),
          oauth_endpoint: str('oauth-endpoint'),
          private_key: pem(values, 'private-key-file', 'private'),
          apiv3_key: readFile(values, 'apiv3-key-file').trim(),
          ...(typeof values['appsecret-file'] === 'string' && { appsecret: readFile(values, 'appsecret-file').trim() }),
        };
  let account: ChannelAccount;
  try {
    account = accountFromFields(wallet, payment_method, provider, {
      ...fields,
      currency_mode: mode,
      endpoint: str('endpoint'),
    });
  } catch (e) {
    if (e instanceof AccountInputError) throw new UsageError(`${e.field}: ${e.message}`);
    throw e;
  }
  const built = connectors();
  try {
    const result = await setChannelAccount(store.accounts, built.connectors, requireMasterKey(), account, Date.now());
    if (!result.ok) throw new UsageError(`the ${provider} account is not usable: ${result.problems.join('; ')}`);
    const publicUrl = (values['public-url'] as string | undefined) ?? process.env.PUBLIC_URL;
    return {
      ...describeAccount(account),
      replaced: result.replaced ? 'yes' : 'no',
      notify_url: publicUrl ? notifyAddress(publicUrl, provider) : `{PUBLIC_URL}/channels/${provider}/notify`,
      ...(!walletAccepts(wallet, payment_method) && {
        warning: `wallet ${wallet_id} does not accept ${payment_method} (gateway wallet update --methods ...)`,
      }),
    };
  } finally {
    await built.close();
  }
}

function print(values: Record<string, unknown>, data: unknown): void {
  if (values.json) console.log(JSON.stringify(data, null, 2));
  else for (const [k, v] of Object.entries(data as Record<string, string>)) console.log(`${k.padEnd(24)} ${v}`);
}

/** Runs `gateway channel <sub>`; returns the exit code. */
export async function channelCommand(
  sub: string | undefined,
  rest: string[],
  withStore: <T>(v: Record<string, unknown>, fn: (s: Store) => Promise<T>) => Promise<T>,
): Promise<number> {
  switch (sub) {
    case 'set': {
      const v = parse(rest, SET_OPTIONS);
      const shown = await withStore(v, async (store) => {
        const out = await set(store, v);
        // Fingerprints and public ids only: describeAccount never shows a secret.
        await auditCli(store, {
          action: 'cli.channel.set',
          object: `${out.wallet_id} ${out.payment_method}`,
          after: JSON.stringify(out),
        });
        return out;
      });
      print(v, shown);
      // Sent with every payment (notify_url), so there is nothing to register; it must reach this gateway.
      if (!v.json)
        console.log(
          `\n${shown.provider === 'alipay' ? 'Alipay' : 'WeChat Pay'} notifies this address (sent with every payment; it must reach this gateway over HTTPS): ${shown.notify_url}`,
        );
      return 0;
    }
    case 'list': {
      const v = parse(rest, { ...DATABASE_OPTION, 'wallet-id': { type: 'string' }, json: { type: 'boolean' } });
      const master = masterKeyFromEnv();
      const stored = await withStore(v, (store) =>
        store.accounts.listChannelAccounts(typeof v['wallet-id'] === 'string' ? { wallet_id: v['wallet-id'] } : {}),
      );
      const rows = stored.map((s) =>
        master
          ? describeAccount(openAccount(master, s))
          : {
              wallet_id: s.wallet_id,
              payment_method: s.payment_method,
              provider: s.provider,
              ...(JSON.parse(s.config) as Record<string, string>),
              secrets: 'sealed (set GATEWAY_MASTER_KEY to see their fingerprints)',
            },
      );
      if (v.json) console.log(JSON.stringify(rows, null, 2));
      else if (rows.length === 0) console.log('no channel accounts');
      else
        for (const r of rows) {
          for (const [k, val] of Object.entries(r))
            console.log(`${k.padEnd(24)} ${/PUBLIC KEY/.test(val) ? '(a public key)' : val}`);
          console.log('');
        }
      return 0;
    }
    case 'remove': {
      const v = parse(rest, { ...DATABASE_OPTION, 'wallet-id': { type: 'string' }, method: { type: 'string' } });
      const wallet_id = required(v, 'wallet-id');
      const method = methodOf(v);
      const removed = await withStore(v, async (store) => {
        const gone = await store.accounts.removeChannelAccount(wallet_id, method);
        if (gone) await auditCli(store, { action: 'cli.channel.remove', object: `${wallet_id} ${method}` });
        return gone;
      });
      if (!removed) throw new UsageError(`wallet ${wallet_id} has no channel account for ${method}`);
      console.log(`channel account of wallet ${wallet_id} for ${method} removed`);
      return 0;
    }
    case 'test': {
      const v = parse(rest, { ...DATABASE_OPTION, 'wallet-id': { type: 'string' }, method: { type: 'string' } });
      const wallet_id = required(v, 'wallet-id');
      const method = methodOf(v);
      const master = requireMasterKey();
      const stored = await withStore(v, (store) => store.accounts.findChannelAccount(wallet_id, method));
      if (!stored) throw new UsageError(`wallet ${wallet_id} has no channel account for ${method}`);
      const account = openAccount(master, stored);
      const built = connectors();
      try {
        const outcome = await built.connectors[account.provider].probe(account);
        for (const c of expiringCertificates([account], Date.now())) console.error(`warning: ${certificateWarning(c)}`);
        if (outcome.ok) {
          console.log(`ok: ${account.provider} for wallet ${wallet_id} (${method}): ${outcome.detail}`);
          return 0;
        }
        console.error(`failed: ${account.provider} for wallet ${wallet_id} (${method}): ${outcome.reason}`);
        return 1;
      } finally {
        await built.close();
      }
    }
    default:
      throw new UsageError(USAGE);
  }
}
