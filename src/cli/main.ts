import { openStore } from '../store/open.js';
import type { SqlStore } from '../store/sql-store.js';
import {
  AdminError,
  createMerchant,
  createWallet,
  onOff,
  rotateKey,
  setRate,
  setUserStatus,
  updateWallet,
} from './admin.js';
import { DATABASE_OPTION, UsageError, databaseOf, parse, required } from './args.js';
import { backupCommand } from './backup.js';
import { channelCommand } from './channels.js';
import { auditCli, consoleUserCommand } from './console-users.js';
import { formatOrderNotifications, listOrderNotifications, resendNotification } from './notifications.js';
import { serveCommand } from './serve.js';

const USAGE = `Usage: gateway <command> [options]

  serve                 start the gateway
      --port N            (PORT, default 8080)      --host H (HOST, default 0.0.0.0)
      --database D        SQLite file or postgres:// URL (DATABASE_URL, default ./data/gateway.db)
      --public-url URL    base URL for host_url and QR links (PUBLIC_URL, default http://localhost:PORT)
      --mode M            sandbox | live (GATEWAY_MODE, default sandbox)
      --demo              create (once) and print a demo merchant with a signed curl
      --notify-allow-cidrs LIST  callback addresses allowed despite the safety rules (NOTIFY_ALLOW_CIDRS)
      GATEWAY_MASTER_KEY (or GATEWAY_MASTER_KEY_FILE) opens the channel accounts' secrets
  migrate               bring the database schema up to date
  backup --to FILE [--json]
                        SQLite: an online, consistent copy of the database while the gateway
                        serves it (PostgreSQL: use pg_dump, see the README)
  merchant create --name NAME --currency NZD [--user-id ID --wallet-id ID --api-key KEY] [--legacy-signatures on|off] [--json]
  wallet create --user-id ID --currency AUD [--name NAME] [--wallet-id ID] [--api-key KEY] [--methods a,b]
                [--legacy-signatures on|off] [--json]
  wallet update --wallet-id ID [--name NAME] [--methods a,b] [--legacy-signatures on|off] [--json]
                        --legacy-signatures: accept the original service's legacy create signature
                        (user_id+wallet_id+amount+payment_method+return_url+callback_url; default on)
  wallet disable|enable --wallet-id ID
                        a disabled wallet takes no new orders (301); its orders stay queryable and refundable
  key rotate --wallet-id ID [--overlap-hours H] [--json]
                        a new API key; the old one keeps verifying requests for H hours
                        (default 24; 0 when it was exposed)
  user disable|enable --user-id ID
  rates set --from NZD --to CNY --rate 4.6443
  channel set --wallet-id W --method alipay --provider alipay --app-id ID --private-key-file PEM
              --alipay-public-key-file PEM [--endpoint URL] [--currency-mode domestic|cross-border]
  channel set --wallet-id W --method wechat --provider wechatpay --mchid ID --appid ID --serial-no SERIAL
              --private-key-file PEM --apiv3-key-file FILE --platform-public-key-file PEM
              --platform-public-key-id ID [--endpoint URL] [--currency-mode domestic|cross-border] [--mcc CODE]
              [--platform-certificate-file PEM]    a platform certificate verified beside the key
              [--jsapi on --appsecret-file FILE]   JSAPI inside WeChat (the official account's AppSecret)
                        a wallet's account with a payment provider (secrets sealed with GATEWAY_MASTER_KEY);
                        prints the address the provider notifies (sent with every payment)
  channel list [--wallet-id W] [--json]     channel remove --wallet-id W --method M
  channel test --wallet-id W --method M     a signed call that proves the credentials and the endpoint
  notifications list --merchant-reference REF --user-id ID [--json]
                        an order's result notifications and every delivery attempt
  notifications resend --order-id ID [--json]
                        deliver the order's latest notification again, now
  operator create --email EMAIL [--role admin|support] [--public-url URL] [--json]
                        a console operator (the first one is made here); prints a one-time link
                        to set the password (valid 72 h)
  merchant-user create --organisation-id N --email EMAIL [--role owner|staff] [--public-url URL] [--json]
                        a merchant's console user, the same way

Every command takes --database (or DATABASE_URL).`;

async function withStore<T>(values: Record<string, unknown>, fn: (store: SqlStore) => Promise<T>): Promise<T> {
  const store = await openStore(databaseOf(values));
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

function print(values: Record<string, unknown>, data: Record<string, unknown>): void {
  if (values.json) {
    console.log(JSON.stringify(data, null, 2));
    return;
  }
  for (const [k, v] of Object.entries(data)) console.log(`${k.padEnd(18)} ${String(v)}`);
}

function legacyOption(values: Record<string, unknown>): 0 | 1 | undefined {
  const v = values['legacy-signatures'];
  return typeof v === 'string' ? onOff('--legacy-signatures', v) : undefined;
}

/** Runs one CLI command; returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  const [cmd, sub, ...rest] = argv;
  try {
    switch (cmd) {
      case 'serve':
        return await serveCommand(argv.slice(1));
      case 'migrate': {
        const values = parse(argv.slice(1), DATABASE_OPTION);
        await withStore(values, async () => {});
        console.log('database schema is up to date');
        return 0;
      }
      case 'backup':
        return await backupCommand(argv.slice(1));
      case 'merchant': {
        if (sub !== 'create') throw new UsageError('usage: gateway merchant create --name NAME --currency NZD');
        const v = parse(rest, {
          ...DATABASE_OPTION,
          name: { type: 'string' },
          currency: { type: 'string' },
          'user-id': { type: 'string' },
          'wallet-id': { type: 'string' },
          'api-key': { type: 'string' },
          'legacy-signatures': { type: 'string' },
          json: { type: 'boolean' },
        });
        const legacy = legacyOption(v);
        const m = await withStore(v, async (store) => {
          const made = await createMerchant(store, {
            name: required(v, 'name'),
            currency: required(v, 'currency'),
            user_id: v['user-id'] as string | undefined,
            wallet_id: v['wallet-id'] as string | undefined,
            api_key: v['api-key'] as string | undefined,
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
      }
      case 'wallet': {
        if (sub === 'disable' || sub === 'enable') {
          const v = parse(rest, { ...DATABASE_OPTION, 'wallet-id': { type: 'string' } });
          const wallet_id = required(v, 'wallet-id');
          const status = sub === 'disable' ? 'disabled' : 'active';
          await withStore(v, async (store) => {
            if (!(await store.accounts.setWalletStatus(wallet_id, status)))
              throw new AdminError(`no wallet ${wallet_id}`);
            await auditCli(store, {
              action: `cli.wallet.${sub}`,
              object: wallet_id,
              after: JSON.stringify({ wallet_status: status }),
            });
          });
          console.log(`wallet ${wallet_id} ${sub}d`);
          return 0;
        }
        if (sub === 'update') {
          const v = parse(rest, {
            ...DATABASE_OPTION,
            'wallet-id': { type: 'string' },
            name: { type: 'string' },
            methods: { type: 'string' },
            'legacy-signatures': { type: 'string' },
            json: { type: 'boolean' },
          });
          const wallet_id = required(v, 'wallet-id');
          const legacy = legacyOption(v);
          const changes = {
            ...(typeof v.name === 'string' && { name: v.name }),
            ...(typeof v.methods === 'string' && { methods: v.methods }),
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
        }
        if (sub !== 'create')
          throw new UsageError(
            'usage: gateway wallet create --user-id ID --currency AUD | wallet update --wallet-id ID ...',
          );
        const v = parse(rest, {
          ...DATABASE_OPTION,
          'user-id': { type: 'string' },
          currency: { type: 'string' },
          name: { type: 'string' },
          'wallet-id': { type: 'string' },
          'api-key': { type: 'string' },
          methods: { type: 'string' },
          'legacy-signatures': { type: 'string' },
          json: { type: 'boolean' },
        });
        const legacy = legacyOption(v);
        const w = await withStore(v, async (store) => {
          const made = await createWallet(store, {
            user_id: required(v, 'user-id'),
            currency: required(v, 'currency'),
            name: v.name as string | undefined,
            wallet_id: v['wallet-id'] as string | undefined,
            api_key: v['api-key'] as string | undefined,
            methods: v.methods as string | undefined,
            ...(legacy !== undefined && { legacy_signatures: legacy }),
          });
          const { api_key: _key, ...shown } = made;
          await auditCli(store, { action: 'cli.wallet.create', object: made.wallet_id, after: JSON.stringify(shown) });
          return made;
        });
        print(v, w);
        return 0;
      }
      case 'key': {
        if (sub !== 'rotate') throw new UsageError('usage: gateway key rotate --wallet-id ID [--overlap-hours H]');
        const v = parse(rest, {
          ...DATABASE_OPTION,
          'wallet-id': { type: 'string' },
          'overlap-hours': { type: 'string' },
          json: { type: 'boolean' },
        });
        const wallet_id = required(v, 'wallet-id');
        const hoursText = (v['overlap-hours'] as string | undefined) ?? '24';
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
      }
      case 'user': {
        if (sub !== 'disable' && sub !== 'enable')
          throw new UsageError('usage: gateway user disable|enable --user-id ID');
        const v = parse(rest, { ...DATABASE_OPTION, 'user-id': { type: 'string' } });
        const user_id = required(v, 'user-id');
        await withStore(v, async (store) => {
          await setUserStatus(store, user_id, sub === 'disable' ? 'disabled' : 'active');
          await auditCli(store, { action: `cli.user.${sub}`, object: user_id });
        });
        console.log(`user ${user_id} ${sub}d`);
        return 0;
      }
      case 'rates': {
        if (sub !== 'set') throw new UsageError('usage: gateway rates set --from NZD --to CNY --rate 4.6443');
        const v = parse(rest, {
          ...DATABASE_OPTION,
          from: { type: 'string' },
          to: { type: 'string' },
          rate: { type: 'string' },
        });
        const from = required(v, 'from').toUpperCase();
        const to = required(v, 'to').toUpperCase();
        const rate = required(v, 'rate');
        await withStore(v, async (store) => {
          const before = await store.accounts.findRate(from, to);
          const micros = await setRate(store, from, to, rate);
          await auditCli(store, {
            action: 'cli.rates.set',
            object: `${from}/${to}`,
            before: before === undefined ? null : JSON.stringify({ rate_micros: before }),
            after: JSON.stringify({ rate_micros: micros }),
          });
        });
        console.log(`rate ${from} -> ${to} set to ${rate}`);
        return 0;
      }
      case 'channel':
        return await channelCommand(sub, rest, withStore);
      case 'operator':
        return await consoleUserCommand('operator', sub, rest, withStore);
      case 'merchant-user':
        return await consoleUserCommand('merchant', sub, rest, withStore);
      case 'notifications': {
        if (sub === 'list') {
          const v = parse(rest, {
            ...DATABASE_OPTION,
            'merchant-reference': { type: 'string' },
            'user-id': { type: 'string' },
            json: { type: 'boolean' },
          });
          const ref = required(v, 'merchant-reference');
          const user_id = required(v, 'user-id');
          const list = await withStore(v, (store) => listOrderNotifications(store, user_id, ref));
          console.log(v.json ? JSON.stringify(list, null, 2) : formatOrderNotifications(list));
          return 0;
        }
        if (sub === 'resend') {
          const v = parse(rest, { ...DATABASE_OPTION, 'order-id': { type: 'string' }, json: { type: 'boolean' } });
          const order_id = required(v, 'order-id');
          const n = await withStore(v, async (store) => {
            const queued = await resendNotification(store, order_id, Date.now());
            await auditCli(store, {
              action: 'cli.notifications.resend',
              object: order_id,
              after: JSON.stringify({ event_id: queued.event_id }),
            });
            return queued;
          });
          if (v.json) console.log(JSON.stringify(n, null, 2));
          else
            console.log(
              `queued notification ${n.event_id} (seq ${n.seq}, status ${n.status}) of order ${order_id} to ${n.callback_url}, due now`,
            );
          return 0;
        }
        throw new UsageError(
          'usage: gateway notifications list --merchant-reference REF --user-id ID | resend --order-id ID',
        );
      }
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        console.log(USAGE);
        return cmd === undefined ? 2 : 0;
      default:
        throw new UsageError(`unknown command ${cmd}; run "gateway help"`);
    }
  } catch (e) {
    if (e instanceof UsageError || e instanceof AdminError) {
      console.error(`gateway: ${e.message}`);
      return 2;
    }
    console.error(`gateway: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  }
}
