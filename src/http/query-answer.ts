import type { QueryResponse } from '../domain/result-fields.js';

// The query's answer as JSON text. Written by hand: its numbers must be exactly the text that was
// signed (QueryResponse gives them as text), and the field order is the original service's.

export function queryAnswerJson(r: QueryResponse): string {
  const s = JSON.stringify;
  return (
    `{"code":0,"message":"SUCCESS","merchant_reference":${s(r.merchant_reference)},"status":${s(r.status)},` +
    `"currency":${s(r.currency)},"amount":${r.amount},"amount_cny":${r.amount_cny ?? 'null'},"rate":${r.rate},"signature":${s(r.signature)},` +
    `"payment_method":${s(r.payment_method)},"order_id":${s(r.order_id)},"pay_time":${s(r.pay_time)}}`
  );
}

/** The text of a response shared by the waiters of one status change (QueryAnswer.shared): made once for all. */
const sharedTexts = new WeakMap<QueryResponse, string>();

export function sharedAnswerJson(r: QueryResponse): string {
  let text = sharedTexts.get(r);
  if (text === undefined) {
    text = queryAnswerJson(r);
    sharedTexts.set(r, text);
  }
  return text;
}
