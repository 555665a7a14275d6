import { EXCEPTION_ACTIONS, type ExceptionAction } from '../domain/reconciliation.js';
import type { RefundOutcome, RefundRequest } from '../ports/connector.js';
import type { MoneyException } from '../ports/reconciliation.js';
import { AdminError } from './administration.js';
import { adjustBalance } from './books.js';
import { notifyUrl, queryAtProvider, servingOf } from './channels.js';
import type { GatewayContext } from './context.js';
import { applyPaymentState } from './provider-payments.js';

// What an operator does about an exception, besides resolving it with a note: refund a payment
// the customer should not have made (a second payment of an order, one after the order ended) at
// its provider; ask the provider again about a payment and settle it the usual way; post an
// adjustment to a wallet's books. Each resolves the exception when it is done, with what was done
// as its note; one whose outcome is not known leaves it open, and may be done again safely.

async function openException(ctx: GatewayContext, exception_id: string, action: ExceptionAction) {
  const e = await ctx.store.reconciliation.findException(exception_id);
  if (!e) throw new AdminError(`no exception ${exception_id}`);
  if (e.exception_status !== 'open') throw new AdminError(`exception ${exception_id} is resolved already`);
  if (!EXCEPTION_ACTIONS[e.kind].includes(action))
    throw new AdminError(`an exception of kind ${e.kind} cannot be acted on by ${action}`);
  return e;
}

/** The provider's refund id of an exception's payment: the same each time, so asking again is safe. */
export const exceptionRefundId = (e: Pick<MoneyException, 'exception_id'>) => `XR${e.exception_id.slice(1)}`;

export type ExceptionActionResult = { done: true; exception: MoneyException } | { done: false; reason: string };

/**
 * Refunds the exception's payment, whole, at its provider (its refund id derived from the
 * exception). The money never reached a merchant's balance (only an order's first payment is
 * booked), so nothing is posted: it came in and goes back out at the provider.
 */
export async function refundExceptionPayment(
  ctx: GatewayContext,
  exception_id: string,
  by: string,
): Promise<ExceptionActionResult> {
  const e = await openException(ctx, exception_id, 'refund');
  const found = e.out_trade_no ? await ctx.store.transactions.findPayment(e.out_trade_no, 'committed') : undefined;
  if (!found?.order) throw new AdminError(`the gateway has no payment ${e.out_trade_no ?? ''} to refund`);
  const { payment, order } = found;
  // Not checked against the payment's state here: one paid after its order was canceled may be
  // marked closed. The provider refuses a refund of a payment it does not have paid.
  const served = await servingOf(ctx, order);
  if (!served.ok) throw new AdminError(served.reason);
  const { connector, account } = served.serving;
  if (!connector.capabilities.refund)
    throw new AdminError(`${connector.provider} payments cannot be refunded from here`);
  const request: RefundRequest = {
    out_trade_no: payment.out_trade_no,
    charge: { amount: payment.charged_amount, currency: payment.charged_currency },
    refund_id: exceptionRefundId(e),
    ...(payment.provider_ref && { provider_ref: payment.provider_ref }),
    requested_at: e.created_at,
    amount: payment.charged_amount,
    reason: e.kind === 'duplicate_payment' ? 'paid twice' : 'paid after the order ended',
    notify_url: notifyUrl(ctx, connector.provider),
  };
  const outcome: RefundOutcome = await connector
    .refund(account, request)
    .catch((err: unknown) => ({ kind: 'unknown' as const, reason: String(err) }));
  if (outcome.kind === 'refused') throw new AdminError(`${connector.provider} refused the refund: ${outcome.reason}`);
  if (outcome.kind !== 'succeeded')
    return {
      done: false,
      reason:
        outcome.kind === 'processing'
          ? `${connector.provider} took the refund and has not finished it: do it again later to see (refund ${request.refund_id})`
          : `no definite answer from ${connector.provider}: do it again (the same refund ${request.refund_id}, never made twice)`,
    };
  const money = `${payment.charged_amount} ${payment.charged_currency}`;
  const resolved = await ctx.store.reconciliation.resolveException(
    e.exception_id,
    'refund',
    by,
    `refunded ${money} (minor units) at ${connector.provider}, refund ${request.refund_id}`,
    ctx.now(),
  );
  return { done: true, exception: resolved! };
}

/** Asks the provider about the exception's payment again; settles its order the usual way when it is paid. */
export async function settleExceptionPayment(
  ctx: GatewayContext,
  exception_id: string,
  by: string,
): Promise<ExceptionActionResult> {
  const e = await openException(ctx, exception_id, 'settle');
  const found = e.out_trade_no ? await ctx.store.transactions.findPayment(e.out_trade_no, 'committed') : undefined;
  if (!found?.order) throw new AdminError(`the gateway has no payment ${e.out_trade_no ?? ''} to ask about`);
  const served = await servingOf(ctx, found.order);
  if (!served.ok) throw new AdminError(served.reason);
  const state = await queryAtProvider(served.serving, found.payment);
  const verdict = await applyPaymentState(ctx, found.payment, state, ctx.log);
  const order = await ctx.store.transactions.find(found.order.order_id);
  if (verdict !== 'paid' || order?.status !== 'paid')
    return {
      done: false,
      reason: `the provider says ${state.kind}${state.kind === 'unknown' ? ` (${state.reason})` : ''}`,
    };
  const resolved = await ctx.store.reconciliation.resolveException(
    e.exception_id,
    'settle',
    by,
    `the provider confirmed payment ${found.payment.out_trade_no}: order ${order.order_id} settled paid`,
    ctx.now(),
  );
  return { done: true, exception: resolved! };
}

/** Posts an adjustment to a wallet's available balance with its reason, and resolves the exception with it. */
export async function adjustForException(
  ctx: GatewayContext,
  input: { exception_id: string; wallet_id: string; amount: string; reason: string; by: string },
): Promise<MoneyException> {
  const e = await openException(ctx, input.exception_id, 'adjust');
  if (!input.reason.trim()) throw new AdminError('an adjustment needs a reason');
  const done = await adjustBalance(ctx.store, {
    wallet_id: input.wallet_id,
    amount: input.amount,
    reason: `${input.reason.trim()} (exception ${e.exception_id})`,
    by: input.by,
    now: ctx.now(),
    // One adjustment per exception: done again after a crash before the resolve, it posts nothing.
    adjustment_id: `A${e.exception_id.slice(1)}`,
  });
  const resolved = await ctx.store.reconciliation.resolveException(
    e.exception_id,
    'adjust',
    input.by,
    `adjusted wallet ${input.wallet_id} by ${input.amount} ${done.currency}: ${input.reason.trim()}`,
    ctx.now(),
  );
  return resolved!;
}
