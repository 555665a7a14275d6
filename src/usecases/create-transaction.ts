import { fail } from '../domain/errors.js';
import { convertAmount, exponentOf, parseAmount } from '../domain/money.js';
import { createResponseSignature, legacyCreateMessage, requestMessageCandidates } from '../domain/signing.js';
import { formatOrderId } from '../domain/time.js';
import { walletAccepts, type Wallet } from '../domain/account.js';
import {
  MERCHANT_HOSTED_METHODS,
  endedCode,
  isFinal,
  paymentMethodNamed,
  type HostType,
  type PaymentMethod,
  type Transaction,
} from '../domain/transaction.js';
import { redactCallbackUrl } from '../domain/callback-url.js';
import type { Nonce, PendingRenewal } from '../ports/transactions.js';
import { requireActiveUser, requireUserWallet } from './authenticate.js';
import type { GatewayContext } from './context.js';
import { requireWithinLimits } from './books.js';
import { requireFeePlan } from './fee-plans.js';
import { chargeFor, newPayment, openMerchantHostedQr, openPayment, orderEndsAt, qrOf, servingFor } from './channels.js';
import { orderNonce } from './random-pool.js';

/** The creation request after schema validation: every value is the text the client sent. */
export interface CreateRequest {
  user_id: string;
  wallet_id: string;
  payment_method: string;
  amount: string;
  return_url: string;
  callback_url: string;
  backPage_url?: string;
  merchant_reference: string;
  ip: string;
  version: string;
  product_name: string;
  signature: string;
  host_type?: string;
  present_qr?: string;
  /** Fields the schema does not name are still part of the signed message. */
  [extra: string]: string | undefined;
}

export interface CreateResponse {
  code: 0;
  message: 'SUCCESS';
  host_url: string;
  nonce: string;
  signature: string;
}

export function hostUrlFor(ctx: GatewayContext, host_type: HostType): string {
  return host_type === 1
    ? `${ctx.config.publicUrl}/v2/merchanthosted/gatewaydata`
    : `${ctx.config.publicUrl}/v2/checkout`;
}

export async function createTransaction(ctx: GatewayContext, req: CreateRequest): Promise<CreateResponse> {
  const user = await requireActiveUser(ctx, req.user_id);
  const wallet = await requireUserWallet(ctx, user.user_id, req.wallet_id, {
    signature: req.signature,
    messagesFor: (w, key) => createMessageCandidates(req, w, key),
  });

  const host_type: HostType = req.host_type === '1' ? 1 : 0;
  const payment_method = checkPaymentMethod(req.payment_method, host_type, wallet);
  // The spec has no currency field (the wallet's currency is used); a client that sends one anyway
  // must not be charged in another currency than it asked for.
  if (req.currency !== undefined && req.currency !== wallet.currency) {
    fail(301, `currency ${req.currency} is not the currency of wallet ${wallet.wallet_id} (${wallet.currency})`);
  }
  // The schema's pattern cannot see a port over 65535 or a malformed host; such a callback_url
  // would be stored and then fail every delivery for ever.
  for (const name of ['return_url', 'callback_url', 'backPage_url'] as const) {
    const value = req[name];
    if (value && !URL.canParse(value))
      fail(207, `${name} is not a valid URL (check its host and port): ${redactCallbackUrl(value)}`);
  }
  const exponent = exponentOf(wallet.currency);
  const parsed = parseAmount(req.amount, exponent);
  if (!parsed.ok) fail(207, `amount ${parsed.reason}`);
  if (parsed.minor === 0) fail(207, 'amount must be greater than zero');

  const now = ctx.now();
  if (ctx.config.feePlansRequired) await requireFeePlan(ctx.store, wallet.wallet_id, payment_method, now);
  await requireWithinLimits(ctx, wallet, payment_method, parsed.minor, now);
  const nonce: Omit<Nonce, 'order_id'> = {
    nonce: orderNonce(now),
    expires_at: now + ctx.config.nonceTtlMs,
    used_at: null,
    created_at: now,
    page_token_hash: null,
  };
  const respond = (): CreateResponse => {
    const host_url = hostUrlFor(ctx, host_type);
    return {
      code: 0,
      message: 'SUCCESS',
      host_url,
      nonce: nonce.nonce,
      signature: createResponseSignature(nonce.nonce, host_url, wallet.api_key),
    };
  };
  const merchantFields: PendingRenewal = {
    return_url: req.return_url,
    callback_url: req.callback_url,
    backPage_url: req.backPage_url || null,
    ip: req.ip,
    product_name: req.product_name,
    present_qr: req.present_qr || null,
    updated_at: now,
  };

  const wanted = { wallet_id: wallet.wallet_id, payment_method, amount: parsed.minor, host_type };

  const serving = await servingFor(ctx, wallet.wallet_id, payment_method);
  if (!serving) {
    // A method no provider of this gateway serves (MoneyMore publishes no protocol) is said so.
    const served = Object.values(ctx.connectors).some(
      (c) => !c.local && c.capabilities.methods.includes(payment_method),
    );
    fail(
      302,
      served
        ? `no payment provider serves ${payment_method} for wallet ${wallet.wallet_id} in live mode (an operator configures one with gateway channel set)`
        : `${payment_method} has no payment provider in this gateway: it is served in sandbox mode only (docs/providers/README.md)`,
    );
  }
  const { connector } = serving;
  if (host_type === 1 && !connector.capabilities.merchantHostedQr) {
    fail(303, `${payment_method} through ${connector.provider} is not offered for merchant-hosted QR (host_type 1)`);
  }
  const { amount_cny, currency_rate } = await convertToCny(ctx, parsed.minor, wallet.currency);
  const charge = chargeFor({ amount: parsed.minor, currency: wallet.currency, amount_cny }, serving.account);
  if (!charge) {
    fail(
      301,
      `wallet ${wallet.wallet_id}'s ${connector.provider} account charges in CNY, and there is no ${wallet.currency}/CNY rate to convert ${req.amount} ${wallet.currency} with`,
    );
  }
  // What the provider would refuse when the customer comes to pay is refused now, with its reason.
  const refused = connector.capabilities.refusesCharge?.(charge);
  if (refused !== undefined) fail(454, `${payment_method} through ${connector.provider}: ${refused}`);

  // Nothing is opened at a provider before the order exists: a merchant_reference that turns out to
  // be taken leaves nothing behind. Only the sandbox's payment is made here, and it is local.
  const order_id = formatOrderId(now, await ctx.store.transactions.nextOrderSequence());
  const local = connector.local
    ? await connector.open(serving.account, {
        out_trade_no: order_id,
        flow: 'qr',
        charge: { amount: parsed.minor, currency: wallet.currency },
        description: req.product_name,
        expires_at: now + ctx.config.orderExpiryMs,
        notify_url: '',
        return_url: ctx.config.publicUrl,
        client_ip: req.ip,
      })
    : undefined;
  const order: Transaction = {
    order_id,
    user_id: user.user_id,
    wallet_id: wallet.wallet_id,
    merchant_reference: req.merchant_reference,
    payment_method,
    host_type,
    amount: parsed.minor,
    currency: wallet.currency,
    amount_cny,
    currency_rate,
    status: 'pending',
    status_message: null,
    msgId: null,
    channel: connector.provider,
    channel_ref: null,
    qr_code_url: local?.kind === 'opened' ? local.payload : null,
    channel_state: null,
    refunded_amount: 0,
    cancel_locked_until: null,
    status_seq: 0,
    created_at: now,
    pay_time: null,
    ...merchantFields,
  };
  // A merchant-hosted QR through a provider: the payment about to be opened is recorded with the
  // order, in the same write, and the provider's request is signed while that write runs. It is
  // sent once the write is committed, while it is made durable: the merchant is answered only once
  // it is durable, so nobody can have the QR of an order a crash lost (the provider then holds an
  // opened payment nobody can pay, which expires there).
  const opening = host_type === 1 && !connector.local ? newPayment(ctx, order, serving, 'qr') : undefined;
  const recorded = opening?.kind === 'new' ? opening.payment : undefined;
  const write = ctx.store.transactions.insert(order, { ...nonce, order_id }, recorded);
  // Sent once the order is committed: a write that fails before sends nothing, one whose flush
  // fails after has sent it (docs/decisions.md) and answers an error.
  const sendWhen =
    recorded &&
    write.committed.then(
      (r) => r.created,
      () => false,
    );
  const early = recorded && openPayment(ctx, order, serving, 'qr', { fresh: true, orderQr: true, recorded, sendWhen });
  // Whatever happens below, a failure of the early open is this request's, never an unhandled one.
  early?.catch(() => {});
  const result = await write.durable;
  // The merchant_reference exists (created earlier, or by another request a moment ago): nothing
  // was inserted, and the early open sent nothing; the existing order's payment is opened instead.
  const current = result.created ? order : await renewExisting(ctx, result.existing, wanted, merchantFields, nonce);
  // The gateway data carries the provider's QR: opened now (again on a re-create: a fresh QR).
  if (opening)
    qrOf(current, result.created && early ? await early : await openMerchantHostedQr(ctx, current, { fresh: true }));
  return respond();
}

/** The messages a create may be signed over with this wallet's key: the spec's, and the legacy one where the wallet allows it. */
function createMessageCandidates(req: CreateRequest, wallet: Wallet, apiKey: string): string[] {
  const candidates = requestMessageCandidates(req, apiKey);
  if (wallet.legacy_signatures === 1) candidates.push(legacyCreateMessage(req));
  return candidates;
}

function checkPaymentMethod(given: string, host_type: HostType, wallet: Wallet): PaymentMethod {
  const value = paymentMethodNamed(given);
  if (value === undefined)
    fail(
      303,
      `payment_method ${given} is not one of wechat, alipay, moneymore, polipay, payid, upi_upop, coin_payments`,
    );
  if (host_type === 1 && !MERCHANT_HOSTED_METHODS.includes(value)) {
    fail(303, `payment_method ${value} is not offered for merchant-hosted QR (host_type 1): use alipay or wechat`);
  }
  if (!walletAccepts(wallet, value)) fail(304, `wallet ${wallet.wallet_id} does not accept ${value}`);
  return value;
}

/** A merchant_reference may be created again while pending (a fresh nonce); a finished order may not. */
async function renewExisting(
  ctx: GatewayContext,
  existing: Transaction,
  wanted: Pick<Transaction, 'wallet_id' | 'payment_method' | 'amount' | 'host_type'>,
  merchantFields: PendingRenewal,
  nonce: Omit<Nonce, 'order_id'>,
): Promise<Transaction> {
  refuseIfEnded(existing);
  if (ctx.now() >= orderEndsAt(ctx, existing)) {
    fail(
      901,
      `merchant_reference ${existing.merchant_reference} has reached the end of its life unpaid (order ${existing.order_id}); use a new merchant_reference`,
    );
  }
  for (const key of ['wallet_id', 'payment_method', 'amount', 'host_type'] as const) {
    if (existing[key] !== wanted[key]) {
      fail(
        3,
        `merchant_reference ${existing.merchant_reference} is already used by a pending order with a different ${key}`,
      );
    }
  }
  const renewed = await ctx.store.transactions.renewPending(existing.order_id, merchantFields, {
    ...nonce,
    order_id: existing.order_id,
  });
  if (!renewed) {
    // It ended between the read and the renewal.
    const now = await ctx.store.transactions.find(existing.order_id);
    if (now) refuseIfEnded(now);
    fail(
      901,
      `merchant_reference ${existing.merchant_reference} has ended (order ${existing.order_id}); use a new merchant_reference`,
    );
  }
  return existing;
}

/** 900 for a paid order, 901 for one that ended otherwise: a finished merchant_reference is not created again. */
function refuseIfEnded(t: Transaction): void {
  const status = t.status;
  if (!isFinal(status)) return;
  if (endedCode(status) === 900)
    fail(900, `merchant_reference ${t.merchant_reference} is already paid (order ${t.order_id})`);
  fail(
    901,
    `merchant_reference ${t.merchant_reference} has ended as ${status} (order ${t.order_id}); use a new merchant_reference`,
  );
}

async function convertToCny(
  ctx: GatewayContext,
  minor: number,
  currency: string,
): Promise<{ amount_cny: number | null; currency_rate: number | null }> {
  if (currency === 'CNY') return { amount_cny: minor, currency_rate: 1_000_000 };
  const rate = await ctx.credentials.rate(currency, 'CNY');
  if (rate === undefined) return { amount_cny: null, currency_rate: null };
  return { amount_cny: convertAmount(minor, exponentOf(currency), rate, exponentOf('CNY')), currency_rate: rate };
}
