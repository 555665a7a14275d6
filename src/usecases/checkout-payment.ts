import type { BrowserKind } from '../domain/redirection.js';
import { isPending, type Transaction } from '../domain/transaction.js';
import { outTradeNo, type PaymentFlow, type PaymentPresentation } from '../domain/channel.js';
import { formPayloadOf, transferPayloadOf } from '../ports/connector.js';
import type { Log } from '../ports/log.js';
import type { ChannelPayment } from '../ports/transactions.js';
import { openPayment, QR_REUSE_MS, queryAtProvider, servingOf } from './channels.js';
import type { GatewayContext } from './context.js';
import { applyPaymentState } from './provider-payments.js';

/** How many payments of one flow a customer may abandon and try again (capabilities.reopen): each is one at the provider. */
export const MAX_ATTEMPTS = 10;

export interface PayerReturn {
  /** Binds the provider's round trip to this visit: sent with the browser, checked when it comes back. */
  state: string;
  /** The code the provider came back with, if it has. */
  code?: string;
}

/**
 * What the hosted page offers for a pending order in this browser. The provider payment is opened
 * here, when the customer is there to pay it, and for the flow this browser can use (a QR on a
 * desktop, the provider's mobile page on a phone): an order whose page is never opened is never
 * opened at its provider. `pageUrl` is the page itself, where a provider's page sends the browser back.
 */
export async function presentPayment(
  ctx: GatewayContext,
  order: Transaction,
  browser: BrowserKind,
  pageUrl: string,
  payerReturn?: PayerReturn,
): Promise<PaymentPresentation> {
  if (!isPending(order)) return { kind: 'instructions' };
  const served = await servingOf(ctx, order);
  if (!served.ok) return unavailable(ctx, order, served.reason);
  const { connector, account } = served.serving;
  if (connector.local) return { kind: 'sandbox', url: order.qr_code_url ?? '' };
  let flow = connector.capabilities.hostedFlow(order.payment_method, browser, order.present_qr === '1', account);
  if (flow === 'instructions') return { kind: 'instructions' };
  let payer: string | undefined;
  if (flow === 'jsapi') {
    const identity = connector.payerIdentity;
    // Shown to the browser: what is on disk.
    const known = (await ctx.store.transactions.findPayment(outTradeNo(order.order_id, 'jsapi'), 'durable'))?.payment;
    // Shown again (a reload): the sheet's parameters, while they are fresh.
    if (known?.state === 'open' && known.payload !== null && known.updated_at > ctx.now() - QR_REUSE_MS) {
      return { kind: 'jsapi', params: JSON.parse(known.payload) as Record<string, string> };
    }
    if (known?.payer) {
      // Opened for this payer before (later, or without an answer): asked again for the same payer, no round trip.
      payer = known.payer;
    } else if (!identity || !payerReturn) {
      flow = 'qr';
    } else if (payerReturn.code === undefined) {
      return { kind: 'authorize', url: identity.authorizeUrl(account, pageUrl, payerReturn.state) };
    } else {
      const found = await identity.payerFromCode(account, payerReturn.code);
      if (!found.ok)
        return unavailable(ctx, order, `${connector.provider} did not identify the payer: ${found.reason}`);
      payer = found.payer;
    }
  }
  // A provider whose customer can abandon a payment (cancel at their bank) is asked for another
  // attempt once the last has ended unpaid; until then, the last one is shown again.
  let attempt = 1;
  if (connector.capabilities.reopen) {
    const last = lastAttempt(await ctx.store.transactions.listPayments(order.order_id), flow);
    attempt = last ? (last.state === 'closed' ? last.attempt + 1 : last.attempt) : 1;
    if (attempt > MAX_ATTEMPTS)
      return unavailable(
        ctx,
        order,
        `the customer has abandoned ${MAX_ATTEMPTS} payments of this order at ${connector.provider}`,
      );
  }
  const opened = await openPayment(ctx, order, served.serving, flow, {
    return_url: pageUrl,
    attempt,
    ...(payer !== undefined && { payer }),
  });
  if (opened.kind !== 'opened')
    return unavailable(
      ctx,
      order,
      `${connector.provider} ${opened.kind === 'refused' ? 'refused' : 'did not answer'}: ${opened.reason}`,
    );
  const payload = opened.payment.payload!;
  switch (flow) {
    case 'qr':
      return { kind: 'qr', text: payload };
    case 'redirect':
      return { kind: 'redirect', url: payload, ...(attempt > 1 && { again: true }) };
    case 'jsapi':
      return { kind: 'jsapi', params: JSON.parse(payload) as Record<string, string> };
    case 'form': {
      const form = formPayloadOf(payload);
      return form
        ? { kind: 'form', ...form, ...(attempt > 1 && { again: true }) }
        : unavailable(ctx, order, `${connector.provider} made no form to post`);
    }
    case 'transfer': {
      const transfer = transferPayloadOf(payload);
      return transfer
        ? { kind: 'transfer', ...transfer }
        : unavailable(ctx, order, `${connector.provider} answered without a PayID to pay`);
    }
  }
}

function unavailable(ctx: GatewayContext, order: Transaction, reason: string): PaymentPresentation {
  ctx.log.warn(
    { order_id: order.order_id, provider: order.channel, reason },
    'hosted page: the provider payment could not be opened',
  );
  return { kind: 'unavailable', reason };
}

function lastAttempt(payments: readonly ChannelPayment[], flow: PaymentFlow): ChannelPayment | undefined {
  return payments
    .filter((p) => p.flow === flow)
    .sort((a, b) => a.attempt - b.attempt)
    .at(-1);
}

/** How often a return from the provider asks it again about one order, per instance. */
const RETURN_ASK_MS = 3_000;
const lastAsked = new WeakMap<GatewayContext, Map<string, number>>();

/**
 * The customer's browser is back from the provider's page (POLi's `?token=`, Alipay's signed
 * return): that proves nothing, but the provider is asked now about the order's opened payments,
 * so that the page shows the outcome at once rather than when the notification or the
 * reconciliation comes. At most once every few seconds per order: a reload is not another question.
 */
export async function providerReturn(ctx: GatewayContext, order: Transaction, log: Log): Promise<void> {
  if (!isPending(order)) return;
  const now = ctx.now();
  let asked = lastAsked.get(ctx);
  if (!asked) lastAsked.set(ctx, (asked = new Map<string, number>()));
  if ((asked.get(order.order_id) ?? -Infinity) > now - RETURN_ASK_MS) return;
  if (asked.size > 10_000) for (const [k, at] of asked) if (at <= now - RETURN_ASK_MS) asked.delete(k);
  asked.set(order.order_id, now);
  const served = await servingOf(ctx, order);
  if (!served.ok || served.serving.connector.local || !served.serving.connector.capabilities.query) return;
  for (const payment of await ctx.store.transactions.listPayments(order.order_id)) {
    if (payment.state !== 'open' || payment.payload === null) continue;
    const state = await queryAtProvider(served.serving, payment);
    if (state.kind === 'unknown')
      log.warn(
        { order_id: order.order_id, out_trade_no: payment.out_trade_no, reason: state.reason },
        'return from the provider: it did not answer',
      );
    if ((await applyPaymentState(ctx, payment, state, log)) === 'paid') return;
  }
}

/**
 * A provider's page sent the browser back with a POST (UnionPay's front notification). A
 * cross-site POST carries no visit cookie, so the page's order is found by its used nonce, asked
 * about as for any return, and the browser then shown the page (a GET, with its cookie). False
 * when no page of that nonce was opened.
 */
export async function providerReturnByNonce(ctx: GatewayContext, nonce: string, log: Log): Promise<boolean> {
  const order = await ctx.store.transactions.findByUsedNonce(nonce);
  if (!order) return false;
  await providerReturn(ctx, order, log);
  return true;
}
