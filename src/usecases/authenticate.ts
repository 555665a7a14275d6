import { fail } from '../domain/errors.js';
import { signatureMatchesAny } from '../domain/signing.js';
import { isActive, verifyingKeys, type User, type Wallet } from '../domain/account.js';
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
 * The order's own wallet keys are used when the order belongs to the user; otherwise each of the
 * user's wallet keys is tried, so an unsigned caller learns nothing about which orders exist.
 * A wallet's keys are its key and, during a rotation's overlap window, the key it replaced.
 * Returns the key that verified, when it is a replaced one (the answer is signed with it: the
 * merchant has not deployed the new key yet).
 */
export async function requireSignedForOrder(
  ctx: GatewayContext,
  user: User,
  order: Pick<Transaction, 'user_id' | 'wallet_id'> | undefined,
  signature: string,
  messagesFor: (apiKey: string) => string[],
): Promise<{ previousKey?: string }> {
  const walletsOf = async (fresh: boolean): Promise<Wallet[]> => {
    if (order && order.user_id === user.user_id) {
      const wallet = await ctx.credentials.wallet(order.wallet_id, fresh);
      return wallet ? [wallet] : [];
    }
    return ctx.credentials.walletsOf(user.user_id, fresh);
  };
  const now = ctx.now();
  const matching = (wallets: Wallet[]) => {
    for (const w of wallets) {
      const key = verifyingKeys(w, now).find((k) => signatureMatchesAny(signature, k, messagesFor(k)));
      if (key !== undefined) return { wallet: w, key };
    }
    return undefined;
  };
  let wallets = await walletsOf(false);
  let matched = matching(wallets);
  // A refusal never rests on the cache: the key may have just been rotated.
  if (!matched) matched = matching((wallets = await walletsOf(true)));
  if (wallets.length === 0) fail(205, `user ${user.user_id} has no wallet with an API key`);
  if (!matched)
    fail(206, 'the signature does not match the request; see the signing rules in docs/api.md (Signatures)');
  return matched.key === matched.wallet.api_key ? {} : { previousKey: matched.key };
}

/**
 * The wallet a request names, checked to exist (301), to belong to the user (450) and, when
 * `signed` is given, to have signed the request with one of its keys (206), in that order. When
 * a replaced key (in its overlap window) verified, the wallet is returned with that key as its
 * api_key: the answer is signed with the key the merchant signed with.
 */
export async function requireUserWallet(
  ctx: GatewayContext,
  user_id: string,
  wallet_id: string,
  signed?: { signature: string; messagesFor: (wallet: Wallet, apiKey: string) => string[] },
): Promise<Wallet> {
  const now = ctx.now();
  // Checked once per wallet read: the HMACs of every candidate message are most of a request's checks.
  let checked: { wallet: Wallet; key: string | undefined } | undefined;
  const keyOf = (w: Wallet): string | undefined => {
    if (signed === undefined) return w.api_key;
    if (checked?.wallet !== w)
      checked = {
        wallet: w,
        key: verifyingKeys(w, now).find((k) => signatureMatchesAny(signed.signature, k, signed.messagesFor(w, k))),
      };
    return checked.key;
  };
  const acceptable = (w: Wallet | undefined): w is Wallet =>
    w !== undefined && w.user_id === user_id && keyOf(w) !== undefined;
  let wallet = await ctx.credentials.wallet(wallet_id);
  // A refusal never rests on the cache: the key may have just been rotated.
  if (!acceptable(wallet)) wallet = await ctx.credentials.wallet(wallet_id, true);
  if (!wallet) fail(301, `no wallet with wallet_id ${wallet_id}`);
  if (wallet.user_id !== user_id) fail(450, `wallet ${wallet_id} does not belong to user ${user_id}`);
  if (wallet.wallet_status === 'disabled') fail(301, `wallet ${wallet_id} is disabled`);
  const key = keyOf(wallet);
  if (key === undefined)
    fail(206, 'the signature does not match the request; see the signing rules in docs/api.md (Signatures)');
  return key === wallet.api_key ? wallet : { ...wallet, api_key: key };
}
