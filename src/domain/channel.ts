// The rules of moving an order's money through a payment provider that need no provider: which
// provider payment (out_trade_no) a flow uses, what it charges, how much of it a refund gives
// back, when to ask a provider again about a payment whose notification has not come.
import { proRata } from './money.js';

/** A payment provider's name: `sandbox`, or the name of a connector's descriptor (connectors/registry.ts). */
export type ProviderName = string;

/** Where a provider sends its notifications: the address an operator gives the provider. */
export function notifyAddress(publicUrl: string, provider: ProviderName): string {
  return `${publicUrl.replace(/\/+$/, '')}/channels/${provider}/notify`;
}

/**
 * How the customer pays one provider payment: a QR code to scan (its text), a page of the
 * provider's to send the browser to (its URL), or WeChat's in-app payment sheet (JSAPI parameters).
 */
export const PAYMENT_FLOWS = ['qr', 'redirect', 'jsapi', 'transfer', 'form'] as const;
export type PaymentFlow = (typeof PAYMENT_FLOWS)[number];

/**
 * The provider's id of the order's payment for a flow. Each flow is a payment of its own at the
 * provider (WeChat Pay refuses the same out_trade_no for another trade type), so each has its own
 * id: the order_id for the QR, with a letter after it for the others. Both providers take up to 32
 * letters and digits; an order_id is 16 digits.
 */
export function outTradeNo(order_id: string, flow: PaymentFlow, attempt = 1): string {
  // A later attempt of a flow (a customer trying again after abandoning one at their bank): its number after the letter.
  const n = attempt > 1 ? String(attempt) : '';
  switch (flow) {
    case 'qr':
      return attempt > 1 ? `${order_id}Q${n}` : order_id;
    case 'redirect':
      return `${order_id}R${n}`;
    case 'jsapi':
      return `${order_id}J${n}`;
    case 'transfer':
      return `${order_id}T${n}`;
    case 'form':
      return `${order_id}F${n}`;
  }
}

/** domestic: charge amount_cny in CNY; cross-border: charge the order's amount in its own currency. */
export const CURRENCY_MODES = ['domestic', 'cross-border'] as const;
export type CurrencyMode = (typeof CURRENCY_MODES)[number];

/** What a provider payment charges: the amount in minor units of `currency`. */
export interface Charge {
  amount: number;
  currency: string;
}

/**
 * What the order's provider payment charges under a currency mode; undefined when a domestic
 * account cannot charge it (no CNY amount: no rate from the order's currency to CNY).
 */
export function chargeOf(
  order: { amount: number; currency: string; amount_cny: number | null },
  mode: CurrencyMode,
): Charge | undefined {
  if (mode === 'cross-border' || order.currency === 'CNY') return { amount: order.amount, currency: order.currency };
  return order.amount_cny === null || order.amount_cny <= 0 ? undefined : { amount: order.amount_cny, currency: 'CNY' };
}

/**
 * The part of the charge a refund gives back, in the charge's minor units. Refunds are mapped by
 * their running total, so that partial refunds add up to the charge exactly when the order is
 * refunded in full: the charge's share of (before + amount) less its share of `before`, each
 * rounded half up. `before` is what earlier standing refunds of the order took, in the order's units.
 */
export function channelRefundAmount(order: { amount: number }, charge: Charge, before: number, amount: number): number {
  if (order.amount === charge.amount) return amount;
  return proRata(before + amount, order.amount, charge.amount) - proRata(before, order.amount, charge.amount);
}

/**
 * When to ask the provider about an open payment again, `age` after it was opened: after
 * `firstAfter`, then less often as it ages (a customer pays within minutes or not at all), at
 * most once an hour.
 */
export function nextCheckDelay(age: number, firstAfter: number): number {
  if (age < 10 * 60_000) return firstAfter;
  if (age < 60 * 60_000) return Math.max(firstAfter, 5 * 60_000);
  return Math.max(firstAfter, 60 * 60_000);
}

/** What the hosted page offers the customer for the order's provider payment. */
export type PaymentPresentation =
  /** The sandbox's payment app (the page of this gateway that stands in for the customer's phone or bank). */
  | { kind: 'sandbox'; url: string }
  /** A QR code to scan with the wallet app: its text. */
  | { kind: 'qr'; text: string }
  /** The provider's page to send the browser to; `again` when the customer abandoned an earlier one. */
  | { kind: 'redirect'; url: string; again?: boolean }
  /** A form the browser posts to the provider's cashier (UnionPay's signed consume): its address and fields. */
  | { kind: 'form'; action: string; fields: Readonly<Record<string, string>>; again?: boolean }
  /** A transfer from the customer's banking app to a PayID made for this payment, before it expires (epoch ms). */
  | { kind: 'transfer'; payId: string; expiresAt: number }
  /** WeChat's in-app payment sheet: the parameters of WeixinJSBridge's getBrandWCPayRequest. */
  | { kind: 'jsapi'; params: Readonly<Record<string, string>> }
  /** The browser goes to the provider first, to identify the payer (WeChat's OAuth for JSAPI), and comes back to the page. */
  | { kind: 'authorize'; url: string }
  /** Nothing to open here: the page tells the customer where to pay (WeChat Pay on a desktop without present_qr; Alipay inside WeChat). */
  | { kind: 'instructions' }
  /** The provider refused or could not be reached: the customer is asked to try again in a moment. */
  | { kind: 'unavailable'; reason: string };
