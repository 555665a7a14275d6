import { asciiUrl } from './ascii-url.js';
import { exponentOf, formatAmount } from './money.js';
import { resultSignature } from './signing.js';
import type { Status } from './transaction.js';

// The spec's result redirection (Events, "Rules for the redirection"): which browsers are sent
// back to return_url, with which status, and how the signed query string is built.

/**
 * What kind of browser the customer uses, told apart by the User-Agent header alone:
 * - `wechat`: the WeChat in-app browser (and WeChat's desktop client), whose UA contains `MicroMessenger/`;
 * - `alipay`: the Alipay app's in-app browser, `AlipayClient/`;
 * - `mobile`: any other phone or tablet browser (`Mobi`, `Android`, `iPhone`, `iPad`, `iPod`, `HarmonyOS`, ...);
 * - `desktop`: everything else, including an empty UA. iPadOS 13+ Safari announces itself as a Mac
 *   and therefore counts as desktop, as it does for every server-side check.
 */
export type BrowserKind = 'wechat' | 'alipay' | 'mobile' | 'desktop';

export function browserOf(userAgent: string | undefined): BrowserKind {
  const ua = userAgent ?? '';
  if (/MicroMessenger\//i.test(ua)) return 'wechat';
  if (/AlipayClient\//i.test(ua)) return 'alipay';
  if (/Mobi|Android|iPhone|iPad|iPod|HarmonyOS|Windows Phone|BlackBerry|Opera Mini/i.test(ua)) return 'mobile';
  return 'desktop';
}

export const ONLINE_BANK_METHODS = ['polipay', 'moneymore', 'payid', 'upi_upop', 'coin_payments'] as const;

/** The redirection's payment_method: the bank/transfer methods are all `onlineBank`. */
export function redirectionMethod(payment_method: string): 'wechat' | 'alipay' | 'onlineBank' {
  if (payment_method === 'wechat' || payment_method === 'alipay') return payment_method;
  return 'onlineBank';
}

export type RedirectionStatus = 'paid' | 'cancel_or_fail';

/**
 * The status to redirect with, or null when this browser is not redirected for this outcome.
 * - wechat: only in the WeChat in-app browser; paid → `paid`, failed/canceled → `cancel_or_fail`.
 * - alipay: only in a desktop browser (not a phone, not the Alipay app); only when paid, since
 *   the spec reserves `cancel_or_fail` for wechat.
 * - onlineBank: in every browser. Paid → `paid`; failed, rejected or canceled → `cancel_or_fail`
 *   (a decision: the customer did the whole bank flow in this window and return_url is the landing
 *   page "after payment (success or failure)"; `cancel_or_fail` is the only non-paid redirection
 *   status a merchant's handler knows, and it can never be mistaken for paid).
 * A pending order is never redirected.
 */
export function redirectionStatus(
  payment_method: string,
  status: Status,
  browser: BrowserKind,
): RedirectionStatus | null {
  let outcome: RedirectionStatus;
  switch (status) {
    case 'pending':
      return null;
    case 'paid':
      outcome = 'paid';
      break;
    case 'failed':
    case 'rejected':
    case 'canceled':
      outcome = 'cancel_or_fail';
      break;
  }
  switch (redirectionMethod(payment_method)) {
    case 'wechat':
      return browser === 'wechat' ? outcome : null;
    case 'alipay':
      return browser === 'desktop' && outcome === 'paid' ? outcome : null;
    case 'onlineBank':
      return outcome;
  }
}

export interface RedirectionSource {
  merchant_reference: string;
  payment_method: string;
  status: Status;
  currency: string;
  amount: number;
  return_url: string;
}

/** The redirection's query parameters, in the spec's order, with their signature. */
export function redirectionParams(
  t: RedirectionSource,
  status: RedirectionStatus,
  apiKey: string,
): Record<string, string> {
  const fields = {
    merchant_reference: t.merchant_reference,
    payment_method: redirectionMethod(t.payment_method),
    status,
    currency: t.currency,
    amount: formatAmount(t.amount, exponentOf(t.currency)),
  };
  return { ...fields, signature: resultSignature(fields, apiKey) };
}

/**
 * return_url with the parameters appended: after `&` when it already has a query string, after
 * `?` otherwise, and before any `#fragment` so that the browser sends them.
 */
export function appendQuery(url: string, params: Record<string, string>): string {
  const hash = url.indexOf('#');
  const base = hash === -1 ? url : url.slice(0, hash);
  const fragment = hash === -1 ? '' : url.slice(hash);
  const query = new URLSearchParams(params).toString();
  if (query === '') return url;
  const sep = !base.includes('?') ? '?' : base.endsWith('?') || base.endsWith('&') ? '' : '&';
  return base + sep + query + fragment;
}

/** The URL to send this browser to now (in ASCII, see asciiUrl), or null when the rules say it stays on the page. */
export function redirectionUrl(t: RedirectionSource, browser: BrowserKind, apiKey: string): string | null {
  const status = redirectionStatus(t.payment_method, t.status, browser);
  if (status === null) return null;
  return asciiUrl(appendQuery(t.return_url, redirectionParams(t, status, apiKey)));
}
