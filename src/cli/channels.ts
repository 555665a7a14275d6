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
import { UsageError, required } from './args.js';
import type { Command, Flag, Values } from './command.js';
import { DATABASE_FLAG, JSON_FLAG, PUBLIC_URL_FLAG, withStore } from './shared.js';

// gateway channel set | list | remove | test: a wallet's accounts with the payment providers.
// The flag names are the operator guide's (docs/providers/); keep them.

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

const WALLET_FLAG: Flag = { name: 'wallet-id', type: 'string', value: 'ID', help: 'the wallet', required: true };
const METHOD_FLAG: Flag = {
  name: 'method',
  type: 'string',
  value: 'METHOD',
  help: 'the payment method the account serves (alipay, wechat, ...)',
  required: true,
};
const ALIPAY = 'Alipay, --provider alipay';
const WECHAT = 'WeChat Pay, --provider wechatpay';

/** `channel set`'s flags: the shared ones, then each provider's. */
const SET_FLAGS: readonly Flag[] = [
  WALLET_FLAG,
  METHOD_FLAG,
  { name: 'provider', type: 'string', value: 'alipay|wechatpay', help: 'the payment provider', required: true },
  {
    name: 'private-key-file',
    type: 'string',
    value: 'PEM',
    help: "the app's private key (Alipay), or the merchant API private key (WeChat Pay)",
  },
  {
    name: 'currency-mode',
    type: 'string',
    value: 'domestic|cross-border',
    help: "domestic charges CNY at the rate set with `gateway rates set`; cross-border charges the wallet's currency",
    default: 'domestic',
  },
  { name: 'endpoint', type: 'string', value: 'URL', help: "the provider's API address (its sandbox, say)" },
  { ...PUBLIC_URL_FLAG, help: "the gateway's public base URL, for the notification address it prints" },
  DATABASE_FLAG,
  JSON_FLAG,
  { name: 'app-id', type: 'string', value: 'ID', help: "the app's APPID", group: ALIPAY },
  {
    name: 'alipay-public-key-file',
    type: 'string',
    value: 'PEM',
    help: "public-key mode: Alipay's public key",
    group: ALIPAY,
  },
  {
    name: 'app-cert-file',
    type: 'string',
    value: 'CRT',
    help: "certificate mode: the app's public key certificate",
    group: ALIPAY,
  },
  {
    name: 'alipay-cert-file',
    type: 'string',
    value: 'CRT',
    help: "certificate mode: Alipay's public key certificate",
    group: ALIPAY,
  },
  {
    name: 'alipay-root-cert-file',
    type: 'string',
    value: 'CRT',
    help: "certificate mode: Alipay's root certificate",
    group: ALIPAY,
  },
  { name: 'mchid', type: 'string', value: 'ID', help: 'the merchant id', group: WECHAT },
  { name: 'appid', type: 'string', value: 'ID', help: 'the AppID bound to the merchant id', group: WECHAT },
  {
    name: 'serial-no',
    type: 'string',
    value: 'SERIAL',
    help: "the merchant API certificate's serial number",
    group: WECHAT,
  },
  {
    name: 'apiv3-key-file',
    type: 'string',
    value: 'FILE',
    help: 'a file holding the APIv3 key (32 characters)',
    group: WECHAT,
  },
  { name: 'platform-public-key-file', type: 'string', value: 'PEM', help: "WeChat Pay's public key", group: WECHAT },
  { name: 'platform-public-key-id', type: 'string', value: 'ID', help: 'its id (PUB_KEY_ID_...)', group: WECHAT },
  {
    name: 'platform-certificate-file',
    type: 'string',
    value: 'PEM',
    help: 'a platform certificate verified beside the key',
    group: WECHAT,
  },
  { name: 'mcc', type: 'string', value: 'CODE', help: 'cross-border: the merchant category code', group: WECHAT },
  {
    name: 'jsapi',
    type: 'string',
    value: 'on|off',
    help: 'JSAPI payments inside WeChat',
    default: 'off',
    group: WECHAT,
  },
  {
    name: 'appsecret-file',
    type: 'string',
    value: 'FILE',
    help: "JSAPI: the official account's AppSecret",
    group: WECHAT,
  },
  {
    name: 'oauth-endpoint',
    type: 'string',
    value: 'URL',
    help: "JSAPI: WeChat's OAuth address (its sandbox, say)",
    group: WECHAT,
  },
];

async function set(store: Store, values: Values): Promise<Record<string, string>> {
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
    const publicUrl = values['public-url'] as string | undefined;
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

function printRecord(values: Values, data: Readonly<Record<string, string>>): void {
  if (values.json) console.log(JSON.stringify(data, null, 2));
  else for (const [k, v] of Object.entries(data)) console.log(`${k.padEnd(24)} ${v}`);
}

export const channelSet: Command = {
  name: 'channel set',
  summary: "a wallet's account with a payment provider, for one method (secrets sealed with the master key)",
  description:
    'The account is checked before it is stored (its keys parse, its ids have their form); run `gateway channel\ntest` to prove it with a signed call. Prints the address the provider notifies, which is sent with\nevery payment and must reach this gateway over HTTPS. Needs GATEWAY_MASTER_KEY or GATEWAY_MASTER_KEY_FILE.',
  flags: SET_FLAGS,
  environment: [
    { name: 'GATEWAY_MASTER_KEY', help: "the key that seals the account's secrets" },
    { name: 'GATEWAY_MASTER_KEY_FILE', help: 'a file holding it' },
  ],
  examples: [
    'gateway channel set --wallet-id W00000001 --method alipay --provider alipay --app-id 2021000000000000 --private-key-file app-private.pem --alipay-public-key-file alipay-public.pem',
    'gateway channel set --wallet-id W00000001 --method wechat --provider wechatpay --mchid 1900000001 --appid wx0000000000000001 --serial-no 5157F09EFDC096DE15EBE81A47057A7232F1B8E1 --private-key-file apiclient_key.pem --apiv3-key-file apiv3.key --platform-public-key-file pub_key.pem --platform-public-key-id PUB_KEY_ID_0000000000000000000000000000',
  ],
  async run(v) {
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
    printRecord(v, shown);
    // Sent with every payment (notify_url), so there is nothing to register; it must reach this gateway.
    if (!v.json)
      console.log(
        `\n${shown.provider === 'alipay' ? 'Alipay' : 'WeChat Pay'} notifies this address (sent with every payment; it must reach this gateway over HTTPS): ${shown.notify_url}`,
      );
    return 0;
  },
};

export const channelList: Command = {
  name: 'channel list',
  summary: "the wallets' provider accounts: public ids, and the secrets' fingerprints (never the secrets)",
  flags: [{ name: 'wallet-id', type: 'string', value: 'ID', help: 'only this wallet' }, DATABASE_FLAG, JSON_FLAG],
  environment: [
    { name: 'GATEWAY_MASTER_KEY', help: "with it (or GATEWAY_MASTER_KEY_FILE), the secrets' fingerprints" },
  ],
  examples: ['gateway channel list --wallet-id W00000001'],
  async run(v) {
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
  },
};

export const channelRemove: Command = {
  name: 'channel remove',
  summary: "remove a wallet's provider account for a method (its orders keep their provider's records)",
  flags: [WALLET_FLAG, METHOD_FLAG, DATABASE_FLAG],
  examples: ['gateway channel remove --wallet-id W00000001 --method alipay'],
  async run(v) {
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
  },
};

export const channelTest: Command = {
  name: 'channel test',
  summary: 'a signed call to the provider that proves the credentials and the endpoint',
  description: 'Exits 0 when the provider took the signed call, 1 when it did not (with its reason).',
  flags: [WALLET_FLAG, METHOD_FLAG, DATABASE_FLAG],
  environment: [{ name: 'GATEWAY_MASTER_KEY', help: 'opens the account (or GATEWAY_MASTER_KEY_FILE)' }],
  examples: ['gateway channel test --wallet-id W00000001 --method wechat'],
  async run(v) {
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
  },
};
