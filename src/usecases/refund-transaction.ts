import { randomBytes } from 'node:crypto';
import { fail } from '../domain/errors.js';
import { exponentOf, formatAmount, parseAmount } from '../domain/money.js';
import { requestMessageCandidates } from '../domain/signing.js';
import { requireActiveUser, requireSignedForOrder } from './authenticate.js';
import type { GatewayContext } from './context.js';

export interface RefundRequest {
  user_id: string;
  order_id: string;
  refund_amount: string;
  reference?: string;
  signature: string;
  [extra: string]: string | undefined;
}

/** Exactly the spec's answer: a client that maps only `code` and `message` must not fail on success. */
export interface RefundResponse {
  code: 0;
  message: '';
}

/**
 * Refunds part or all of a paid order. The refund is first reserved (counted against the order's
 * refundable amount in one database transaction), then asked of the channel, then confirmed; a
 * channel refusal releases the reservation. A repeated identical request is refused with 562.
 */
export async function refundTransaction(ctx: GatewayContext, req: RefundRequest): Promise<RefundResponse> {
  const user = await requireActiveUser(ctx, req.user_id);
  const order = await ctx.store.findTransaction(req.order_id);
  await requireSignedForOrder(ctx, user, order, req.signature, (key) => requestMessageCandidates(req, key));
  if (!order || order.user_id !== user.user_id) fail(551, `no order ${req.order_id} for user ${req.user_id}`);

  const exponent = exponentOf(order.currency);
  const parsed = parseAmount(req.refund_amount, exponent);
  if (!parsed.ok) fail(550, `refund_amount ${parsed.reason}`);
  if (parsed.minor === 0) fail(550, 'refund_amount must be greater than zero');
  if (parsed.minor > order.amount) {
    fail(550, `refund_amount ${req.refund_amount} exceeds the order amount ${formatAmount(order.amount, exponent)}`);
  }
  if (order.status !== 'paid') fail(556, `order ${order.order_id} is ${order.status}; only paid orders can be refunded`);

  const now = ctx.now();
  const reference = req.reference ?? '';
  const refund_id = `R${randomBytes(10).toString('hex')}`;
  const reserved = await ctx.store.reserveRefund({
    refund_id,
    order_id: order.order_id,
    refund_amount: parsed.minor,
    reference,
    dedupe_key: `${order.order_id}|${parsed.minor}|${reference}`,
    created_at: now,
  });
  if (!reserved.ok) {
    if (reserved.reason === 'duplicate') {
      fail(562, `a refund of ${req.refund_amount} with this reference was already made for order ${order.order_id}; use a different reference for another refund`);
    }
    if (reserved.reason === 'not_paid') fail(556, `order ${order.order_id} is not paid`);
    const fresh = await ctx.store.findTransaction(order.order_id);
    const left = fresh ? fresh.amount - fresh.refunded_amount : 0;
    fail(559, `refund_amount ${req.refund_amount} exceeds what is left to refund on order ${order.order_id} (${formatAmount(left, exponent)})`);
  }

  let outcome;
  try {
    outcome = await ctx.channel.refund({ refund_id, payment: order, refund_amount: parsed.minor, reference });
  } catch (e) {
    await ctx.store.failRefund(refund_id, ctx.now());
    throw e;
  }
  if (!outcome.ok) {
    await ctx.store.failRefund(refund_id, ctx.now());
    fail(556, `the payment channel refused the refund: ${outcome.reason}`);
  }
  await ctx.store.completeRefund(refund_id, ctx.now());
  return { code: 0, message: '' };
}
