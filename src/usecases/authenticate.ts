import { fail } from '../domain/errors.js';
import { signatureMatchesAny } from '../domain/signing.js';
import { isActive, type User, type Wallet } from '../domain/account.js';
import type { Transaction } from '../domain/transaction.js';
import type { GatewayContext } from './context.js';

/** 110 when the user does not exist, 205 when it is disabled. */
export async function requireActiveUser(ctx: GatewayContext, user_id: string): Promise<User> {
  let user = await ctx.credentials.user(user_id);
  if (user && !isActive(user)) user = await ctx.credentials.user(user_id, true);
  if (!user) fail(110, `no user with user_id ${user_id}`);
  if (!isActive(user)) fail(205, `user ${user_id} is disabled`);
  return user;
}

/**
 * Checks a request signature that names an order only indirectly (query, refund, cancel).
 * The order's own wallet key is used when the order belongs to the user; otherwise each of the
 * user's wallet keys is tried, so an unsigned caller learns nothing about which orders exist.
 */
export async function requireSignedForOrder(
  ctx: GatewayContext,
  user: User,
  order: Pick<Transaction, 'user_id' | 'wallet_id'> | undefined,
  signature: string,
  messagesFor: (apiKey: string) => string[],
): Promise<void> {
  const keysOf = async (fresh: boolean): Promise<string[]> => {
    if (order && order.user_id === user.user_id) {
      const wallet = await ctx.credentials.wallet(order.wallet_id, fresh);
      return wallet ? [wallet.api_key] : [];
    }
    return (await ctx.credentials.walletsOf(user.user_id, fresh)).map((w) => w.api_key);
  };
  const matches = (keys: string[]) => keys.some((key) => signatureMatchesAny(signature, key, messagesFor(key)));
  let keys = await keysOf(false);
  // A refusal never rests on the cache: the key may have just been rotated.
  if (keys.length === 0 || !matches(keys)) keys = await keysOf(true);
  if (keys.length === 0) fail(205, `user ${user.user_id} has no wallet with an API key`);
  if (!matches(keys)) fail(206, 'the signature does not match the request; see the signing rules in the README');
}

/**
 * The wallet a request names, checked to exist (301), to belong to the user (450) and, when
 * `signed` is given, to have signed the request with its key (206), in that order.
 */
export async function requireUserWallet(
  ctx: GatewayContext,
  user_id: string,
  wallet_id: string,
  signed?: { signature: string; messagesFor: (wallet: Wallet) => string[] },
): Promise<Wallet> {
  const verifies = (w: Wallet) => signed === undefined || signatureMatchesAny(signed.signature, w.api_key, signed.messagesFor(w));
  const acceptable = (w: Wallet | undefined): w is Wallet => w !== undefined && w.user_id === user_id && verifies(w);
  let wallet = await ctx.credentials.wallet(wallet_id);
  // A refusal never rests on the cache: the key may have just been rotated.
  if (!acceptable(wallet)) wallet = await ctx.credentials.wallet(wallet_id, true);
  if (!wallet) fail(301, `no wallet with wallet_id ${wallet_id}`);
  if (wallet.user_id !== user_id) fail(450, `wallet ${wallet_id} does not belong to user ${user_id}`);
  if (!verifies(wallet)) fail(206, 'the signature does not match the request; see the signing rules in the README');
  return wallet;
}
