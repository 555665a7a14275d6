import { textOf } from '../../domain/text.js';
import type { Charge, OpenOutcome, PaymentState } from '../../ports/connector.js';

// CoinPayments' wire formats (API v1, JSON) and invoice statuses mapped onto the gateway's, and
// nothing else: no I/O, no credentials. Facts and their sources: docs/providers/protocols/coinpayments.md.

/** What the client makes of one call: the JSON answer with its HTTP status, or no answer. */
export type CoinReply = { kind: 'answer'; status: number; body: unknown } | { kind: 'unknown'; reason: string };

/** An invoice's status (its `status`, or `state` in a webhook), as the API's schema lists them; compared without case. */
export const INVOICE_STATUSES = [
  'draft',
  'scheduled',
  'unpaid',
  'pending',
  'paid',
  'scheduledForPayout',
  'completed',
  'cancelling',
  'cancelled',
  'timedOut',
  'deleted',
] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];

export function invoiceStatus(v: unknown): InvoiceStatus | undefined {
  const text = textOf(v).toLowerCase();
  return INVOICE_STATUSES.find((s) => s.toLowerCase() === text);
}

/** The events an invoice's webhook is subscribed to: every change of its status. */
export const WEBHOOK_EVENTS = [
  'invoiceCreated',
  'invoicePending',
  'invoicePaid',
  'invoiceCompleted',
  'invoiceCancelled',
  'invoiceTimedOut',
] as const;

/** A fiat currency as CoinPayments numbers it: its id, and the decimals its amounts are counted in. */
export interface FiatCurrency {
  id: string;
  decimals: number;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The currency `code` in an answer of GET /api/v1/currencies (a list, or a list under `items`). */
export function fiatCurrencyOf(body: unknown, code: string): FiatCurrency | undefined {
  const list: unknown[] = Array.isArray(body) ? body : isObject(body) && Array.isArray(body.items) ? body.items : [];
  for (const c of list) {
    if (!isObject(c) || textOf(c.symbol).toUpperCase() !== code.toUpperCase()) continue;
    const decimals = Number(c.decimalPlaces);
    const id = textOf(c.id);
    if (id && Number.isInteger(decimals) && decimals >= 0 && decimals <= 18) return { id, decimals };
  }
  return undefined;
}

/** An amount in the gateway's minor units (the currency's ISO exponent) as CoinPayments counts it, if it can. */
export function coinValue(minor: number, exponent: number, currency: FiatCurrency): string | undefined {
  if (currency.decimals < exponent) return undefined;
  return (BigInt(minor) * 10n ** BigInt(currency.decimals - exponent)).toString();
}

/** Back from CoinPayments' count to minor units; undefined when it is not a whole number of them. */
export function minorOf(value: unknown, exponent: number, currency: FiatCurrency): number | undefined {
  const text = textOf(value);
  if (!/^\d{1,30}$/.test(text) || currency.decimals < exponent) return undefined;
  const scale = 10n ** BigInt(currency.decimals - exponent);
  const v = BigInt(text);
  if (v % scale !== 0n) return undefined;
  const minor = v / scale;
  return minor <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(minor) : undefined;
}

/**
 * The invoice's body (POST /api/v1/merchant/invoices): one line, the order's amount in the
 * wallet's currency, our out_trade_no as its invoiceId, and a webhook to the notification address.
 * No `payment` object: that is CoinPayments' hosted checkout, where the customer picks the coin.
 */
export function invoiceBody(input: {
  out_trade_no: string;
  description: string;
  value: string;
  currency: FiatCurrency;
  notify_url: string;
}): Record<string, unknown> {
  const money = { currencyId: input.currency.id, value: input.value };
  return {
    invoiceId: input.out_trade_no,
    description: input.description,
    items: [{ name: input.description, quantity: { value: 1, type: '2' }, amount: money }],
    amount: { breakdown: { subtotal: money }, currencyId: input.currency.id, value: input.value },
    webhooks: [{ notificationsUrl: input.notify_url, notifications: [...WEBHOOK_EVENTS] }],
  };
}

export const CHECKOUT = 'https://checkout.coinpayments.com';

/** Where the customer pays an invoice: CoinPayments' checkout, coming back to `return_url` whatever happens. */
export function checkoutUrl(origin: string, invoice: string, return_url: string): string {
  const u = new URL('/checkout/', origin);
  u.searchParams.set('invoice-id', invoice);
  u.searchParams.set('success-url', return_url);
  u.searchParams.set('cancel-url', return_url);
  return u.href;
}

/** The invoice's id in the checkout address stored for the payment. */
export function invoiceIdOf(payload: string | null | undefined): string | undefined {
  if (!payload) return undefined;
  try {
    return new URL(payload).searchParams.get('invoice-id') || undefined;
  } catch {
    return undefined;
  }
}

export function errorOf(body: unknown): string {
  if (!isObject(body)) return 'no message';
  const parts = [body.title, body.detail, body.message, body.error].map(textOf).filter(Boolean);
  return parts.join(': ') || 'no message';
}

/** The answer to an invoice's creation: the checkout to send the customer to, or why not. */
export function createOutcome(r: CoinReply, return_url: string): OpenOutcome {
  if (r.kind === 'unknown') return r;
  if (r.status >= 500 || r.status === 429) return { kind: 'unknown', reason: `HTTP ${r.status} ${errorOf(r.body)}` };
  const invoices = isObject(r.body) && Array.isArray(r.body.invoices) ? r.body.invoices : [];
  const invoice: unknown = invoices[0];
  if (r.status >= 200 && r.status < 300 && isObject(invoice) && textOf(invoice.id)) {
    const link = textOf(invoice.checkoutLink);
    // CoinPayments' own checkout, or the one its answer names (another instance of its platform).
    const origin = /^https:\/\/|^http:\/\/(127\.0\.0\.1|localhost)[:/]/.test(link) ? new URL(link).origin : CHECKOUT;
    return { kind: 'opened', payload: checkoutUrl(origin, textOf(invoice.id), return_url) };
  }
  if (r.status >= 200 && r.status < 300)
    return { kind: 'unknown', reason: 'CoinPayments answered without the invoice it made' };
  return { kind: 'refused', reason: `CoinPayments refused the invoice (HTTP ${r.status}) ${errorOf(r.body)}` };
}

/** What was paid of an invoice: its amount, in its currency's id. */
function amountOf(invoice: Record<string, unknown>): { currencyId: string; value: unknown } | undefined {
  const amount = invoice.amount;
  if (!isObject(amount)) return undefined;
  const currency = isObject(amount.currency) ? textOf(amount.currency.id) : '';
  return { currencyId: textOf(amount.currencyId) || currency, value: amount.value };
}

/**
 * An invoice as GET /api/v1/merchant/invoices/{id} has it. Paid (all confirmations, held or
 * credited) is paid, with its amount; cancelled, timed out or deleted ends the order failed; the
 * rest (a payment seen on the chain, waiting for confirmations) is pending.
 */
export function invoiceState(
  invoice: unknown,
  expected: { charge: Pick<Charge, 'currency'>; exponent: number; currency: FiatCurrency },
): PaymentState {
  if (!isObject(invoice)) return { kind: 'unknown', reason: 'no invoice in the answer' };
  const status = invoiceStatus(invoice.status ?? invoice.state);
  if (!status)
    return { kind: 'unknown', reason: `unknown invoice status ${textOf(invoice.status ?? invoice.state) || '(none)'}` };
  switch (status) {
    case 'paid':
    case 'scheduledForPayout':
    case 'completed': {
      const amount = amountOf(invoice);
      const minor =
        amount && amount.currencyId === expected.currency.id
          ? minorOf(amount.value, expected.exponent, expected.currency)
          : undefined;
      const ref = textOf(invoice.id);
      if (minor === undefined || !ref)
        return {
          kind: 'unknown',
          reason: `a ${status} invoice without its amount in ${expected.charge.currency}, or without its id`,
        };
      return { kind: 'paid', provider_ref: ref, charge: { amount: minor, currency: expected.charge.currency } };
    }
    case 'cancelled':
    case 'timedOut':
    case 'deleted':
      return { kind: 'failed', reason: `the CoinPayments invoice is ${status}` };
    case 'draft':
    case 'scheduled':
    case 'unpaid':
    case 'pending':
    case 'cancelling':
      return { kind: 'pending' };
  }
}

/** A webhook's body: the invoice's CoinPayments id and our invoiceId, if it has them. */
export function webhookInvoice(body: string): { id: string; out_trade_no: string } | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  const invoice = isObject(parsed) && isObject(parsed.invoice) ? parsed.invoice : undefined;
  const id = textOf(invoice?.id);
  const out_trade_no = textOf(invoice?.invoiceId) || textOf(invoice?.invoiceNumber);
  return id && out_trade_no ? { id, out_trade_no } : undefined;
}
