import { walletMethods, type Wallet } from '../domain/account.js';
import { canSee, permits, type ConsoleUser } from '../domain/console.js';
import { fingerprint } from '../domain/sealed.js';
import type { Organisation } from '../ports/accounts.js';
import type { FailingHost, NotificationAttempt } from '../ports/outbox.js';
import { describeAccount, openAccount } from './channel-accounts.js';
import { audit, ConsoleError, confirmPassword } from './console-auth.js';
import type { GatewayContext } from './context.js';
import { rotateWalletKey, type RotatedKey } from './wallet-keys.js';

// A wallet's integration parameters in the console: its ids, methods and settings, its API key
// (shown only after the password is entered again, and only to a role that may see keys),
// rotation with an overlap window, and the health of its notifications by callback host.

/** A wallet as the console shows it: never its key. */
export type ShownWallet = Omit<Wallet, 'api_key' | 'previous_api_key'>;

export function shown(wallet: Wallet): ShownWallet {
  const { api_key: _key, previous_api_key: _previous, ...rest } = wallet;
  return rest;
}

/** The wallet and its organisation, if the user may see it; otherwise not found (the same answer whether it exists or not). */
export async function walletFor(
  ctx: GatewayContext,
  user: ConsoleUser,
  wallet_id: string,
): Promise<{ wallet: Wallet; organisation: Organisation }> {
  const wallet = await ctx.store.accounts.findWallet(wallet_id);
  const owner = wallet && (await ctx.store.accounts.findUser(wallet.user_id));
  const organisation =
    owner && canSee(user, owner.organisation_id)
      ? await ctx.store.accounts.findOrganisation(owner.organisation_id)
      : undefined;
  if (!wallet || !organisation) throw new ConsoleError('error.not_found');
  return { wallet, organisation };
}

export interface CallbackHealth extends FailingHost {
  /** The last attempt of the notification attempted last: how the host fails now. */
  last: NotificationAttempt | undefined;
}

export interface WalletIntegration {
  wallet: ShownWallet;
  organisation: Organisation;
  methods: string[];
  /** Whether the replaced key still verifies now (the end is wallet.previous_key_expires_at). */
  overlapping: boolean;
  health: CallbackHealth[];
  /** The wallet's provider accounts: public ids and settings, secrets only as fingerprints. */
  channels: Array<Record<string, string>>;
  /** The current key's fingerprint, which the rotate form carries (not the key): a form sent twice (a reload) must not rotate twice. */
  keyMark: string;
}

export async function callbackHealth(
  ctx: GatewayContext,
  scope: Parameters<GatewayContext['store']['outbox']['failingHosts']>[0],
  limit = 10,
): Promise<CallbackHealth[]> {
  const hosts = await ctx.store.outbox.failingHosts(scope, limit);
  return Promise.all(
    hosts.map(async (h) => ({ ...h, last: (await ctx.store.outbox.listAttempts(h.latest_event_id)).at(-1) })),
  );
}

export async function walletIntegration(
  ctx: GatewayContext,
  user: ConsoleUser,
  wallet_id: string,
): Promise<WalletIntegration> {
  const { wallet, organisation } = await walletFor(ctx, user, wallet_id);
  return {
    wallet: shown(wallet),
    organisation,
    methods: walletMethods(wallet),
    overlapping: wallet.previous_key_expires_at !== null && wallet.previous_key_expires_at > ctx.now(),
    keyMark: fingerprint(wallet.api_key),
    health: await callbackHealth(ctx, { wallet_id }),
    channels: (await ctx.store.accounts.listChannelAccounts({ wallet_id })).map((stored) =>
      ctx.masterKey
        ? describeAccount(openAccount(ctx.masterKey, stored))
        : {
            payment_method: stored.payment_method,
            provider: stored.provider,
            ...(JSON.parse(stored.config) as Record<string, string>),
            secrets: 'sealed',
          },
    ),
  };
}

/** The wallet's key, for a user whose role may see keys and who has just entered their password again. */
export async function revealKey(
  ctx: GatewayContext,
  user: ConsoleUser,
  ip: string,
  wallet_id: string,
  password: string,
): Promise<string> {
  const { wallet, organisation } = await walletFor(ctx, user, wallet_id);
  if (!permits(user, 'see_keys')) throw new ConsoleError('error.forbidden');
  await confirmPassword(ctx, user, password, ip);
  await audit(
    ctx,
    { kind: 'user', user, ip },
    { action: 'wallet.reveal_key', object: wallet_id, organisation_id: organisation.organisation_id },
  );
  return wallet.api_key;
}

/** The overlap windows the console offers, in hours (0: the old key stops now, for one that was exposed). */
export const OVERLAP_CHOICES = [1, 24, 72, 168, 0] as const;
/** The window chosen unless another is. */
export const DEFAULT_OVERLAP_HOURS = 24;

/**
 * Rotates the wallet's key the form was shown with (`from`, its fingerprint): sent again (a reload of
 * the result), it finds another key and changes nothing, rather than rotating the key the
 * merchant has just been given and cutting the overlap short.
 */
export async function consoleRotateKey(
  ctx: GatewayContext,
  user: ConsoleUser,
  ip: string,
  wallet_id: string,
  password: string,
  overlapHours: number,
  from: string,
): Promise<RotatedKey> {
  const { wallet, organisation } = await walletFor(ctx, user, wallet_id);
  if (!permits(user, 'see_keys')) throw new ConsoleError('error.forbidden');
  if (!(OVERLAP_CHOICES as readonly number[]).includes(overlapHours)) throw new ConsoleError('error.overlap_invalid');
  await confirmPassword(ctx, user, password, ip);
  if (fingerprint(wallet.api_key) !== from) throw new ConsoleError('error.rotated_already');
  const rotated = await rotateWalletKey(ctx.store, ctx.now(), wallet_id, overlapHours * 3600_000, wallet.api_key);
  if (!rotated) throw new ConsoleError('error.rotated_already');
  await audit(
    ctx,
    { kind: 'user', user, ip },
    {
      action: 'wallet.rotate_key',
      object: wallet_id,
      organisation_id: organisation.organisation_id,
      before: JSON.stringify({ previous_key_expires_at: wallet.previous_key_expires_at }),
      after: JSON.stringify({ previous_key_expires_at: rotated.previous_key_expires_at }),
    },
  );
  return rotated;
}
