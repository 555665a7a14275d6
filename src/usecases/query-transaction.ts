import { fail } from '../domain/errors.js';
import { queryResponseJson } from '../domain/result-fields.js';
import { queryMessageCandidates } from '../domain/signing.js';
import { requireActiveUser, requireSignedForOrder } from './authenticate.js';
import type { GatewayContext } from './context.js';
import type { Transaction } from '../store/store.js';

export interface QueryRequest {
  merchant_reference: string;
  user_id: string;
  signature: string;
  is_block?: string | undefined;
}

/**
 * The query response as JSON text. With is_block=1 and a pending order, waits until the status
 * changes or the long-poll timeout passes, then answers with the state at that moment.
 */
export async function queryTransaction(ctx: GatewayContext, req: QueryRequest, abort?: AbortSignal): Promise<string> {
  const user = await requireActiveUser(ctx, req.user_id);
  let order = await ctx.store.findTransactionByReference(user.user_id, req.merchant_reference);
  await requireSignedForOrder(ctx, user, order, req.signature, (key) => queryMessageCandidates(req, key));
  if (!order) fail(201, `no order with merchant_reference ${req.merchant_reference} for user ${req.user_id}`);

  if (req.is_block === '1' && order.status === 'pending') {
    order = await waitForChange(ctx, order, abort);
  }
  const wallet = await ctx.credentials.wallet(order.wallet_id);
  if (!wallet) fail(205, `wallet ${order.wallet_id} no longer exists`);
  return queryResponseJson(order, wallet.api_key);
}

/** Waits for a pending order to change, re-reading after each signal: a signal only says "look again". */
export async function waitForChange(ctx: GatewayContext, order: Transaction, abort?: AbortSignal, timeoutMs = ctx.config.longPollTimeoutMs): Promise<Transaction> {
  const deadline = ctx.now() + timeoutMs;
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  abort?.addEventListener('abort', onAbort, { once: true });
  try {
    while (order.status === 'pending' && !stop.signal.aborted) {
      const left = deadline - ctx.now();
      if (left <= 0) break;
      // Subscribe before reading, so a change between the read and the wait is not missed.
      const waiting = ctx.signals.wait(order.order_id, left, stop.signal);
      order = (await ctx.store.findTransaction(order.order_id)) ?? order;
      if (order.status !== 'pending' || !(await waiting)) break;
    }
    return order;
  } finally {
    stop.abort();
    abort?.removeEventListener('abort', onAbort);
  }
}
