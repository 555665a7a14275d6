import {
  createMerchant,
  createWallet,
  onOff,
  rotateKey,
  setRate,
  setUserStatus,
  setWalletStatus,
  updateWallet,
} from './admin.js';
import { UsageError, required } from './args.js';
import type { Command, Flag, Values } from './command.js';
import { auditCli } from './console-users.js';
import { DATABASE_FLAG, JSON_FLAG, print, withStore } from './shared.js';

// The merchant's records from the command line: merchants, wallets, keys, users, rates, and the
// schema. Each change is written to the audit log, as the console's are.

const LEGACY_FLAG: Flag = {
  name: 'legacy-signatures',
  type: 'string',
  value: 'on|off',
  help: "accept the original service's legacy create signature (user_id+wallet_id+amount+payment_method+return_url+callback_url)",
  default: 'on',
};

function legacyOption(values: Values): 0 | 1 | undefined {
  const v = values['legacy-signatures'];
  return typeof v === 'string' ? onOff('--legacy-signatures', v) : undefined;
}

const str = (v: Values, name: string) => (typeof v[name] === 'string' ? v[name] : undefined);

export const migrate: Command = {
  name: 'migrate',
  summary: 'bring the database schema up to date',
  description:
    'Applies the migrations the database lacks, then exits. `gateway serve` does the same at start; run this\nfirst when several instances share a PostgreSQL database, so that they start on the new schema.',
  flags: [DATABASE_FLAG],
  examples: ['gateway migrate --database postgres://gateway@db/gateway'],
  async run(v) {
    await withStore(v, async () => {});
    console.log('database schema is up to date');
    return 0;
  },
};

export const merchantCreate: Command = {
  name: 'merchant create',
  summary: 'an organisation with its API user and first wallet; prints the api_key',
  description:
    'Ids and the key are made unless given (--user-id, --wallet-id and --api-key import a merchant of the\noriginal service with its credentials unchanged).',
  flags: [
    { name: 'name', type: 'string', value: 'NAME', help: "the organisation's name", required: true },
    {
      name: 'currency',
      type: 'string',
      value: 'CODE',
      help: "the first wallet's currency (NZD, AUD, ...)",
      required: true,
    },
    { name: 'user-id', type: 'string', value: 'ID', help: "the API user's id (imported)" },
    { name: 'wallet-id', type: 'string', value: 'ID', help: "the wallet's id (imported)" },
    { name: 'api-key', type: 'string', value: 'KEY', help: "the wallet's API key (imported)" },
    LEGACY_FLAG,
    DATABASE_FLAG,
    JSON_FLAG,
  ],
  examples: ['gateway merchant create --name "Otago Wines" --currency NZD'],
  async run(v) {
    const legacy = legacyOption(v);
    const m = await withStore(v, async (store) => {
      const made = await createMerchant(store, {
        name: required(v, 'name'),
        currency: required(v, 'currency'),
        user_id: str(v, 'user-id'),
        wallet_id: str(v, 'wallet-id'),
        api_key: str(v, 'api-key'),
        ...(legacy !== undefined && { legacy_signatures: legacy }),
      });
      const { api_key: _key, ...shown } = made;
      await auditCli(store, {
        action: 'cli.merchant.create',
        object: made.user_id,
        organisation_id: made.organisation_id,
        after: JSON.stringify(shown),
      });
      return made;
    });
    print(v, { ...m });
    return 0;
  },
};

const METHODS_HELP =
  'the payment methods it accepts, comma-separated (wechat, alipay, moneymore, polipay, payid, upi_upop, coin_payments)';

export const walletCreate: Command = {
  name: 'wallet create',
  summary: "another wallet (currency) of a merchant's user; prints its api_key",
  flags: [
    { name: 'user-id', type: 'string', value: 'ID', help: 'the API user it belongs to', required: true },
    { name: 'currency', type: 'string', value: 'CODE', help: "the wallet's currency", required: true },
    { name: 'name', type: 'string', value: 'NAME', help: "the wallet's name" },
    { name: 'wallet-id', type: 'string', value: 'ID', help: "the wallet's id (imported)" },
    { name: 'api-key', type: 'string', value: 'KEY', help: "the wallet's API key (imported)" },
    { name: 'methods', type: 'string', value: 'a,b', help: METHODS_HELP, default: 'all' },
    LEGACY_FLAG,
    DATABASE_FLAG,
    JSON_FLAG,
  ],
  examples: ['gateway wallet create --user-id U000334333 --currency AUD --methods alipay,wechat'],
  async run(v) {
    const legacy = legacyOption(v);
    const w = await withStore(v, async (store) => {
      const made = await createWallet(store, {
        user_id: required(v, 'user-id'),
        currency: required(v, 'currency'),
        name: str(v, 'name'),
        wallet_id: str(v, 'wallet-id'),
        api_key: str(v, 'api-key'),
        methods: str(v, 'methods'),
        ...(legacy !== undefined && { legacy_signatures: legacy }),
      });
      const { api_key: _key, ...shown } = made;
      await auditCli(store, { action: 'cli.wallet.create', object: made.wallet_id, after: JSON.stringify(shown) });
      return made;
    });
    print(v, w);
    return 0;
  },
};

export const walletUpdate: Command = {
  name: 'wallet update',
  summary: "a wallet's name, methods or legacy signatures; the flags given change, the rest stay",
  flags: [
    { name: 'wallet-id', type: 'string', value: 'ID', help: 'the wallet', required: true },
    { name: 'name', type: 'string', value: 'NAME', help: "the wallet's name" },
    { name: 'methods', type: 'string', value: 'a,b', help: METHODS_HELP },
    { ...LEGACY_FLAG, default: undefined },
    DATABASE_FLAG,
    JSON_FLAG,
  ],
  examples: ['gateway wallet update --wallet-id W00000001 --legacy-signatures off'],
  async run(v) {
    const wallet_id = required(v, 'wallet-id');
    const legacy = legacyOption(v);
    const name = str(v, 'name');
    const methods = str(v, 'methods');
    const changes = {
      ...(name !== undefined && { name }),
      ...(methods !== undefined && { methods }),
      ...(legacy !== undefined && { legacy_signatures: legacy }),
    };
    if (Object.keys(changes).length === 0)
      throw new UsageError('wallet update: nothing to change; give --name, --methods or --legacy-signatures');
    const updated = await withStore(v, async (store) => {
      const before = await store.accounts.findWallet(wallet_id);
      const after = await updateWallet(store, wallet_id, changes);
      await auditCli(store, {
        action: 'cli.wallet.update',
        object: wallet_id,
        before: before
          ? JSON.stringify({
              wallet_name: before.wallet_name,
              payment_methods: before.payment_methods,
              legacy_signatures: before.legacy_signatures === 1 ? 'on' : 'off',
            })
          : null,
        after: JSON.stringify(after),
      });
      return after;
    });
    print(v, { ...updated });
    return 0;
  },
};

function walletStatus(sub: 'disable' | 'enable'): Command {
  return {
    name: `wallet ${sub}`,
    summary:
      sub === 'disable'
        ? 'a disabled wallet takes no new orders (301); its orders stay queryable and refundable'
        : 'a disabled wallet takes orders again',
    flags: [{ name: 'wallet-id', type: 'string', value: 'ID', help: 'the wallet', required: true }, DATABASE_FLAG],
    examples: [`gateway wallet ${sub} --wallet-id W00000001`],
    async run(v) {
      const wallet_id = required(v, 'wallet-id');
      const status = sub === 'disable' ? 'disabled' : 'active';
      await withStore(v, async (store) => {
        await setWalletStatus(store, wallet_id, status);
        await auditCli(store, {
          action: `cli.wallet.${sub}`,
          object: wallet_id,
          after: JSON.stringify({ wallet_status: status }),
        });
      });
      console.log(`wallet ${wallet_id} ${sub}d`);
      return 0;
    },
  };
}

export const walletDisable = walletStatus('disable');
export const walletEnable = walletStatus('enable');

export const keyRotate: Command = {
  name: 'key rotate',
  summary: 'a new API key for a wallet; the old one keeps verifying requests for a while',
  flags: [
    { name: 'wallet-id', type: 'string', value: 'ID', help: 'the wallet', required: true },
    {
      name: 'overlap-hours',
      type: 'string',
      value: 'H',
      help: 'hours the previous key keeps verifying requests (0 when it was exposed)',
      default: '24',
    },
    DATABASE_FLAG,
    JSON_FLAG,
  ],
  examples: ['gateway key rotate --wallet-id W00000001', 'gateway key rotate --wallet-id W00000001 --overlap-hours 0'],
  async run(v) {
    const wallet_id = required(v, 'wallet-id');
    const hoursText = str(v, 'overlap-hours') ?? '24';
    if (!/^\d{1,4}$/.test(hoursText)) throw new UsageError('--overlap-hours must be a whole number of hours');
    const rotated = await withStore(v, async (store) => {
      const r = await rotateKey(store, wallet_id, Number(hoursText));
      await auditCli(store, {
        action: 'cli.key.rotate',
        object: wallet_id,
        after: JSON.stringify({ previous_key_expires_at: r.previous_key_expires_at }),
      });
      return r;
    });
    print(v, {
      wallet_id,
      api_key: rotated.api_key,
      previous_key_valid_until:
        rotated.previous_key_expires_at === null ? 'now' : new Date(rotated.previous_key_expires_at).toISOString(),
    });
    return 0;
  },
};

function userStatus(sub: 'disable' | 'enable'): Command {
  return {
    name: `user ${sub}`,
    summary:
      sub === 'disable'
        ? "an API user's requests are refused (205) until enabled"
        : 'a disabled API user may call again',
    flags: [{ name: 'user-id', type: 'string', value: 'ID', help: 'the API user', required: true }, DATABASE_FLAG],
    examples: [`gateway user ${sub} --user-id U000334333`],
    async run(v) {
      const user_id = required(v, 'user-id');
      await withStore(v, async (store) => {
        await setUserStatus(store, user_id, sub === 'disable' ? 'disabled' : 'active');
        await auditCli(store, { action: `cli.user.${sub}`, object: user_id });
      });
      console.log(`user ${user_id} ${sub}d`);
      return 0;
    },
  };
}

export const userDisable = userStatus('disable');
export const userEnable = userStatus('enable');

export const ratesSet: Command = {
  name: 'rates set',
  summary: "the exchange rate a domestic account charges CNY at (a wallet's currency to CNY)",
  flags: [
    { name: 'from', type: 'string', value: 'CODE', help: "the wallet's currency", required: true },
    { name: 'to', type: 'string', value: 'CODE', help: 'the currency charged', required: true },
    {
      name: 'rate',
      type: 'string',
      value: 'N',
      help: 'units of --to for one unit of --from (up to 6 decimals)',
      required: true,
    },
    {
      name: 'confirm',
      type: 'boolean',
      help: 'set it even when it is more than 10 % from the last rate',
    },
    DATABASE_FLAG,
  ],
  examples: [
    'gateway rates set --from NZD --to CNY --rate 4.6443',
    'gateway rates set --from NZD --to CNY --rate 5.2 --confirm',
  ],
  async run(v) {
    const from = required(v, 'from').toUpperCase();
    const to = required(v, 'to').toUpperCase();
    const rate = required(v, 'rate');
    const set = await withStore(v, async (store) => {
      const done = await setRate(store, from, to, rate, { confirmed: v.confirm === true });
      if (done.kind === 'set')
        await auditCli(store, {
          action: 'cli.rates.set',
          object: `${from}/${to}`,
          before: done.before === undefined ? null : JSON.stringify({ rate_micros: done.before }),
          after: JSON.stringify({ rate_micros: done.micros }),
        });
      return done;
    });
    if (set.kind === 'confirm') {
      console.error(
        `gateway: ${rate} is ${(set.change * 100).toFixed(1)} % from the last ${from} -> ${to} rate (${(set.before / 1_000_000).toFixed(6).replace(/0+$/, '').replace(/\.$/, '')}); nothing set: run again with --confirm to set it`,
      );
      return 1;
    }
    console.log(`rate ${from} -> ${to} set to ${rate}`);
    return 0;
  },
};
