import type { InboundNotification, NotificationReply, ProviderName } from '../ports/connector.js';
import type { Log } from '../ports/log.js';
import { notifyUrl, queryAtProvider, servingOf } from './channels.js';
import type { GatewayContext } from './context.js';
import { applyPaymentState } from './provider-payments.js';

/**
 * A provider's asynchronous notification (POST /channels/{provider}/notify): verified by the
 * connector with the keys of the provider's accounts, matched to the payment by out_trade_no and
 * to the account the order is served by, then settled through the same path as everything else.
 * Answered in the provider's own format: taken, or to be sent again. A notification of an
 * out_trade_no the gateway did not open (the merchant account may serve other systems too) is
 * taken and ignored.
 */
export async function receiveProviderNotification(
  ctx: GatewayContext,
  provider: ProviderName,
  inbound: InboundNotification,
  log: Log,
): Promise<NotificationReply> {
  const connector = ctx.connectors[provider];
  const read = await connector.readNotification(
    { ...inbound, url: notifyUrl(ctx, provider) },
    await ctx.credentials.channelAccountsOf(provider),
  );
  if (read.kind === 'refused') {
    log.warn({ provider, reason: read.reason }, 'provider notification refused');
    return connector.notificationReply(false);
  }
  if (read.kind === 'ignored') {
    log.info({ provider, reason: read.reason }, 'provider notification taken, nothing to do');
    return connector.notificationReply(true);
  }
  const { event } = read;
  const fields = { provider, out_trade_no: event.out_trade_no, state: event.state.kind };
  // What is committed is enough (ReadConsistency): what is read is acted on only through writes of
  // the store, each answered once it is on disk (which covers what was read); the answers that
  // write nothing do not rest on it being on disk.
  const found = await ctx.store.transactions.findPayment(event.out_trade_no, 'committed');
  const payment = found?.payment;
  const order = found?.order;
  if (!payment || !order || payment.provider !== provider) {
    log.warn(fields, 'provider notification of a payment the gateway did not open: taken, ignored');
    return connector.notificationReply(true);
  }
  const served = await servingOf(ctx, order);
  if (!served.ok || connector.merchantId(served.serving.account) !== connector.merchantId(event.account)) {
    log.error(
      {
        ...fields,
        order_id: order.order_id,
        reason: served.ok ? "signed for another merchant account than the order's" : served.reason,
      },
      'provider notification refused',
    );
    return connector.notificationReply(false);
  }
  let state = event.state;
  if (state.kind === 'unknown' && connector.capabilities.query) {
    // A notification the connector could not read in full (a status it does not know, a currency
    // it does not name) is a prompt: the provider is asked now, as reconciliation would ask later.
    log.info(
      { ...fields, order_id: order.order_id, reason: state.reason },
      'provider notification unclear: asking the provider',
    );
    state = await queryAtProvider(served.serving, payment);
  }
  const verdict = await applyPaymentState(ctx, payment, state, log, order);
  // A mismatched amount is not taken: the provider keeps sending it while an operator looks; nor
  // is one still unclear, so that it comes again.
  return connector.notificationReply(verdict !== 'mismatch' && state.kind !== 'unknown');
}
