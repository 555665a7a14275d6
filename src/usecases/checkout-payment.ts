import type { PaymentPresentation } from '../domain/channel.js';
import type { BrowserKind } from '../domain/redirection.js';
import { isPending, type Transaction } from '../domain/transaction.js';
import { openPayment, servingOf } from './channels.js';
import type { GatewayContext } from './context.js';

/**
 * What the hosted page offers for a pending order in this browser. The provider payment is opened
 * here, when the customer is there to pay it, and for the flow this browser can use (a QR on a
 * desktop, the provider's mobile page on a phone): an order whose page is never opened is never
 * opened at its provider. `pageUrl` is the page itself, where a provider's page sends the browser back.
 */
export async function presentPayment(ctx: GatewayContext, order: Transaction, browser: BrowserKind, pageUrl: string): Promise<PaymentPresentation> {
  if (!isPending(order)) return { kind: 'instructions' };
  const served = await servingOf(ctx, order);
  if (!served.ok) return unavailable(ctx, order, served.reason);
  const { connector, account } = served.serving;
  if (connector.local) return { kind: 'sandbox', url: order.qr_code_url ?? '' };
  const flow = connector.capabilities.hostedFlow(order.payment_method, browser, order.present_qr === '1', account);
  if (flow === 'instructions') return { kind: 'instructions' };
  const opened = await openPayment(ctx, order, served.serving, flow, { return_url: pageUrl });
  if (opened.kind !== 'opened') return unavailable(ctx, order, `${connector.provider} ${opened.kind === 'refused' ? 'refused' : 'did not answer'}: ${opened.reason}`);
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
  ctx.log.warn({ order_id: order.order_id, provider: order.channel, reason }, 'hosted page: the provider payment could not be opened');
  return { kind: 'unavailable', reason };
}
