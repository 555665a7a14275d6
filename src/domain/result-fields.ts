import { exponentOf, formatAmount, formatAmountAsJsonNumber, formatRate } from './money.js';
import { resultSignature } from './signing.js';
import { formatPayTime } from './time.js';
import type { OrderResult, Status } from './transaction.js';

/** The parts of a stored transaction that the merchant-facing result messages are made of. */
export type ResultSource = Omit<OrderResult, 'user_id' | 'wallet_id'>;

/** pay_time is the time of the final status; while pending it is the creation time. */
export function payTimeOf(t: ResultSource): string {
  return formatPayTime(t.pay_time ?? t.created_at);
}

/**
 * The result notification's fields, without its signature: the spec's table, plus `amount_cny`,
 * `rate`, `order_id` and `pay_time` as the original service sent them, and the PayID extras.
 * Order here is the order on the wire.
 */
export function notificationFields(t: ResultSource): Record<string, string> {
  const exp = exponentOf(t.currency);
  const fields: Record<string, string> = {
    merchant_reference: t.merchant_reference,
    order_id: t.order_id,
    currency: t.currency,
    amount: formatAmount(t.amount, exp),
    amount_cny: t.amount_cny === null ? '' : formatAmount(t.amount_cny, exponentOf('CNY')),
    rate: t.currency_rate === null ? '' : formatRate(t.currency_rate, 6),
    payment_method: t.payment_method,
    status: t.status,
    pay_time: payTimeOf(t),
  };
  if (t.payment_method === 'payid') {
    fields.message = t.status_message ?? '';
    fields.msgId = t.msgId ?? '';
  }
  return fields;
}

export function signNotification(fields: Record<string, string>, apiKey: string): string {
  return resultSignature(
    {
      merchant_reference: fields.merchant_reference ?? '',
      payment_method: fields.payment_method ?? '',
      status: fields.status ?? '',
      currency: fields.currency ?? '',
      amount: fields.amount ?? '',
    },
    apiKey,
  );
}

/**
 * The query response's fields, in wire order (after `code` and `message`). The JSON numbers
 * (`amount`, `amount_cny`, `rate`) are given as the text to write unquoted: `amount` is exactly
 * the text that was signed, and `rate` keeps the original service's five decimals.
 */
export interface QueryResponse {
  merchant_reference: string;
  status: Status;
  currency: string;
  /** JSON number text, e.g. `120` or `0.01`. */
  amount: string;
  /** JSON number text, or null. */
  amount_cny: string | null;
  /** JSON number text with five decimals. */
  rate: string;
  signature: string;
  payment_method: string;
  order_id: string;
  pay_time: string;
}

export function queryResponse(t: ResultSource, apiKey: string): QueryResponse {
  const amount = formatAmountAsJsonNumber(t.amount, exponentOf(t.currency));
  return {
    merchant_reference: t.merchant_reference,
    status: t.status,
    currency: t.currency,
    amount,
    amount_cny: t.amount_cny === null ? null : formatAmountAsJsonNumber(t.amount_cny, exponentOf('CNY')),
    rate: t.currency_rate === null ? '0.00000' : formatRate(t.currency_rate, 5),
    signature: resultSignature(
      {
        merchant_reference: t.merchant_reference,
        payment_method: t.payment_method,
        status: t.status,
        currency: t.currency,
        amount,
      },
      apiKey,
    ),
    payment_method: t.payment_method,
    order_id: t.order_id,
    pay_time: payTimeOf(t),
  };
}
