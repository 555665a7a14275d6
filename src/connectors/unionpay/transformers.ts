import type { Charge, FormPayload, OpenOutcome, PaymentState, RefundOutcome } from '../../ports/connector.js';
import { acpTime, type AcpFields } from './sign.js';

// UnionPay ACP 5.1.0's messages (online payment, 全渠道 gateway) and its response codes mapped onto
// the gateway's, and nothing else: no I/O, no keys. Facts and their sources:
// docs/providers/protocols/unionpay.md.

export type AcpReply = { kind: 'answer'; fields: AcpFields } | { kind: 'unknown'; reason: string };

/** ISO 4217 numeric codes of the currencies a cross-border account may charge (`currencyCode`). */
export const CURRENCY_NUMBERS: Readonly<Record<string, string>> = {
  CNY: '156',
  NZD: '554',
  AUD: '036',
  USD: '840',
  HKD: '344',
  SGD: '702',
  EUR: '978',
  GBP: '826',
  JPY: '392',
  CAD: '124',
};

export const currencyOfNumber = (n: string) => Object.keys(CURRENCY_NUMBERS).find((c) => CURRENCY_NUMBERS[c] === n);

/** The fields every request carries. */
function common(merId: string): Record<string, string> {
  return { version: '5.1.0', encoding: 'UTF-8', signMethod: '01', accessType: '0', merId };
}

/** orderId: 8 to 32 letters and digits (the SDK's forms; its comments say 40). The gateway's ids are. */
export const ORDER_ID = /^[0-9A-Za-z]{8,32}$/;

/**
 * The consume (purchase) the browser posts to frontTransReq.do: txnType 01/01, B2C gateway, the
 * charge in minor units by its numeric currency code, the page to come back to and the address
 * of the back notification, and a payTimeout at the order's end.
 */
export function consumeFields(input: {
  merId: string;
  out_trade_no: string;
  charge: Charge;
  now: number;
  expires_at: number;
  return_url: string;
  notify_url: string;
  phone: boolean;
}): Record<string, string> {
  return {
    ...common(input.merId),
    txnType: '01',
    txnSubType: '01',
    bizType: '000201',
    channelType: input.phone ? '08' : '07',
    orderId: input.out_trade_no,
    txnTime: acpTime(input.now),
    currencyCode: CURRENCY_NUMBERS[input.charge.currency] ?? '',
    txnAmt: String(input.charge.amount),
    frontUrl: input.return_url,
    backUrl: input.notify_url,
    payTimeout: acpTime(input.expires_at),
  };
}

export function formOpened(action: string, fields: Record<string, string>): OpenOutcome {
  return { kind: 'opened', payload: JSON.stringify({ action, fields } satisfies FormPayload) };
}

/** queryTrans.do for one transaction, by its orderId and its own txnTime. */
export function queryFields(merId: string, orderId: string, txnTime: string): Record<string, string> {
  return { ...common(merId), txnType: '00', txnSubType: '00', bizType: '000000', orderId, txnTime };
}

/** A refund (04) or a same-day revoke (31) of a consume, itself a transaction with its own orderId and txnTime. */
export function backFields(input: {
  merId: string;
  txnType: '04' | '31';
  orderId: string;
  txnTime: string;
  amount: number;
  currency: string;
  origQryId: string;
  notify_url: string;
}): Record<string, string> {
  return {
    ...common(input.merId),
    txnType: input.txnType,
    txnSubType: '00',
    bizType: '000201',
    channelType: '07',
    orderId: input.orderId,
    txnTime: input.txnTime,
    currencyCode: CURRENCY_NUMBERS[input.currency] ?? '',
    txnAmt: String(input.amount),
    origQryId: input.origQryId,
    backUrl: input.notify_url,
  };
}

/**
 * A synchronous answer: `k=v&k=v`, where a value may hold `{…}` or `[…]` with `&` inside, not
 * URL-encoded (the SDK's parser).
 */
export function parseAnswer(text: string): Record<string, string> {
  const fields: Record<string, string> = {};
  let depth = 0;
  let start = 0;
  const take = (end: number) => {
    const part = text.slice(start, end);
    const eq = part.indexOf('=');
    if (eq > 0) fields[part.slice(0, eq)] = part.slice(eq + 1);
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '{' || c === '[') depth++;
    else if ((c === '}' || c === ']') && depth > 0) depth--;
    else if (c === '&' && depth === 0) {
      take(i);
      start = i + 1;
    }
  }
  take(text.length);
  return fields;
}

/** Response codes that say nothing of the outcome yet: ask again later. */
const IN_PROGRESS = new Set(['03', '04', '05']);
const SUCCESS = new Set(['00', 'A6']);
/** 查无此交易: UnionPay has no such transaction. */
const NOT_FOUND = '34';

const said = (f: AcpFields) => `${f.respCode ?? '-'} ${f.respMsg ?? ''}`.trim();

/** A consume as queryTrans.do reports it: paid (00, A6) with what was paid, in progress, failed (closed), or not there. */
export function consumeState(r: AcpReply): PaymentState {
  if (r.kind === 'unknown') return r;
  const f = r.fields;
  if (f.respCode === NOT_FOUND) return { kind: 'not_found' };
  if (f.respCode !== '00') return { kind: 'unknown', reason: `queryTrans answered ${said(f)}` };
  const orig = f.origRespCode ?? '';
  if (SUCCESS.has(orig)) {
    const currency = currencyOfNumber(f.currencyCode ?? '');
    const amount = /^\d{1,12}$/.test(f.txnAmt ?? '') ? Number(f.txnAmt) : undefined;
    if (!currency || amount === undefined || !f.queryId)
      return { kind: 'unknown', reason: 'a paid consume without its txnAmt, a known currencyCode or its queryId' };
    return { kind: 'paid', provider_ref: f.queryId, charge: { amount, currency } };
  }
  if (IN_PROGRESS.has(orig)) return { kind: 'pending' };
  // The consume failed at UnionPay (the card refused, the payment timed out): the customer may try again.
  return { kind: 'closed' };
}

/** The synchronous answer to a refund or revoke: accepted (its outcome comes later), unknown, or refused. */
export function backOutcome(r: AcpReply): RefundOutcome {
  if (r.kind === 'unknown') return r;
  const code = r.fields.respCode ?? '';
  if (code === '00') return { kind: 'processing' };
  if (IN_PROGRESS.has(code)) return { kind: 'unknown', reason: `UnionPay answered ${said(r.fields)}` };
  return { kind: 'refused', reason: `UnionPay refused (${said(r.fields)})` };
}

/** A refund or revoke as queryTrans.do reports it. */
export function backState(r: AcpReply): RefundOutcome {
  if (r.kind === 'unknown') return r;
  const f = r.fields;
  if (f.respCode === NOT_FOUND) return { kind: 'not_found' };
  if (f.respCode !== '00') return { kind: 'unknown', reason: `queryTrans answered ${said(f)}` };
  const orig = f.origRespCode ?? '';
  if (SUCCESS.has(orig)) return { kind: 'succeeded' };
  if (IN_PROGRESS.has(orig)) return { kind: 'processing' };
  return { kind: 'refused', reason: `UnionPay did not make it (${orig} ${f.origRespMsg ?? ''})`.trim() };
}

/**
 * Whether a refused refund is one UnionPay wants made as a same-day revoke instead (消费撤销):
 * its message names 撤销. Only a refund of the whole amount can be a revoke.
 */
export function wantsRevoke(r: AcpReply): boolean {
  return r.kind === 'answer' && r.fields.respCode !== '00' && /撤销/.test(r.fields.respMsg ?? '');
}
