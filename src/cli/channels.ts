import { readFileSync } from 'node:fs';
import { buildConnectors, PROVIDER_DESCRIPTORS } from '../connectors/registry.js';
import { walletAccepts } from '../domain/account.js';
import { notifyAddress } from '../domain/channel.js';
import { parseMasterKey, type MasterKey } from '../domain/sealed.js';
import { isPaymentMethod, type PaymentMethod } from '../domain/transaction.js';
import type { ChannelAccount } from '../ports/connector.js';
import type { Store } from '../ports/store.js';
import { AccountInputError, type AccountField, type AccountInput, type ProviderDescriptor } from '../ports/provider.js';
import {
  accountFromInput,
  certificateWarning,
  describeAccount,
  expiringCertificates,
  openAccount,
  storeChannelAccount,
} from '../usecases/channel-accounts.js';
import { auditCli } from './console-users.js';
import { UsageError, positiveEnv, required } from './args.js';
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

function readFile(values: Record<string, unknown>, name: string, binary = false): string {
  const path = required(values, name);
  try {
    return binary ? readFileSync(path).toString('base64') : readFileSync(path, 'utf8');
  } catch (e) {
    throw new UsageError(
      `--${name} ${path}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`,
    );
  }
}

function methodOf(values: Record<string, unknown>): PaymentMethod {
  const m = required(values, 'method');
  if (!isPaymentMethod(m))
    throw new UsageError(
      `--method must be one of wechat, alipay, moneymore, polipay, payid, upi_upop, coin_payments, not ${m}`,
    );
  return m;
}

function connectors() {
  return buildConnectors({
    publicUrl: () => '',
    sandboxState: async () => undefined,
    timeoutMs: positiveEnv('PROVIDER_TIMEOUT_MS') ?? 10_000,
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
/**
 * `channel set`'s flags: the shared ones, then each provider's account fields (its descriptor). A
 * flag several providers use (the private key, the endpoint) is listed once, with each one's help.
 */
export function channelSetFlags(providers: readonly ProviderDescriptor[]): Flag[] {
  const flags: Flag[] = [
    WALLET_FLAG,
    METHOD_FLAG,
    {
      name: 'provider',
      type: 'string',
      value: providers.map((p) => p.name).join('|'),
      help: 'the payment provider',
      required: true,
    },
    { ...PUBLIC_URL_FLAG, help: "the gateway's public base URL, for the notification address it prints" },
    DATABASE_FLAG,
    JSON_FLAG,
  ];
  const users = new Map<string, Array<{ provider: ProviderDescriptor; field: AccountField }>>();
  for (const provider of providers)
    for (const field of provider.fields)
      users.set(field.cli.flag, [...(users.get(field.cli.flag) ?? []), { provider, field }]);
  for (const [flag, uses] of users) {
    const first = uses[0].field;
    const shared = uses.length > 1;
    flags.push({
      name: flag,
      type: 'string',
      value: first.cli.value,
      help: shared
        ? sameHelp(uses)
          ? first.help.en
          : uses.map((u) => `${u.provider.label.en}: ${u.field.help.en}`).join('; ')
        : first.help.en,
      ...(!shared && { group: `${uses[0].provider.label.en}, --provider ${uses[0].provider.name}` }),
      ...(first.kind === 'choice' && first.choices?.[0] !== undefined && { default: first.choices[0] }),
    });
  }
  return flags;
}

function sameHelp(uses: ReadonlyArray<{ field: AccountField }>): boolean {
  return uses.every((u) => u.field.help.en === uses[0].field.help.en);
}

/** The account's fields from the flags of its provider: files read (a `binary` one as base64), values as given. */
function inputFrom(
  descriptor: ProviderDescriptor,
  values: Values,
  providers: readonly ProviderDescriptor[],
): AccountInput {
  const own = new Set(descriptor.fields.map((f) => f.cli.flag));
  for (const other of providers)
    for (const f of other.fields)
      if (!own.has(f.cli.flag) && values[f.cli.flag] !== undefined)
        throw new UsageError(
          `--${f.cli.flag} is a ${other.label.en} flag, not one of a ${descriptor.label.en} account`,
        );
  const input: Record<string, string> = {};
  for (const f of descriptor.fields) {
    const v = values[f.cli.flag];
    if (typeof v !== 'string') continue;
    input[f.id] = f.cli.file ? readFile(values, f.cli.flag, f.kind === 'binary') : v;
  }
  return input;
}

/** A refusal of the account, its fields named by their flags. */
function flagged(descriptor: ProviderDescriptor, e: AccountInputError): UsageError {
  const flagOf = new Map(descriptor.fields.map((f) => [f.id, `--${f.cli.flag}`]));
  const message = e.message.replace(/\b[a-z][a-z0-9_]*\b/g, (w) => flagOf.get(w) ?? w);
  const subject = flagOf.get(e.field) ?? (e.field === 'payment_method' ? '--method' : e.field);
  return new UsageError(`${subject}${/^(is|are|must)\b/.test(message) ? ' ' : ': '}${message}`);
}

async function set(
  store: Store,
  values: Values,
  providers: readonly ProviderDescriptor[],
): Promise<Record<string, string>> {
  const wallet_id = required(values, 'wallet-id');
  const payment_method = methodOf(values);
  const provider = required(values, 'provider');
  const descriptor = providers.find((p) => p.name === provider);
  if (!descriptor)
    throw new UsageError(`--provider must be one of ${providers.map((p) => p.name).join(', ')}, not ${provider}`);
  const given = inputFrom(descriptor, values, providers);
  const wallet = await store.accounts.findWallet(wallet_id);
  if (!wallet) throw new UsageError(`no wallet ${wallet_id}`);
  const master = requireMasterKey();
  // One key opens every account: one sealed under another would stop the gateway from starting,
  // and its provider's notifications from being read. (The account being replaced is not asked:
  // after a lost key each is removed or set again under the new one.)
  for (const other of await store.accounts.listChannelAccounts()) {
    if (other.wallet_id === wallet_id && other.payment_method === payment_method) continue;
    try {
      openAccount(master, other);
    } catch (e) {
      throw new UsageError(
        `the master key given does not open the accounts stored already (${(e as Error).message}): give the key the gateway runs with (GATEWAY_MASTER_KEY or GATEWAY_MASTER_KEY_FILE), or, if that key is lost, remove those accounts first (gateway channel remove)`,
      );
    }
  }
  // The flags given change; the rest of the wallet's account with this provider is kept.
  const stored = await store.accounts.findChannelAccount(wallet_id, payment_method);
  let account: ChannelAccount;
  try {
    account = accountFromInput(descriptor, wallet, payment_method, given, stored && openAccount(master, stored));
  } catch (e) {
    if (e instanceof AccountInputError) throw flagged(descriptor, e);
    throw e;
  }
  const result = await storeChannelAccount(store.accounts, descriptor, master, account, Date.now());
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
}

function printRecord(values: Values, data: Readonly<Record<string, string>>): void {
  if (values.json) console.log(JSON.stringify(data, null, 2));
  else for (const [k, v] of Object.entries(data)) console.log(`${k.padEnd(24)} ${v}`);
}

/** `gateway channel set`, its flags made from the providers' descriptors (the registry's, or a test's). */
export function channelSetCommand(providers: readonly ProviderDescriptor[]): Command {
  return {
    name: 'channel set',
    summary: "a wallet's account with a payment provider, for one method (secrets sealed with the master key)",
    description:
      "The flags given change the wallet's account with that provider; the others keep what is stored (a secret\nis replaced only by a new one). The account is checked before it is stored (its keys parse, its ids\nhave their form); run `gateway channel test` to prove it with a signed call. Prints the address the\nprovider notifies, which must reach this gateway over HTTPS. Needs GATEWAY_MASTER_KEY (or _FILE).",
    flags: channelSetFlags(providers),
    environment: [
      { name: 'GATEWAY_MASTER_KEY', help: "the key that seals the account's secrets" },
      { name: 'GATEWAY_MASTER_KEY_FILE', help: 'a file holding it' },
    ],
    examples: providers.map(exampleOf),
    async run(v) {
      const shown = await withStore(v, async (store) => {
        const out = await set(store, v, providers);
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
      const label = providers.find((p) => p.name === shown.provider)?.label.en ?? shown.provider;
      if (!v.json)
        console.log(
          `\n${label} notifies this address (sent with every payment; it must reach this gateway over HTTPS): ${shown.notify_url}`,
        );
      return 0;
    },
  };
}

/** A provider's first account: its required fields, and the first of its alternatives. */
function exampleOf(p: ProviderDescriptor): string {
  const firstAlternative = p.fields.find((f) => f.alternative)?.alternative;
  const shown = p.fields.filter((f) => (f.alternative ? f.alternative === firstAlternative : f.required));
  const method = p.methods[0] ?? '';
  return [
    `gateway channel set --wallet-id W00000001 --method ${method} --provider ${p.name}`,
    ...shown.map((f) => `--${f.cli.flag} ${f.cli.value}`),
  ].join(' ');
}

export const channelSet = channelSetCommand(PROVIDER_DESCRIPTORS);

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
  environment: [
    { name: 'GATEWAY_MASTER_KEY', help: 'opens the account (or GATEWAY_MASTER_KEY_FILE)' },
    { name: 'PROVIDER_TIMEOUT_MS', help: "how long the provider's answer is waited for", default: '10000' },
  ],
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
