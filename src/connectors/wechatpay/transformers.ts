import { textOf } from '../../domain/text.js';
import type { PaymentFlow } from '../../domain/channel.js';

/** The flows WeChat Pay has (its trade types). */
export type WechatFlow = Exclude<PaymentFlow, 'transfer' | 'form'>;
import type {
  ChannelAccount,
  CloseOutcome,
  OpenOutcome,
  OpenPaymentInput,
  PaymentState,
  RefundOutcome,
  RefundRequest,
} from '../../ports/connector.js';
import { wechatTime } from './sign.js';

// WeChat Pay API v3's wire formats and statuses mapped onto the gateway's: paths, bodies and
// answers, no I/O and no keys. A domestic account uses /v3/pay and /v3/refund/domestic (CNY); a
// cross-border one /v3/global (the wallet's currency, trade_type and merchant_category_code).

/** What the client makes of one call: a verified 2xx answer, an error WeChat Pay answered, or no answer. */
export type WechatReply =
  | { kind: 'ok'; status: number; body: Readonly<Record<string, unknown>> }
  | {
      kind: 'error';
      status: number;
      code: string;
      message: string;
      /** carried a WeChat Pay signature, which verified */ signed?: boolean;
    }
  | { kind: 'unknown'; reason: string };

export const TRADE_STATES = ['SUCCESS', 'REFUND', 'NOTPAY', 'CLOSED', 'REVOKED', 'USERPAYING', 'PAYERROR'] as const;
export type TradeState = (typeof TRADE_STATES)[number];
/** REFUNDCLOSE is the cross-border API's name for CLOSED. */
export const REFUND_STATUSES = ['SUCCESS', 'CLOSED', 'REFUNDCLOSE', 'PROCESSING', 'ABNORMAL'] as const;
export type RefundStatus = (typeof REFUND_STATUSES)[number];

const isOneOf = <T extends string>(list: readonly T[], v: unknown): v is T =>
  typeof v === 'string' && (list as readonly string[]).includes(v);
const str = textOf;
const obj = (v: unknown): Readonly<Record<string, unknown>> =>
  typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {};

export function isCrossBorder(account: ChannelAccount): boolean {
  return account.config.currency_mode === 'cross-border';
}

const DOMESTIC_TRADE = { qr: 'native', redirect: 'h5', jsapi: 'jsapi' } as const;
const GLOBAL_TRADE = { qr: 'NATIVE', redirect: 'MWEB', jsapi: 'JSAPI' } as const;

export const paths = {
  open(account: ChannelAccount, flow: WechatFlow): string {
    return isCrossBorder(account)
      ? `/v3/global/transactions/${GLOBAL_TRADE[flow].toLowerCase()}`
      : `/v3/pay/transactions/${DOMESTIC_TRADE[flow]}`;
  },
  query(account: ChannelAccount, out_trade_no: string): string {
    const base = isCrossBorder(account) ? '/v3/global/transactions' : '/v3/pay/transactions';
    return `${base}/out-trade-no/${encodeURIComponent(out_trade_no)}?mchid=${encodeURIComponent(account.config.mchid ?? '')}`;
  },
  close(account: ChannelAccount, out_trade_no: string): string {
    const base = isCrossBorder(account) ? '/v3/global/transactions' : '/v3/pay/transactions';
    return `${base}/out-trade-no/${encodeURIComponent(out_trade_no)}/close`;
  },
  refund(account: ChannelAccount): string {
    return isCrossBorder(account) ? '/v3/global/refunds' : '/v3/refund/domestic/refunds';
  },
  refundQuery(account: ChannelAccount, refund_id: string): string {
    return isCrossBorder(account)
      ? `/v3/global/refunds/out-refund-no/${encodeURIComponent(refund_id)}?mchid=${encodeURIComponent(account.config.mchid ?? '')}`
      : `/v3/refund/domestic/refunds/${encodeURIComponent(refund_id)}`;
  },
};

/** The order body of a flow: identical for the same input, as WeChat Pay requires of a repeated order. */
export function orderBody(
  account: ChannelAccount,
  input: OpenPaymentInput & { flow: WechatFlow },
): Record<string, unknown> {
  const c = account.config;
  const scene =
    input.flow === 'redirect' ? { scene_info: { payer_client_ip: input.client_ip, h5_info: { type: 'Wap' } } } : {};
  return {
    appid: c.appid,
    mchid: c.mchid,
    // At most 127 characters.
    description: [...input.description].slice(0, 127).join('') || 'Payment',
    out_trade_no: input.out_trade_no,
    time_expire: wechatTime(input.expires_at),
    notify_url: input.notify_url,
    amount: { total: input.charge.amount, currency: input.charge.currency },
    ...(isCrossBorder(account) && { trade_type: GLOBAL_TRADE[input.flow], merchant_category_code: c.mcc }),
    ...scene,
    ...(input.flow === 'jsapi' && { payer: { openid: input.payer ?? '' } }),
  };
}

export function refundBody(account: ChannelAccount, input: RefundRequest): Record<string, unknown> {
  return {
    // The cross-border refund names the merchant and its AppID in the body (direct merchants).
    ...(isCrossBorder(account) && { mchid: account.config.mchid, appid: account.config.appid }),
    out_trade_no: input.out_trade_no,
    out_refund_no: input.refund_id,
    ...(input.reason && { reason: utf8Prefix(input.reason, 80) }),
    notify_url: input.notify_url,
    amount: { refund: input.amount, total: input.charge.amount, currency: input.charge.currency },
  };
}

/** The longest prefix of whole characters within `bytes` bytes of UTF-8 (WeChat Pay counts a reason's length in bytes). */
export function utf8Prefix(text: string, bytes: number): string {
  let out = '';
  let used = 0;
  for (const ch of text) {
    used += Buffer.byteLength(ch, 'utf8');
    if (used > bytes) break;
    out += ch;
  }
  return out;
}

function describe(r: Extract<WechatReply, { kind: 'error' }>): string {
  return `HTTP ${r.status} ${r.code || '-'}: ${r.message || 'no message'}`;
}

/**
 * What an order call answered: the QR text (code_url), the mobile page (h5_url; mweb_url in the
 * cross-border API) or the prepay_id.
 */
export function openOutcome(account: ChannelAccount, flow: WechatFlow, r: WechatReply): OpenOutcome {
  switch (r.kind) {
    case 'ok': {
      const field =
        flow === 'qr'
          ? 'code_url'
          : flow === 'redirect'
            ? isCrossBorder(account)
              ? 'mweb_url'
              : 'h5_url'
            : 'prepay_id';
      const value = str(r.body[field]);
      return value
        ? { kind: 'opened', payload: value }
        : { kind: 'unknown', reason: `the order answer has no ${field}` };
    }
    case 'error':
      // 429 "not accepted": nothing was created, try later; every 4xx is a refusal of this request.
      return { kind: 'refused', reason: describe(r) };
    case 'unknown':
      return r;
  }
}

/** A transaction as WeChat Pay reports it (query answer or notification resource). */
export function tradeState(t: Readonly<Record<string, unknown>>): PaymentState {
  const state = t.trade_state;
  if (!isOneOf(TRADE_STATES, state))
    return { kind: 'unknown', reason: `unknown trade_state ${str(state) || '(none)'}` };
  switch (state) {
    case 'SUCCESS':
    // Paid, then refunded (in part or in full): it was paid.
    case 'REFUND': {
      const amount = obj(t.amount);
      const total = amount.total;
      if (typeof total !== 'number' || !Number.isSafeInteger(total))
        return { kind: 'unknown', reason: 'paid without an integer amount.total' };
      // WeChat Pay's order number: transaction_id, or id in the cross-border API.
      return {
        kind: 'paid',
        provider_ref: str(t.transaction_id) || str(t.id),
        charge: { amount: total, currency: str(amount.currency) || 'CNY' },
      };
    }
    case 'NOTPAY':
    case 'USERPAYING':
    // A failed attempt: the order stays payable.
    case 'PAYERROR':
      return { kind: 'pending' };
    case 'CLOSED':
    case 'REVOKED':
      return { kind: 'closed' };
    default:
      return unreachable(state);
  }
}

export function queryState(r: WechatReply): PaymentState {
  switch (r.kind) {
    case 'ok':
      return tradeState(r.body);
    case 'error':
      return r.code === 'ORDER_NOT_EXIST' || (r.status === 404 && r.code === 'RESOURCE_NOT_EXISTS')
        ? { kind: 'not_found' }
        : { kind: 'unknown', reason: describe(r) };
    case 'unknown':
      return r;
  }
}

export function closeOutcome(r: WechatReply): CloseOutcome {
  switch (r.kind) {
    case 'ok':
      return { kind: 'closed' };
    case 'error':
      // Paid (ORDER_PAID and the like) or not closable: the caller asks what the order is.
      return r.status === 429 ? { kind: 'unknown', reason: describe(r) } : { kind: 'refused', reason: describe(r) };
    case 'unknown':
      return r;
  }
}

export function refundState(body: Readonly<Record<string, unknown>>): RefundOutcome {
  const status = body.status ?? body.refund_status;
  if (!isOneOf(REFUND_STATUSES, status))
    return { kind: 'unknown', reason: `unknown refund status ${str(status) || '(none)'}` };
  switch (status) {
    case 'SUCCESS':
      return { kind: 'succeeded' };
    case 'PROCESSING':
      return { kind: 'processing' };
    case 'CLOSED':
    case 'REFUNDCLOSE':
      return { kind: 'refused', reason: 'the refund was closed by WeChat Pay' };
    case 'ABNORMAL':
      // The money could not reach the customer (a closed card): WeChat Pay holds it until the
      // merchant sends it another way in the merchant portal. Not a refusal, not a success.
      return {
        kind: 'unknown',
        reason:
          "ABNORMAL: the refund could not reach the customer's account; handle it in the WeChat Pay merchant portal",
      };
    default:
      return unreachable(status);
  }
}

export function refundOutcome(r: WechatReply): RefundOutcome {
  switch (r.kind) {
    case 'ok':
      return refundState(r.body);
    case 'error':
      // 429 means "not accepted now": the same out_refund_no is tried again later.
      return r.status === 429 ? { kind: 'unknown', reason: describe(r) } : { kind: 'refused', reason: describe(r) };
    case 'unknown':
      return r;
  }
}

export function refundQueryOutcome(r: WechatReply): RefundOutcome {
  switch (r.kind) {
    case 'ok':
      return refundState(r.body);
    case 'error':
      return r.status === 404 ? { kind: 'not_found' } : { kind: 'unknown', reason: describe(r) };
    case 'unknown':
      return r;
  }
}

export function probeOutcome(r: WechatReply): { ok: true; detail: string } | { ok: false; reason: string } {
  switch (r.kind) {
    case 'ok':
      return { ok: true, detail: 'signed query answered, and its signature verified' };
    case 'error':
      // WeChat Pay's official SDKs verify the signatures of successful answers only: whether it signs
      // this 404 is not something to fail a correct account on. Its own error code says a WeChat Pay
      // endpoint took the merchant's signature; a signature it carries verified (the client checks).
      if (r.status === 404 && r.code === 'ORDER_NOT_EXIST') {
        return r.signed === true
          ? {
              ok: true,
              detail: `WeChat Pay took the signed request (${r.code}, as expected for an order that does not exist), and its answer's signature verified`,
            }
          : {
              ok: true,
              detail: `WeChat Pay took the signed request (${r.code}, as expected for an order that does not exist): the mchid, serial number and private key are right. Its answer carried no signature, so the platform public key is checked by the first payment's answer, not by this test`,
            };
      }
      return { ok: false, reason: describe(r) };
    case 'unknown':
      return { ok: false, reason: r.reason };
  }
}

function unreachable(v: never): never {
  throw new Error(`unhandled WeChat Pay status ${String(v)}`);
}
