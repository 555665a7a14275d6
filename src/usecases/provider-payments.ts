import type { ExceptionKind } from '../domain/reconciliation.js';
import { isPaid, isPending, outcomeAllowed, type Transaction } from '../domain/transaction.js';
import type { Charge, PaymentState } from '../ports/connector.js';
import type { Log } from '../ports/log.js';
import type { ChannelPayment } from '../ports/transactions.js';
import { closeAtProvider, queryAtProvider, servingOf } from './channels.js';
import type { GatewayContext } from './context.js';
import { raiseException } from './money-exceptions.js';
import { settle } from './settle-payment.js';

// What the gateway does with what a provider says of a payment, however it learned it (a
// notification, a reconciliation query, the query before a close): the same settle path the
// sandbox uses, idempotent, so duplicated and out-of-order reports are harmless.

export type PaidVerdict =
  /** The order is paid now (by this report, or an earlier one). */
  | 'paid'
  /** The provider charged another amount or currency than the payment was opened for: not settled, an operator must look. */
  | 'mismatch'
  /** Paid at the provider after the order had ended otherwise: the money must be returned by an operator. */
  | 'ended';

/**
 * The provider reports the payment paid: its order settles paid, and the payment is marked.
 * `read`: the payment's order as the caller has just read it, if it has (the settle is guarded on
 * the order as read, so an order that moved meanwhile is read again).
 */
export async function paymentPaid(
  ctx: GatewayContext,
  payment: ChannelPayment,
  paid: { provider_ref: string; charge: Charge },
  log: Log,
  read?: Transaction,
): Promise<PaidVerdict> {
  const fields = {
    order_id: payment.order_id,
    out_trade_no: payment.out_trade_no,
    provider: payment.provider,
    provider_ref: paid.provider_ref,
  };
  if (paid.charge.amount !== payment.charged_amount || paid.charge.currency !== payment.charged_currency) {
    const amounts = {
      expected: `${payment.charged_amount} ${payment.charged_currency}`,
      reported: `${paid.charge.amount} ${paid.charge.currency}`,
    };
    log.error(
      { ...fields, ...amounts },
      "provider reports a payment of another amount than the order's: the order is not settled",
    );
    await liveException(ctx, payment, {
      kind: 'amount_mismatch',
      detail: `the provider reports ${amounts.reported}; the payment was opened for ${amounts.expected}`,
      evidence: { ...fields, ...amounts },
    });
    return 'mismatch';
  }
  let order = read ?? (await ctx.store.transactions.find(payment.order_id));
  let marked = false;
  if (order && isPending(order)) {
    // The payment is marked with the settle, never before it: a payment marked paid is not asked about again.
    const settled = await settle(ctx, order, 'paid', {
      payment: { out_trade_no: payment.out_trade_no, provider_ref: paid.provider_ref },
      charged: { amount: payment.charged_amount, currency: payment.charged_currency },
    });
    if (settled) log.info(fields, 'order paid at the provider');
    marked = settled !== undefined;
    order = settled ?? (await ctx.store.transactions.find(payment.order_id));
  }
  if (!marked && order && isPaid(order) && payment.state === 'open') {
    // Paid by something else first, perhaps a moment ago: if another of its payments, the customer
    // paid twice (say the desktop QR and then the phone's page): one order, two charges.
    const first = await paidElsewhere(ctx, payment);
    if (first) {
      log.error(
        { ...fields, paid_by: first },
        'the order was already paid through another of its provider payments: refund this payment at the provider',
      );
      await liveException(ctx, payment, {
        kind: 'duplicate_payment',
        detail: `order ${payment.order_id} was already paid by its payment ${first}: the customer paid twice`,
        evidence: { ...fields, paid_by: first, charged: `${paid.charge.amount} ${paid.charge.currency}` },
      });
    }
  }
  // Settled before (another report, another payment, a cancel): marked now.
  if (!marked) await ctx.store.transactions.markPayment(payment.out_trade_no, 'paid', paid.provider_ref, ctx.now());
  if (order && isPaid(order)) return 'paid';
  log.error(
    { ...fields, status: order?.status },
    'provider reports a payment of an order that had already ended: refund it at the provider',
  );
  await liveException(ctx, payment, {
    kind: 'paid_after_end',
    detail: `paid at the provider after order ${payment.order_id} was ${order?.status ?? 'gone'}`,
    evidence: { ...fields, status: order?.status ?? null, charged: `${paid.charge.amount} ${paid.charge.currency}` },
  });
  return 'ended';
}

/** An exception in the queue for what the live path found (once per kind and payment). */
async function liveException(
  ctx: GatewayContext,
  payment: ChannelPayment,
  e: { kind: ExceptionKind; detail: string; evidence: Record<string, unknown> },
): Promise<void> {
  const order = await ctx.store.transactions.find(payment.order_id);
  await raiseException(ctx.store, {
    ...e,
    subject: payment.out_trade_no,
    source: 'live',
    provider: payment.provider,
    wallet_id: order?.wallet_id ?? null,
    order_id: payment.order_id,
    out_trade_no: payment.out_trade_no,
    now: ctx.now(),
  });
}

/** The other payment of the order that was paid, if one was. */
async function paidElsewhere(ctx: GatewayContext, payment: ChannelPayment): Promise<string | undefined> {
  return (await ctx.store.transactions.listPayments(payment.order_id)).find(
    (p) => p.out_trade_no !== payment.out_trade_no && p.state === 'paid',
  )?.out_trade_no;
}

/** Acts on a provider's state of a payment; the verdict when it was paid. `read`: as paymentPaid's. */
export async function applyPaymentState(
  ctx: GatewayContext,
  payment: ChannelPayment,
  state: PaymentState,
  log: Log,
  read?: Transaction,
): Promise<PaidVerdict | undefined> {
  switch (state.kind) {
    case 'paid':
      return paymentPaid(ctx, payment, state, log, read);
    case 'closed':
      await ctx.store.transactions.markPayment(payment.out_trade_no, 'closed', null, ctx.now());
      return undefined;
    case 'failed':
      await paymentEnded(ctx, payment, { to: 'failed', reason: state.reason }, log, read);
      return undefined;
    case 'rejected':
      await paymentEnded(ctx, payment, { to: 'rejected', reason: state.reason, msgId: state.msgId }, log, read);
      return undefined;
    case 'pending':
      if (state.attention) {
        const fields = {
          order_id: payment.order_id,
          out_trade_no: payment.out_trade_no,
          provider: payment.provider,
          attention: state.attention,
        };
        log.error(fields, 'provider payment needs an operator: the order stays pending');
        await liveException(ctx, payment, {
          kind: 'provider_attention',
          detail: `the provider holds the payment: ${state.attention}`,
          evidence: fields,
        });
      }
      return undefined;
    case 'not_found':
    case 'unknown':
      return undefined;
  }
}

/**
 * The provider ended the payment in a way that ends the order: `failed` (CoinPayments' timed-out
 * invoice, an expired PayID) or `rejected` (a PayID payment Azupay returned, with its reason and
 * PayID). The order settles (its notification queued with it), then the payment is marked closed.
 * In that order: a crash between leaves an open payment of an ended order, which nothing asks
 * about again.
 */
async function paymentEnded(
  ctx: GatewayContext,
  payment: ChannelPayment,
  end: { to: 'failed' | 'rejected'; reason: string; msgId?: string },
  log: Log,
  read?: Transaction,
): Promise<void> {
  const order = read ?? (await ctx.store.transactions.find(payment.order_id));
  const extras = end.to === 'rejected' ? { status_message: end.reason, msgId: end.msgId ?? null } : {};
  if (
    order &&
    isPending(order) &&
    outcomeAllowed(order.payment_method, end.to) &&
    (await settle(ctx, order, end.to, extras))
  )
    log.info(
      { order_id: order.order_id, out_trade_no: payment.out_trade_no, reason: end.reason },
      `order ${end.to} at the provider`,
    );
  await ctx.store.transactions.markPayment(payment.out_trade_no, 'closed', null, ctx.now());
}

export type CloseResult =
  { kind: 'closed' } | { kind: 'paid' } | { kind: 'refused'; reason: string } | { kind: 'unknown'; reason: string };

/**
 * Closes every open provider payment of a pending order, so that none can be paid any more. A
 * payment the provider will not close (the customer has paid, or is paying) is asked about: one
 * that is paid settles the order (`paid`).
 */
export async function closeOrderPayments(ctx: GatewayContext, order: Transaction, log: Log): Promise<CloseResult> {
  const served = await servingOf(ctx, order);
  if (!served.ok) return { kind: 'unknown', reason: served.reason };
  const { connector, account } = served.serving;
  if (connector.local) return connector.close(account, order.order_id);
  for (const payment of await ctx.store.transactions.listPayments(order.order_id)) {
    if (payment.state !== 'open') continue;
    const closed = await closeAtProvider(served.serving, payment.out_trade_no);
    if (closed.kind === 'closed') {
      if (closed.note)
        log.warn(
          { order_id: order.order_id, out_trade_no: payment.out_trade_no, note: closed.note },
          'provider payment closed, with a note for an operator',
        );
      await ctx.store.transactions.markPayment(payment.out_trade_no, 'closed', null, ctx.now());
      continue;
    }
    if (closed.kind === 'refused' && connector.capabilities.query) {
      const state = await queryAtProvider(served.serving, payment);
      if ((await applyPaymentState(ctx, payment, state, log)) === 'paid') return { kind: 'paid' };
      if (state.kind === 'closed' || state.kind === 'failed' || state.kind === 'rejected') continue;
      // Never made at the provider (its opening was refused, or did not arrive): nothing to pay there.
      if (state.kind === 'not_found') {
        await ctx.store.transactions.markPayment(payment.out_trade_no, 'closed', null, ctx.now());
        continue;
      }
    }
    return closed;
  }
  return { kind: 'closed' };
}
