import { fail } from '../domain/errors.js';
import { formatPayTime } from '../domain/time.js';
import { endedCode, type Transaction } from '../domain/transaction.js';
import { requireActiveUser, requireSignedForOrder } from './authenticate.js';
import { cancelMessageCandidates } from '../domain/signing.js';
import type { GatewayContext } from './context.js';
import { closeOrderPayments } from './provider-payments.js';
import { settle } from './settle-payment.js';

export interface CancelRequest {
  user_id: string;
  merchant_reference: string;
  signature: string;
}

export interface CancelResponse {
  code: 0;
  message: 'success';
}

/**
 * Cancels a pending order: the channel is asked to close the payment first, and only then is
 * the order moved to `canceled`. If the channel refuses (the customer is paying), the answer is
 * code 1 and further cancels of that order are refused for the lock period. Canceling an order
 * that is already canceled succeeds again.
 */
export async function cancelTransaction(ctx: GatewayContext, req: CancelRequest): Promise<CancelResponse> {
  const user = await requireActiveUser(ctx, req.user_id);
  const order = await ctx.store.transactions.findByReference(user.user_id, req.merchant_reference);
  await requireSignedForOrder(ctx, user, order, req.signature, (key) => cancelMessageCandidates(req, key));
  if (!order) fail(201, `no order with merchant_reference ${req.merchant_reference} for user ${req.user_id}`);
  await cancelOrder(ctx, order);
  return { code: 0, message: 'success' };
}

/**
 * Cancels an order the caller is entitled to (the merchant's signed cancel, or the customer's back
 * link on the hosted page). Throws 900/901 for a final order, 1 when the channel refuses.
 */
export async function cancelOrder(ctx: GatewayContext, order: Transaction): Promise<void> {
  if (!refuseEnded(order)) return;
  const now = ctx.now();
  if (order.cancel_locked_until !== null && order.cancel_locked_until > now) {
    fail(
      1,
      `a cancel of this order failed recently; try again after ${formatPayTime(order.cancel_locked_until)} (UTC+08:00)`,
    );
  }
  const closed = await closeOrderPayments(ctx, order, ctx.log);
  if (closed.kind === 'paid')
    fail(900, `order ${order.order_id} was paid while it was being canceled; refund it instead`);
  if (closed.kind !== 'closed') {
    await ctx.store.transactions.setCancelLock(order.order_id, now + ctx.config.cancelLockMs, now);
    const why =
      closed.kind === 'refused'
        ? `could not close the payment (${closed.reason})`
        : `could not be asked to close the payment (${closed.reason})`;
    fail(1, `the payment channel ${why}; try again in 15 minutes`);
  }
  const settled = await settle(ctx, order, 'canceled');
  if (!settled) {
    // The payment settled while we were closing it: exactly one final state wins.
    const fresh = await ctx.store.transactions.find(order.order_id);
    if (fresh && refuseEnded(fresh)) fail(901, `order ${order.order_id} has ended as ${fresh.status}`);
  }
}

/**
 * Whether a cancel has work to do: true while pending, false once canceled (canceling again
 * succeeds); throws 900 or 901 for an order that ended otherwise.
 */
function refuseEnded(order: Transaction): boolean {
  const status = order.status;
  switch (status) {
    case 'pending':
      return true;
    case 'canceled':
      return false;
    case 'paid':
    case 'failed':
    case 'rejected':
      if (endedCode(status) === 900)
        fail(900, `order ${order.order_id} is paid and cannot be canceled; refund it instead`);
      fail(901, `order ${order.order_id} has ended as ${status}`);
  }
}
