import type { PaymentPresentation } from '../domain/channel.js';
import { exponentOf, formatAmount, formatRate } from '../domain/money.js';
import type { BrowserKind } from '../domain/redirection.js';
import type { User, Wallet } from '../domain/account.js';
import type { PaymentMethod, Transaction } from '../domain/transaction.js';
import type { Lang, Tr } from './checkout-i18n.js';

// What the hosted page shows, and the display formatting shared by its parts. Formatting here is
// for people (grouped digits, currency symbols); the wire formats live in src/domain.

export interface CheckoutView {
  t: Transaction;
  user: User;
  wallet: Wallet;
  nonce: string;
  browser: BrowserKind;
  /** Served by the sandbox: the page links the sandbox payment app and simulated bank details. */
  sandbox: boolean;
  /** What the order's provider offers this browser (checkout-payment.ts); only for a pending order. */
  payment: PaymentPresentation;
  /** Set once the order is final and the redirection rules send this browser back to the merchant. */
  redirect_url: string | null;
  /** The page's language, and its strings. */
  lang: Lang;
  tr: Tr;
}

/** The order's payment method as the page's language names it. */
export function methodName(view: Pick<CheckoutView, 't' | 'tr'>): string {
  return view.tr(`method.${view.t.payment_method}`);
}

export const METHOD_NAMES: Readonly<Record<PaymentMethod, string>> = {
  wechat: 'WeChat Pay',
  alipay: 'Alipay',
  polipay: 'POLi',
  payid: 'PayID',
  upi_upop: 'UnionPay Online',
  moneymore: 'MoneyMore',
  coin_payments: 'CoinPayments',
};

const SYMBOLS: Readonly<Record<string, string>> = {
  NZD: 'NZ$',
  AUD: 'A$',
  CNY: '¥',
  USD: 'US$',
  EUR: '€',
  GBP: '£',
  HKD: 'HK$',
  SGD: 'S$',
  CAD: 'C$',
  JPY: '¥',
};

/** 1234567 minor NZD -> "NZ$12,345.67". */
export function displayMoney(minor: number, currency: string): string {
  const [whole = '0', frac] = formatAmount(minor, exponentOf(currency)).split('.');
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${SYMBOLS[currency] ?? `${currency} `}${grouped}${frac !== undefined ? `.${frac}` : ''}`;
}

/** Rate in millionths -> "4.6443" (at least 2 decimals, no trailing zeros beyond). */
export function displayRate(micros: number): string {
  return formatRate(micros, 6).replace(/(\.\d\d\d*?)0+$/, '$1');
}

/** The wire amount, "120.00", as the customer must type it for a transfer. */
export function plainAmount(t: Transaction): string {
  return formatAmount(t.amount, exponentOf(t.currency));
}

export function pagePath(nonce: string): string {
  return `/v2/checkout/${nonce}`;
}

/** Two letters for the merchant's avatar: "Otago Wines" -> "OW". */
export function initials(name: string): string {
  const words = name
    .trim()
    .split(/\s+/)
    .filter((w) => /\p{L}|\p{N}/u.test(w));
  const letters = words.length >= 2 ? [words[0], words[1]].map((w) => [...w][0]) : [...(words[0] ?? '?')].slice(0, 2);
  return letters.join('').toUpperCase();
}

/** The sandbox payment app's address for the order, or '' when a real provider serves it. */
export function sandboxUrl(view: CheckoutView): string {
  return view.payment.kind === 'sandbox' ? view.payment.url : '';
}

/**
 * Where the pay button and the bank forms go: the provider's page, or the sandbox payment app,
 * which is told to come back to this page afterwards, as a real bank returns the browser to the gateway.
 */
export function channelUrl(view: CheckoutView, extra: Record<string, string> = {}): string {
  if (view.payment.kind === 'redirect') return view.payment.url;
  const url = sandboxUrl(view);
  const query = new URLSearchParams({ ...extra, return_to: pagePath(view.nonce) }).toString();
  return `${url}${url.includes('?') ? '&' : '?'}${query}`;
}
