import { channelRefundAmount, type Charge } from '../domain/channel.js';
import type { Refund } from '../domain/refund.js';
import type { Transaction } from '../domain/transaction.js';
import type { Log } from '../ports/log.js';
import type { RefundOutcome, RefundRequest } from '../ports/connector.js';
import { notifyUrl, servingOf, type Serving } from './channels.js';
import type { GatewayContext } from './context.js';

// Asking a provider for a refund the gateway has reserved. The refund_id is the provider's
// idempotency key (Alipay's out_request_no, WeChat Pay's out_refund_no), and what is asked is
// fixed before the first call, so asking again, after a timeout or a crash, asks for the same
// refund and learns its outcome instead of making a second one.

export type RefundCall = { ok: true; serving: Serving; request: RefundRequest } | { ok: false; reason: string };

type ReservedRefund = Pick<
  Refund,
  'refund_id' | 'order_id' | 'refund_amount' | 'reference' | 'channel_amount' | 'created_at'
>;

/** What to ask of which provider for a reserved refund; not ok when no provider can be asked. */
export async function refundCall(ctx: GatewayContext, order: Transaction, refund: ReservedRefund): Promise<RefundCall> {
  const served = await servingOf(ctx, order);
  if (!served.ok) return served;
  const { serving } = served;
  const { capabilities, provider } = serving.connector;
  if (!capabilities.refund) return { ok: false, reason: `${provider} payments cannot be refunded through the gateway` };
  if (!capabilities.partialRefund && refund.refund_amount !== order.amount)
    return { ok: false, reason: `${provider} payments can only be refunded in full` };
  const paid = await paidPayment(ctx, order, serving);
  if (!paid) return { ok: false, reason: `no paid ${provider} payment is recorded for order ${order.order_id}` };
  let amount = refund.channel_amount;
  if (amount === null) {
    amount = channelRefundAmount(order, paid.charge, await refundedBefore(ctx, refund), refund.refund_amount);
    await ctx.store.refunds.setChannelAmount(refund.refund_id, amount, ctx.now());
  }
  return {
    ok: true,
    serving,
    request: {
      out_trade_no: paid.out_trade_no,
      charge: paid.charge,
      refund_id: refund.refund_id,
      ...(paid.provider_ref && { provider_ref: paid.provider_ref }),
      requested_at: refund.created_at,
      amount,
      reason: refund.reference,
      notify_url: notifyUrl(ctx, provider),
    },
  };
}

/** The provider payment the customer paid: the sandbox's is the order itself. */
async function paidPayment(
  ctx: GatewayContext,
  order: Transaction,
  serving: Serving,
): Promise<{ out_trade_no: string; charge: Charge; provider_ref?: string } | undefined> {
  if (serving.connector.local)
    return { out_trade_no: order.order_id, charge: { amount: order.amount, currency: order.currency } };
  const payment = (await ctx.store.transactions.listPayments(order.order_id)).find((p) => p.state === 'paid');
  return (
    payment && {
      out_trade_no: payment.out_trade_no,
      charge: { amount: payment.charged_amount, currency: payment.charged_currency },
      ...(payment.provider_ref !== null && { provider_ref: payment.provider_ref }),
    }
  );
}

/** What the order's standing refunds made before this one took, in the order's units. */
async function refundedBefore(ctx: GatewayContext, refund: ReservedRefund): Promise<number> {
  let before = 0;
  for (const r of await ctx.store.refunds.listByOrder(refund.order_id)) {
    if (r.refund_id === refund.refund_id || r.refund_status === 'failed') continue;
    if (r.created_at < refund.created_at || (r.created_at === refund.created_at && r.refund_id < refund.refund_id))
      before += r.refund_amount;
  }
  return before;
}

/** Asks for the refund; a connector that throws has not given an answer either. */
export async function askRefund(call: Extract<RefundCall, { ok: true }>): Promise<RefundOutcome> {
  try {
    return await call.serving.connector.refund(call.serving.account, call.request);
  } catch (e) {
    return { kind: 'unknown', reason: e instanceof Error ? e.message : String(e) };
  }
}

/** Asks what became of the refund; not_found when the provider has none with its refund_id. */
export async function askRefundOutcome(call: Extract<RefundCall, { ok: true }>): Promise<RefundOutcome> {
  if (!call.serving.connector.capabilities.refundQuery) return askRefund(call);
  try {
    return await call.serving.connector.queryRefund(call.serving.account, call.request);
  } catch (e) {
    return { kind: 'unknown', reason: e instanceof Error ? e.message : String(e) };
  }
}

/** Records a definite outcome; true when the refund ended (succeeded or failed). */
export async function recordRefundOutcome(
  ctx: GatewayContext,
  refund_id: string,
  outcome: RefundOutcome,
  log?: Log,
): Promise<boolean> {
  switch (outcome.kind) {
    case 'succeeded':
      await ctx.store.refunds.complete(refund_id, ctx.now());
      return true;
    case 'refused':
      await ctx.store.refunds.fail(refund_id, ctx.now());
      log?.warn({ refund_id, reason: outcome.reason }, 'refund refused by the provider; its amount is released');
      return true;
    case 'processing':
    case 'not_found':
    case 'unknown':
      return false;
  }
}
