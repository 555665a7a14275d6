import { fail } from '../domain/errors.js';
import { signatureMatchesAny } from '../domain/signing.js';
import type { Transaction, UserRecord } from '../store/store.js';
import type { GatewayContext } from './context.js';

/** 110 when the user does not exist, 205 when it is disabled. */
export async function requireActiveUser(ctx: GatewayContext, user_id: string): Promise<UserRecord> {
  const user = await ctx.store.findUser(user_id);
  if (!user) fail(110, `no user with user_id ${user_id}`);
  if (user.user_status !== 'active') fail(205, `user ${user_id} is disabled`);
  return user;
}

/**
 * Checks a request signature that names an order only indirectly (query, refund, cancel).
 * The order's own wallet key is used when the order belongs to the user; otherwise each of the
 * user's wallet keys is tried, so an unsigned caller learns nothing about which orders exist.
 */
export async function requireSignedForOrder(
  ctx: GatewayContext,
  user: UserRecord,
  order: Transaction | undefined,
  signature: string,
  messagesFor: (apiKey: string) => string[],
): Promise<void> {
  const keys: string[] = [];
  if (order && order.user_id === user.user_id) {
    const wallet = await ctx.store.findWallet(order.wallet_id);
    if (wallet) keys.push(wallet.api_key);
  } else {
    for (const w of await ctx.store.listWallets(user.user_id)) keys.push(w.api_key);
  }
  if (keys.length === 0) fail(205, `user ${user.user_id} has no wallet with an API key`);
  let ok = false;
  for (const key of keys) if (signatureMatchesAny(signature, key, messagesFor(key))) ok = true;
  if (!ok) fail(206, 'the signature does not match the request; see the signing rules in the README');
}
