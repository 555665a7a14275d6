import { exponentOf, formatAmount, formatAmountAsJsonNumber, formatRate } from './money.js';
import { resultSignature } from './signing.js';
import { formatPayTime } from './time.js';

/** The parts of a stored transaction that the merchant-facing result messages are made of. */
export interface ResultSource {
  order_id: string;
  merchant_reference: string;
  payment_method: string;
  status: string;
  currency: string;
  amount: number;
  amount_cny: number | null;
  currency_rate: number | null;
  created_at: number;
  pay_time: number | null;
  status_message: string | null;
  msgId: string | null;
}

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
 * The query response as JSON text. Numbers are written by hand so that `amount` is exactly the
 * text that was signed, and `rate` keeps the original service's five decimals.
 */
export function queryResponseJson(t: ResultSource, apiKey: string): string {
  const exp = exponentOf(t.currency);
  const amount = formatAmountAsJsonNumber(t.amount, exp);
  const signature = resultSignature(
    { merchant_reference: t.merchant_reference, payment_method: t.payment_method, status: t.status, currency: t.currency, amount },
    apiKey,
  );
  const amountCny = t.amount_cny === null ? 'null' : formatAmountAsJsonNumber(t.amount_cny, exponentOf('CNY'));
  const rate = t.currency_rate === null ? '0.00000' : formatRate(t.currency_rate, 5);
  const s = JSON.stringify;
  return (
    `{"code":0,"message":"SUCCESS","merchant_reference":${s(t.merchant_reference)},"status":${s(t.status)},` +
    `"currency":${s(t.currency)},"amount":${amount},"amount_cny":${amountCny},"rate":${rate},"signature":${s(signature)},` +
    `"payment_method":${s(t.payment_method)},"order_id":${s(t.order_id)},"pay_time":${s(payTimeOf(t))}}`
  );
}
