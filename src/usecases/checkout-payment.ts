import type { BrowserKind } from '../domain/redirection.js';
import { isPending, type Transaction } from '../domain/transaction.js';
import { outTradeNo, type PaymentPresentation } from '../domain/channel.js';
import { openPayment, QR_REUSE_MS, servingOf } from './channels.js';
import type { GatewayContext } from './context.js';

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
  const opened = await openPayment(ctx, order, served.serving, flow, {
    return_url: pageUrl,
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
      return { kind: 'redirect', url: payload };
    case 'jsapi':
      return { kind: 'jsapi', params: JSON.parse(payload) as Record<string, string> };
  }
}

function unavailable(ctx: GatewayContext, order: Transaction, reason: string): PaymentPresentation {
  ctx.log.warn(
    { order_id: order.order_id, provider: order.channel, reason },
    'hosted page: the provider payment could not be opened',
  );
  return { kind: 'unavailable', reason };
}
