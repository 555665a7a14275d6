import { canSee, permits, type ConsoleAction, type ConsoleUser } from '../domain/console.js';
import { GatewayError, type ErrorCode } from '../domain/errors.js';
import { exponentOf, formatAmount, parseAmount } from '../domain/money.js';
import type { Transaction } from '../domain/transaction.js';
import type { PaymentState } from '../ports/connector.js';
import { audit, ConsoleError } from './console-auth.js';
import type { GatewayContext } from './context.js';
import { cancelOrder } from './cancel-transaction.js';
import { queryAtProvider, servingOf } from './channels.js';
import { applyPaymentState } from './provider-payments.js';
import { refundOrder } from './refund-transaction.js';
import { resendLatestNotification } from './resend-notification.js';

// What a console user does to an order: refund or cancel it (the API's rules and codes) or send its result
// notification again. Each is authorised here, on the server, and written to the audit log.

/** The order, if the user may see it and their role may do `action`; otherwise not found (404) or forbidden (403). */
export async function orderFor(
  ctx: GatewayContext,
  user: ConsoleUser,
  order_id: string,
  action: ConsoleAction,
): Promise<{ order: Transaction; organisation_id: number }> {
  const organisation_id = await ctx.store.transactions.organisationOf(order_id);
  const order =
    organisation_id !== undefined && canSee(user, organisation_id)
      ? await ctx.store.transactions.find(order_id)
      : undefined;
  if (!order || organisation_id === undefined) throw new ConsoleError('error.not_found');
  if (!permits(user, action)) throw new ConsoleError('error.forbidden');
  return { order, organisation_id };
}

export type RefundResult = { kind: 'done' } | { kind: 'refused'; code: ErrorCode; message: string };

/**
 * Whether an amount typed in the console's refund form can be asked for at all (a plain decimal in
 * the order's currency, above zero, within what is left to refund), before the confirmation step
 * repeats it back: the refund itself decides the rest, with the API's codes.
 */
export function refundAmountProblem(
  order: Pick<Transaction, 'amount' | 'refunded_amount' | 'currency'>,
  text: string,
): { left: string } | undefined {
  const exponent = exponentOf(order.currency);
  const parsed = parseAmount(text.trim(), exponent);
  const left = order.amount - order.refunded_amount;
  if (parsed.ok && parsed.minor > 0 && parsed.minor <= left) return undefined;
  return { left: `${formatAmount(Math.max(0, left), exponent)} ${order.currency}` };
}

export async function consoleRefund(
  ctx: GatewayContext,
  user: ConsoleUser,
  ip: string,
  order_id: string,
  refund_amount: string,
  reference: string,
): Promise<RefundResult> {
  const { order, organisation_id } = await orderFor(ctx, user, order_id, 'refund');
  let result: RefundResult;
  try {
    await refundOrder(ctx, order, refund_amount, reference);
    result = { kind: 'done' };
  } catch (e) {
    if (!(e instanceof GatewayError)) throw e;
    result = { kind: 'refused', code: e.code, message: e.message };
  }
  await audit(
    ctx,
    { kind: 'user', user, ip },
    {
      action: 'transaction.refund',
      object: order_id,
      organisation_id,
      after: JSON.stringify({ refund_amount, reference, code: result.kind === 'done' ? 0 : result.code }),
    },
  );
  return result;
}

/** Cancels a pending order as the API's cancel does (the provider's payment closed first); the same codes when refused. */
export async function consoleCancel(
  ctx: GatewayContext,
  user: ConsoleUser,
  ip: string,
  order_id: string,
): Promise<RefundResult> {
  const { order, organisation_id } = await orderFor(ctx, user, order_id, 'refund');
  let result: RefundResult;
  try {
    await cancelOrder(ctx, order);
    result = { kind: 'done' };
  } catch (e) {
    if (!(e instanceof GatewayError)) throw e;
    result = { kind: 'refused', code: e.code, message: e.message };
  }
  await audit(
    ctx,
    { kind: 'user', user, ip },
    {
      action: 'transaction.cancel',
      object: order_id,
      organisation_id,
      after: JSON.stringify({ code: result.kind === 'done' ? 0 : result.code }),
    },
  );
  return result;
}

export async function consoleResend(
  ctx: GatewayContext,
  user: ConsoleUser,
  ip: string,
  order_id: string,
): Promise<{ event_id: string }> {
  const { order, organisation_id } = await orderFor(ctx, user, order_id, 'resend');
  const r = await resendLatestNotification(ctx.store, order.order_id, ctx.now());
  if (r.kind !== 'queued') throw new ConsoleError('error.nothing_to_resend', { status: order.status });
  ctx.notifier?.poke();
  await audit(
    ctx,
    { kind: 'user', user, ip },
    {
      action: 'transaction.resend',
      object: order_id,
      organisation_id,
      after: JSON.stringify({ event_id: r.row.event_id }),
    },
  );
  return { event_id: r.row.event_id };
}

/** What the provider said of one of the order's open payments when asked from the console. */
export interface ProviderAnswerView {
  out_trade_no: string;
  /** What the provider said; a payment it calls paid that did not settle the order is 'mismatch' (another amount or currency) or 'ended' (the order had ended). */
  state: PaymentState['kind'] | 'mismatch' | 'ended';
  /** Why there was no definite answer ('unknown'). */
  reason?: string;
}

/** How soon the console may ask a provider about the same order again (per process). */
export const ASK_AGAIN_AFTER_MS = 10_000;
/** When each order was last asked about, per gateway (per store: a test process runs several). */
const askedAt = new WeakMap<object, Map<string, number>>();

/**
 * Asks the provider now about a pending order's open payments, as reconciliation would later (a
 * customer says they paid, and the provider's notification has not come), and settles the order
 * through the same path when one was paid. Changes nothing the provider did not say.
 */
export async function consoleAskProvider(
  ctx: GatewayContext,
  user: ConsoleUser,
  ip: string,
  order_id: string,
): Promise<ProviderAnswerView[]> {
  const { order, organisation_id } = await orderFor(ctx, user, order_id, 'resend');
  const open = (await ctx.store.transactions.listPayments(order_id)).filter((p) => p.state === 'open');
  if (order.status !== 'pending' || open.length === 0)
    throw new ConsoleError('error.nothing_to_ask', { status: order.status });
  const served = await servingOf(ctx, order);
  if (!served.ok) throw new ConsoleError('error.cannot_ask', { reason: served.reason });
  if (!served.serving.connector.capabilities.query)
    throw new ConsoleError('error.cannot_ask', { reason: `${served.serving.connector.provider} cannot be queried` });
  // A reload of the answer, or a double click, does not ask again at once: the provider's query limits are shared with real traffic.
  let lastAsked = askedAt.get(ctx.store);
  if (!lastAsked) askedAt.set(ctx.store, (lastAsked = new Map<string, number>()));
  const last = lastAsked.get(order_id);
  if (last !== undefined && ctx.now() - last < ASK_AGAIN_AFTER_MS)
    throw new ConsoleError('error.asked_just_now', {
      seconds: Math.ceil((ASK_AGAIN_AFTER_MS - (ctx.now() - last)) / 1000),
    });
  lastAsked.set(order_id, ctx.now());
  if (lastAsked.size > 10_000) lastAsked.delete(lastAsked.keys().next().value!);
  const answers: ProviderAnswerView[] = [];
  for (const payment of open) {
    const state = await queryAtProvider(served.serving, payment);
    const verdict = await applyPaymentState(ctx, payment, state, ctx.log);
    answers.push({
      out_trade_no: payment.out_trade_no,
      state: verdict === 'mismatch' || verdict === 'ended' ? verdict : state.kind,
      ...(state.kind === 'unknown' && { reason: state.reason }),
    });
  }
  await audit(
    ctx,
    { kind: 'user', user, ip },
    {
      action: 'transaction.ask_provider',
      object: order_id,
      organisation_id,
      after: JSON.stringify(answers.map((a) => [a.out_trade_no, a.state])),
    },
  );
  return answers;
}
