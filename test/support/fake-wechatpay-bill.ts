// The fake WeChat Pay's trade bill of a day (bill_type ALL), in WeChat Pay's format, written from
// the format (src/connectors/wechatpay/statement.ts reads it): the column line, one backticked line
// per payment (SUCCESS) and refund (REFUND), the summary and its totals. `edits` make the
// disagreements reconciliation must find.

export interface WechatBillOrder {
  transaction_id: string;
  out_trade_no: string;
  trade_type: string;
  /** Fen. */
  total: number;
  currency: string;
  paid_at?: number;
  refunds: ReadonlyArray<{ out_refund_no: string; refund: number; status: string; at: number }>;
}

export interface WechatBillEdits {
  omit?: Set<string>;
  /** Another total (fen) for a payment, by out_trade_no. */
  amounts?: Map<string, number>;
  extra?: Array<{
    state: 'SUCCESS' | 'REFUND';
    transaction_id: string;
    out_trade_no: string;
    total: number;
    out_refund_no?: string;
    at: number;
  }>;
}

const HEADER =
  '交易时间,公众账号ID,商户号,特约商户号,设备号,微信订单号,商户订单号,用户标识,交易类型,交易状态,付款银行,货币种类,应结订单金额,代金券金额,微信退款单号,商户退款单号,退款金额,充值券退款金额,退款类型,退款状态,商品名称,商户数据包,手续费,费率,订单金额,申请退款金额,费率备注';
const beijing = (ms: number) => new Date(ms + 8 * 3600_000).toISOString().slice(0, 19).replace('T', ' ');
const yuan = (fen: number) => (fen / 100).toFixed(2);

/** WeChat Pay's fee on a payment: 0.6 %, five decimals (a refund gives its share back, negative). */
export const wechatFee = (fen: number) => ((fen * 0.006) / 100).toFixed(5);

export function wechatBillCsv(
  appid: string,
  mchid: string,
  date: string,
  orders: Iterable<WechatBillOrder>,
  edits: WechatBillEdits = {},
): string {
  const rows: string[] = [];
  let paid = 0;
  let refunded = 0;
  let fees = 0;
  const row = (
    o: { transaction_id: string; out_trade_no: string; trade_type: string; currency: string },
    at: number,
    pay: number | null,
    refund?: { out_refund_no: string; refund: number; status: string },
  ) => {
    const fee = refund ? -Number(wechatFee(refund.refund)) : Number(wechatFee(pay!));
    fees += fee;
    rows.push(
      [
        beijing(at),
        appid,
        mchid,
        '0',
        '',
        o.transaction_id,
        o.out_trade_no,
        'oUpF8uMuAJO_M2pxb1Q9zNjWeS6o',
        o.trade_type,
        refund ? 'REFUND' : 'SUCCESS',
        'OTHERS',
        o.currency,
        yuan(pay ?? 0),
        '0.00',
        refund ? `50300${refund.out_refund_no.length}${at}` : '0',
        refund ? refund.out_refund_no : '0',
        yuan(refund?.refund ?? 0),
        '0.00',
        refund ? 'ORIGINAL' : '',
        refund ? refund.status : '',
        'Pinot Noir',
        '',
        fee.toFixed(5),
        '0.60%',
        yuan(pay ?? 0),
        yuan(refund?.refund ?? 0),
        '',
      ]
        .map((f) => `\`${f}`)
        .join(','),
    );
  };
  const onDay = (ms: number) => beijing(ms).slice(0, 10) === date;
  for (const o of orders) {
    if (o.paid_at !== undefined && onDay(o.paid_at) && !edits.omit?.has(o.out_trade_no)) {
      const total = edits.amounts?.get(o.out_trade_no) ?? o.total;
      paid += total;
      row(o, o.paid_at, total);
    }
    for (const r of o.refunds)
      if (onDay(r.at) && !edits.omit?.has(r.out_refund_no)) {
        refunded += r.refund;
        row(o, r.at, null, r);
      }
  }
  for (const x of (edits.extra ?? []).filter((e) => onDay(e.at))) {
    const o = { ...x, trade_type: 'NATIVE', currency: 'CNY' };
    if (x.state === 'SUCCESS') {
      paid += x.total;
      row(o, x.at, x.total);
    } else {
      refunded += x.total;
      row(o, x.at, null, { out_refund_no: x.out_refund_no ?? '', refund: x.total, status: 'SUCCESS' });
    }
  }
  return [
    HEADER,
    ...rows,
    '总交易单数,应结订单总金额,退款总金额,充值券退款总金额,手续费总金额,订单总金额,申请退款总金额',
    [String(rows.length), yuan(paid), yuan(refunded), '0.00', fees.toFixed(5), yuan(paid), yuan(refunded)]
      .map((f) => `\`${f}`)
      .join(','),
    '',
  ].join('\r\n');
}
