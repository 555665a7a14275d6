import {
  chargeOf,
  notifyAddress,
  outTradeNo,
  type Charge,
  type CurrencyMode,
  type PaymentFlow,
} from '../domain/channel.js';
import type { PaymentMethod, Transaction } from '../domain/transaction.js';
import {
  NotSent,
  type ChannelAccount,
  type CloseOutcome,
  type Connector,
  type OpenOutcome,
  type PaymentState,
  type ProviderName,
} from '../ports/connector.js';
import type { ChannelPayment, NewChannelPayment } from '../ports/transactions.js';
import { fail } from '../domain/errors.js';
import type { GatewayContext } from './context.js';

// The registry: which connector serves a wallet's payment method, and the payments the gateway
// opens at a provider for an order. A wallet's channel account for a method names its provider,
// in both modes; a method without one is served by the sandbox in sandbox mode and by nobody in
// live mode. An order keeps the provider it was created with (its `channel`).

export interface Serving {
  connector: Connector;
  account: ChannelAccount;
}

/** A stored QR is shown again for this long; after that the provider is asked again (a WeChat Pay code_url lives 2 hours). */
export const QR_REUSE_MS = 60 * 60 * 1000;
/** A payment is not opened for an order this close to its end (a minute, or a tenth of a short life): the customer could not finish it. */
const lastOpenMs = (ctx: GatewayContext) => Math.min(60_000, ctx.config.orderExpiryMs / 10);

function sandboxAccount(wallet_id: string, payment_method: PaymentMethod): ChannelAccount {
  return { wallet_id, payment_method, provider: 'sandbox', config: {}, secrets: {} };
}

/** Who serves a new order of the wallet's method; undefined in live mode for a method without a channel account. */
export async function servingFor(
  ctx: GatewayContext,
  wallet_id: string,
  method: PaymentMethod,
): Promise<Serving | undefined> {
  const account = await ctx.credentials.channelAccount(wallet_id, method);
  // An account of a provider this gateway does not have (its line taken out of the registry) serves nothing.
  const connector = account && connectorNamed(ctx, account.provider);
  if (account && connector) return { connector, account };
  if (ctx.config.mode === 'sandbox')
    return { connector: ctx.connectors.sandbox, account: sandboxAccount(wallet_id, method) };
  return undefined;
}

export type OrderServing = { ok: true; serving: Serving } | { ok: false; reason: string };

/** Who serves an existing order: its provider, through the wallet's account with that provider now. */
export async function servingOf(ctx: GatewayContext, order: Transaction): Promise<OrderServing> {
  const provider = order.channel;
  if (provider === 'sandbox')
    return {
      ok: true,
      serving: { connector: ctx.connectors.sandbox, account: sandboxAccount(order.wallet_id, order.payment_method) },
    };
  const account = await ctx.credentials.channelAccount(order.wallet_id, order.payment_method);
  if (!account || account.provider !== provider) {
    return {
      ok: false,
      reason: `wallet ${order.wallet_id} no longer has an account with ${provider} for ${order.payment_method} (gateway channel list)`,
    };
  }
  const connector = connectorNamed(ctx, provider);
  if (!connector) return { ok: false, reason: `this gateway has no provider ${provider}` };
  return { ok: true, serving: { connector, account } };
}

function connectorNamed(ctx: GatewayContext, provider: string): Connector | undefined {
  return Object.hasOwn(ctx.connectors, provider) ? ctx.connectors[provider] : undefined;
}

export function currencyModeOf(account: ChannelAccount): CurrencyMode {
  // The sandbox charges what the merchant asked for.
  if (account.provider === 'sandbox') return 'cross-border';
  return account.config.currency_mode === 'cross-border' ? 'cross-border' : 'domestic';
}

export function chargeFor(
  order: Pick<Transaction, 'amount' | 'currency' | 'amount_cny'>,
  account: ChannelAccount,
): Charge | undefined {
  return chargeOf(order, currencyModeOf(account));
}

/** Closes a payment at its provider; a throw is an unknown outcome, a connector that cannot close refuses. */
export function closeAtProvider({ connector, account }: Serving, out_trade_no: string): Promise<CloseOutcome> {
  if (!connector.capabilities.close)
    return Promise.resolve({ kind: 'refused', reason: `${connector.provider} payments cannot be closed` });
  return connector
    .close(account, out_trade_no)
    .catch((e: unknown): CloseOutcome => ({ kind: 'unknown', reason: String(e) }));
}

/** What the provider says of a payment (the caller checked capabilities.query); a throw is an unknown answer. */
export function queryAtProvider(
  { connector, account }: Serving,
  payment: Pick<ChannelPayment, 'out_trade_no' | 'payload'>,
): Promise<PaymentState> {
  return connector
    .query(account, payment.out_trade_no, { payload: payment.payload })
    .catch((e: unknown): PaymentState => ({ kind: 'unknown', reason: String(e) }));
}

/** The address a provider sends its notifications to. */
export function notifyUrl(ctx: GatewayContext, provider: ProviderName): string {
  return notifyAddress(ctx.config.publicUrl, provider);
}

/** When the order stops being payable: its provider payments expire then, and the expiry job ends it. */
export function orderEndsAt(ctx: GatewayContext, order: Pick<Transaction, 'created_at'>): number {
  return order.created_at + ctx.config.orderExpiryMs;
}

export type OpenResult =
  | { kind: 'opened'; payment: ChannelPayment }
  | { kind: 'refused'; reason: string }
  | { kind: 'unknown'; reason: string };

export interface OpenOptions {
  /** Where a redirect flow sends the browser back to (the hosted page). */
  return_url?: string;
  /** JSAPI: the payer's openid. */
  payer?: string;
  /** Which payment of the flow: a later one after the customer abandoned the last (capabilities.reopen). */
  attempt?: number;
  /** Ask the provider even if a QR was stored recently (a merchant-hosted create wants a fresh one). */
  fresh?: boolean;
  /** The QR's text is also the order's qr_code_url (merchant-hosted), stored in the same write. */
  orderQr?: boolean;
  /** The payment as recorded with its new order (newPayment, TransactionsRepo.insert): not recorded again. */
  recorded?: NewChannelPayment;
  /**
   * With `recorded`, while that write is still running: the provider's request is signed at once
   * and sent once this resolves true (the order and its payment are stored); false sends nothing.
   */
  sendWhen?: Promise<boolean>;
}

export type NewPayment = { kind: 'new'; payment: NewChannelPayment } | { kind: 'refused'; reason: string };

/** The provider payment to record before asking the provider to open it, or why none can be opened now. */
export function newPayment(
  ctx: GatewayContext,
  order: Transaction,
  serving: Serving,
  flow: PaymentFlow,
  payer?: string,
  attempt = 1,
): NewPayment {
  const charge = chargeFor(order, serving.account);
  if (!charge)
    return {
      kind: 'refused',
      reason: `no CNY amount for this ${order.currency} order (no ${order.currency}/CNY rate was set when it was created)`,
    };
  const now = ctx.now();
  if (now >= orderEndsAt(ctx, order) - lastOpenMs(ctx))
    return { kind: 'refused', reason: 'the order has reached the end of its life' };
  return {
    kind: 'new',
    payment: {
      out_trade_no: outTradeNo(order.order_id, flow, attempt),
      order_id: order.order_id,
      provider: serving.connector.provider,
      flow,
      attempt,
      charged_amount: charge.amount,
      charged_currency: charge.currency,
      description: order.product_name,
      client_ip: order.ip,
      payer: payer ?? null,
      created_at: now,
      updated_at: now,
      next_check_at: now + ctx.config.channelReconcileAfterMs,
    },
  };
}

/**
 * Opens the order's provider payment for a flow, or finds the one opened before. The payment is
 * recorded before the provider is asked, so that one the provider opened is known (to the
 * reconciliation, to expiry) even if the gateway stops before the answer; asking again uses the
 * same out_trade_no and the same charge, which the providers treat as the same payment.
 */
export async function openPayment(
  ctx: GatewayContext,
  order: Transaction,
  serving: Serving,
  flow: PaymentFlow,
  options: OpenOptions = {},
): Promise<OpenResult> {
  const { connector, account } = serving;
  const now = ctx.now();
  const expires_at = orderEndsAt(ctx, order);
  let payment: ChannelPayment;
  if (options.recorded) {
    // Recorded with its order, as addPayment would have returned it.
    payment = { ...options.recorded, payload: null, state: 'open', provider_ref: null, check_claimed_until: null };
  } else {
    const planned = newPayment(ctx, order, serving, flow, options.payer, options.attempt);
    if (planned.kind === 'refused') return planned;
    payment = await ctx.store.transactions.addPayment(planned.payment);
  }
  if (payment.state !== 'open')
    return { kind: 'refused', reason: `the ${flow} payment of this order is ${payment.state}` };
  if (flow === 'qr' && !options.fresh && payment.payload !== null && payment.updated_at > now - QR_REUSE_MS)
    return { kind: 'opened', payment };
  // A provider that makes a new payment each time it is asked: the one it made stands while it is open.
  if (connector.capabilities.openOnce && payment.payload !== null) return { kind: 'opened', payment };
  const outcome = await connector
    .open(account, {
      out_trade_no: payment.out_trade_no,
      flow,
      // As recorded the first time: asking again must not change the payment.
      charge: { amount: payment.charged_amount, currency: payment.charged_currency },
      description: payment.description ?? order.product_name,
      expires_at,
      notify_url: notifyUrl(ctx, connector.provider),
      return_url: options.return_url ?? ctx.config.publicUrl,
      client_ip: payment.client_ip ?? order.ip,
      ...((payment.payer ?? options.payer) !== undefined && { payer: (payment.payer ?? options.payer)! }),
      ...(options.sendWhen && { sendWhen: options.sendWhen }),
    })
    .catch((e: unknown): OpenOutcome => {
      if (e instanceof NotSent) return { kind: 'refused', reason: e.message };
      throw e;
    });
  if (outcome.kind !== 'opened') return outcome;
  if (
    !(await ctx.store.transactions.setPaymentPayload(payment, outcome.payload, ctx.now(), options.orderQr === true))
  ) {
    // Closed while the provider was opening it (a cancel found nothing to close yet): close what
    // the provider has just made, and show nothing that could still be paid.
    const closed = await closeAtProvider(serving, payment.out_trade_no);
    ctx.log.warn(
      { order_id: order.order_id, out_trade_no: payment.out_trade_no, close: closed.kind },
      'provider payment closed while it was being opened: closed again at the provider',
    );
    return { kind: 'refused', reason: `the ${flow} payment of this order was closed while it was being opened` };
  }
  return { kind: 'opened', payment: { ...payment, payload: outcome.payload, updated_at: ctx.now() } };
}

/** A merchant-hosted order's QR at its provider: the payment opened (or found) for the QR flow, its text also the order's qr_code_url. */
export async function openMerchantHostedQr(
  ctx: GatewayContext,
  order: Transaction,
  options: Pick<OpenOptions, 'fresh'> = {},
): Promise<OpenResult> {
  const of = await servingOf(ctx, order);
  if (!of.ok) fail(302, of.reason);
  return openPayment(ctx, order, of.serving, 'qr', { ...options, orderQr: true });
}

/**
 * The QR text of an opened payment. When the provider refused or could not be reached, the order
 * stays pending without a QR and the merchant is told to create it again with the same
 * merchant_reference (which asks the provider again).
 */
export function qrOf(order: Transaction, opened: OpenResult): string {
  if (opened.kind === 'opened') return opened.payment.payload!;
  const why =
    opened.kind === 'unknown' ? `could not be reached (${opened.reason})` : `refused the payment (${opened.reason})`;
  fail(
    1,
    `${order.channel} ${why}; nothing was charged: create the transaction again with the same merchant_reference`,
  );
}
