import { textOf } from '../../domain/text.js';
import { exponentOf, formatAmount, parseAmount } from '../../domain/money.js';
import type { Charge, CloseOutcome, OpenOutcome, PaymentState, RefundOutcome } from '../../ports/connector.js';
import { alipayTime } from './sign.js';

// Alipay's wire formats and statuses mapped onto the gateway's, and nothing else: no I/O, no keys.

/** What the client makes of one call: a verified success (code 10000), a failure, or no answer. */
export type AlipayReply =
  | { kind: 'success'; body: Readonly<Record<string, unknown>> }
  /** A failure Alipay answered; `signed` when it carried a signature (which then verified). */
  | { kind: 'failure'; code: string; sub_code: string; sub_msg: string; signed: boolean }
  | { kind: 'unknown'; reason: string };

/** alipay.trade.query's and the notification's trade_status. */
export const TRADE_STATUSES = ['WAIT_BUYER_PAY', 'TRADE_CLOSED', 'TRADE_SUCCESS', 'TRADE_FINISHED'] as const;
export type TradeStatus = (typeof TRADE_STATUSES)[number];

function isTradeStatus(v: unknown): v is TradeStatus {
  return typeof v === 'string' && (TRADE_STATUSES as readonly string[]).includes(v);
}

/**
 * Failures that say nothing about the outcome: "service unavailable", "system error, call again"
 * (ACQ.SYSTEM_ERROR, and AQC.SYSTEM_ERROR, which alipay.trade.cancel's table spells so).
 */
function isSystemFailure(r: Extract<AlipayReply, { kind: 'failure' }>): boolean {
  return (
    r.code === '20000' ||
    r.sub_code === 'ACQ.SYSTEM_ERROR' ||
    r.sub_code === 'AQC.SYSTEM_ERROR' ||
    r.sub_code.startsWith('isp.') ||
    r.sub_code.startsWith('aop.')
  );
}

function describe(r: Extract<AlipayReply, { kind: 'failure' }>): string {
  return `${r.code} ${r.sub_code || '-'}: ${r.sub_msg || 'no message'}`;
}

const str = textOf;

/** Minor units of `currency` as Alipay writes an amount: "12.30". */
export function alipayAmount(charge: Charge): string {
  return formatAmount(charge.amount, exponentOf(charge.currency));
}

/** An amount Alipay wrote, in minor units; undefined when it is not an amount. */
export function readAmount(text: unknown, currency: string): number | undefined {
  const parsed = parseAmount(str(text), exponentOf(currency));
  return parsed.ok ? parsed.minor : undefined;
}

/**
 * The business fields of a payment: domestic accounts price in CNY (no currency fields); a
 * cross-border account prices and settles in the charge's currency (trans_currency, settle_currency).
 */
export function paymentFields(input: {
  out_trade_no: string;
  charge: Charge;
  description: string;
  expires_at: number;
}): Record<string, string> {
  return {
    out_trade_no: input.out_trade_no,
    total_amount: alipayAmount(input.charge),
    // Alipay's subject: at most 256 characters, and its mobile page dislikes / = &.
    subject: [...input.description.replace(/[/=&]/g, ' ')].slice(0, 256).join('') || 'Payment',
    time_expire: alipayTime(input.expires_at),
    ...(input.charge.currency !== 'CNY' && {
      trans_currency: input.charge.currency,
      settle_currency: input.charge.currency,
    }),
  };
}

export function precreateOutcome(r: AlipayReply): OpenOutcome {
  switch (r.kind) {
    case 'success': {
      const qr = str(r.body.qr_code);
      return qr ? { kind: 'opened', payload: qr } : { kind: 'unknown', reason: 'precreate answered without a qr_code' };
    }
    case 'failure':
      // Already paid (a precreate asked again for a trade the customer has paid): not "nothing
      // was charged"; the trade is asked about, and its payment settles the order.
      if (r.sub_code === 'ACQ.TRADE_HAS_SUCCESS')
        return { kind: 'unknown', reason: `${describe(r)} (the trade is paid; asked about)` };
      return isSystemFailure(r) ? { kind: 'unknown', reason: describe(r) } : { kind: 'refused', reason: describe(r) };
    case 'unknown':
      return r;
  }
}

/**
 * A trade as Alipay reports it (query response or notification fields). Its total_amount is in
 * trans_currency when it names one, else in CNY: Alipay returns trans_currency only for a trade
 * opened with one, so a cross-border trade priced in CNY after all (its currency fields not taken)
 * reads as CNY and does not match its charge, rather than as the charge's currency.
 */
export function tradeState(fields: Readonly<Record<string, unknown>>): PaymentState {
  const status = fields.trade_status;
  if (!isTradeStatus(status)) return { kind: 'unknown', reason: `unknown trade_status ${str(status) || '(none)'}` };
  switch (status) {
    case 'WAIT_BUYER_PAY':
      return { kind: 'pending' };
    case 'TRADE_CLOSED':
      // Unpaid and closed (timed out, closed by the merchant), or paid and refunded in full: a
      // payment the gateway saw paid stays paid (markPayment changes only open payments).
      return { kind: 'closed' };
    case 'TRADE_SUCCESS':
    case 'TRADE_FINISHED': {
      const charged = str(fields.trans_currency) || 'CNY';
      const amount = readAmount(fields.total_amount, charged);
      if (amount === undefined)
        return { kind: 'unknown', reason: `paid with an unreadable total_amount ${str(fields.total_amount)}` };
      return { kind: 'paid', provider_ref: str(fields.trade_no), charge: { amount, currency: charged } };
    }
    default:
      return unreachable(status);
  }
}

export function queryState(r: AlipayReply): PaymentState {
  switch (r.kind) {
    case 'success':
      return tradeState(r.body);
    case 'failure':
      // A trade Alipay has not created yet (a QR not scanned, a mobile page not opened) is not found.
      return r.sub_code === 'ACQ.TRADE_NOT_EXIST' ? { kind: 'not_found' } : { kind: 'unknown', reason: describe(r) };
    case 'unknown':
      return r;
  }
}

/** alipay.trade.close: `cancel` when the trade does not exist yet, so that it is cancelled instead (it cannot be created afterwards). */
export function closeOutcome(r: AlipayReply): CloseOutcome | { kind: 'cancel' } {
  switch (r.kind) {
    case 'success':
      return { kind: 'closed' };
    case 'failure':
      if (isSystemFailure(r)) return { kind: 'unknown', reason: describe(r) };
      if (r.sub_code === 'ACQ.TRADE_NOT_EXIST') return { kind: 'cancel' };
      return { kind: 'refused', reason: describe(r) };
    case 'unknown':
      return r;
  }
}

/** alipay.trade.cancel: closes an unpaid trade (or one never created); a paid one it refunds. */
export function cancelOutcome(r: AlipayReply): CloseOutcome {
  switch (r.kind) {
    case 'success':
      if (str(r.body.retry_flag) === 'Y')
        return { kind: 'unknown', reason: 'cancel asks to be retried (retry_flag Y)' };
      // The trade had been paid after all (a payment racing the close): the cancel refunded it. It
      // is closed for the gateway (the money goes back; a query might still say paid for a while),
      // and an operator is told.
      if (str(r.body.action) === 'refund')
        return {
          kind: 'closed',
          note: "the trade had been paid: Alipay's cancel refunded it to the customer (action refund)",
        };
      return { kind: 'closed' };
    case 'failure':
      return isSystemFailure(r) ? { kind: 'unknown', reason: describe(r) } : { kind: 'refused', reason: describe(r) };
    case 'unknown':
      return r;
  }
}

/**
 * alipay.trade.refund: fund_change Y is a refund made; N (a repeated request, or one Alipay has
 * not finished) is confirmed by the refund query (`confirm`). A "system error" is no answer: the
 * refund may have been made.
 */
export function refundOutcome(r: AlipayReply): RefundOutcome | { kind: 'confirm' } {
  switch (r.kind) {
    case 'success':
      return str(r.body.fund_change) === 'Y' ? { kind: 'succeeded' } : { kind: 'confirm' };
    case 'failure':
      return isSystemFailure(r) ? { kind: 'unknown', reason: describe(r) } : { kind: 'refused', reason: describe(r) };
    case 'unknown':
      return r;
  }
}

/** alipay.trade.fastpay.refund.query: REFUND_SUCCESS is made; no refund_status is none received (yet). */
export function refundQueryOutcome(r: AlipayReply): RefundOutcome {
  switch (r.kind) {
    case 'success':
      return str(r.body.refund_status) === 'REFUND_SUCCESS' ? { kind: 'succeeded' } : { kind: 'not_found' };
    case 'failure':
      return r.sub_code === 'ACQ.TRADE_NOT_EXIST' ? { kind: 'not_found' } : { kind: 'unknown', reason: describe(r) };
    case 'unknown':
      return r;
  }
}

/** `channel test`: a query of a trade that does not exist proves the keys (Alipay verified our signature and signed its answer). */
export function probeOutcome(r: AlipayReply): { ok: true; detail: string } | { ok: false; reason: string } {
  switch (r.kind) {
    case 'success':
      return { ok: true, detail: 'signed query answered' };
    case 'failure':
      if (r.sub_code === 'ACQ.TRADE_NOT_EXIST' && r.signed)
        return {
          ok: true,
          detail: 'Alipay took the signed request and signed its answer, which verified (trade not found, as expected)',
        };
      return {
        ok: false,
        reason: `${describe(r)}${r.signed ? '' : ' (an unsigned answer: check app_id and the keys)'}`,
      };
    case 'unknown':
      return { ok: false, reason: r.reason };
  }
}

function unreachable(v: never): never {
  throw new Error(`unhandled Alipay status ${String(v)}`);
}
