// The fake Alipay's trade bill of a day, in Alipay's format (see src/connectors/alipay/statement.ts
// for what it is read as; this writes it from the format, apart from that code): a zip of the
// GBK-encoded detail CSV (title lines, the columns, one line per trade and refund, the end marker,
// the totals) and its summary file. `edits` make the disagreements reconciliation must find.
import { zipSync } from 'fflate';
import iconv from 'iconv-lite';

export interface BillTrade {
  trade_no: string;
  out_trade_no: string;
  subject: string;
  /** Yuan, as the trade has it. */
  amount: string;
  /** When it was paid, epoch ms; absent: not paid. */
  paid_at?: number;
  /** Refunds made: out_request_no -> yuan and when. */
  refunds: ReadonlyArray<{ out_request_no: string; amount: string; at: number }>;
}

export interface BillEdits {
  /** Out of the bill: trades by out_trade_no, refunds by out_request_no. */
  omit?: Set<string>;
  /** Another amount (yuan) for a trade, by out_trade_no. */
  amounts?: Map<string, string>;
  /** Lines the gateway never saw: trades and refunds. */
  extra?: Array<{
    kind: '交易' | '退款';
    trade_no: string;
    out_trade_no: string;
    amount: string;
    out_request_no?: string;
    at: number;
  }>;
  /** Totals that count one trade more than the file has (a file cut short). */
  wrongTotals?: boolean;
}

/** Alipay's service fee on a trade (0.6 %, half up), in yuan. */
export function serviceFee(amount: string): string {
  return (Math.round(Number(amount) * 100 * 0.006) / 100).toFixed(2);
}

const beijing = (ms: number) => new Date(ms + 8 * 3600_000).toISOString().slice(0, 19).replace('T', ' ');
const dayOf = (ms: number) => beijing(ms).slice(0, 10);
const T = '\t';
/** A field with a comma or a quote, quoted as CSV quotes it. */
const cell = (s: string) => (/[",]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s);

export function alipayBillZip(
  app_pid: string,
  date: string,
  trades: Iterable<BillTrade>,
  edits: BillEdits = {},
): Uint8Array {
  const rows: string[] = [];
  let payments = 0;
  let refunds = 0;
  let paidSum = 0;
  let refundSum = 0;
  const line = (
    kind: '交易' | '退款',
    trade_no: string,
    out_trade_no: string,
    subject: string,
    amount: string,
    at: number,
    refundNo = '',
  ) => {
    const signed = kind === '退款' ? `-${amount}` : amount;
    const fee = kind === '交易' ? `-${serviceFee(amount)}` : '0.00';
    rows.push(
      [
        `${trade_no}${T}`,
        `${out_trade_no}${T}`,
        `${kind}${T}`,
        cell(subject),
        beijing(at - 5000),
        beijing(at),
        `${T}`,
        `${T}`,
        `${T}`,
        `${T}`,
        `*明(138***8888)${T}`,
        signed,
        signed,
        '0.00',
        '0.00',
        '0.00',
        '0.00',
        '0.00',
        '',
        `0.00${T}`,
        '0.00',
        `${refundNo}${T}`,
        fee,
        '0.00',
        cell(subject),
      ].join(','),
    );
    if (kind === '交易') {
      payments++;
      paidSum += Math.round(Number(amount) * 100);
    } else {
      refunds++;
      refundSum += Math.round(Number(amount) * 100);
    }
  };
  for (const t of trades) {
    if (t.paid_at !== undefined && dayOf(t.paid_at) === date && !edits.omit?.has(t.out_trade_no))
      line('交易', t.trade_no, t.out_trade_no, t.subject, edits.amounts?.get(t.out_trade_no) ?? t.amount, t.paid_at);
    for (const r of t.refunds)
      if (dayOf(r.at) === date && !edits.omit?.has(r.out_request_no))
        line('退款', t.trade_no, t.out_trade_no, t.subject, r.amount, r.at, r.out_request_no);
  }
  for (const x of (edits.extra ?? []).filter((e) => dayOf(e.at) === date))
    line(x.kind, x.trade_no, x.out_trade_no, 'extra', x.amount, x.at, x.out_request_no ?? '');
  const [y, m, d] = date.split('-');
  const next = new Date(Date.UTC(Number(y), Number(m) - 1, Number(d) + 1)).toISOString().slice(0, 10).split('-');
  const detail = [
    '#支付宝业务明细查询',
    `#账号：[${app_pid}0156]`,
    `#起始日期：[${y}年${m}月${d}日 00:00:00]   终止日期：[${next[0]}年${next[1]}月${next[2]}日 00:00:00]`,
    `#${'-'.repeat(41)}业务明细列表${'-'.repeat(40)}`,
    '支付宝交易号,商户订单号,业务类型,商品名称,创建时间,完成时间,门店编号,门店名称,操作员,终端号,对方账户,订单金额（元）,商家实收（元）,支付宝红包（元）,集分宝（元）,支付宝优惠（元）,商家优惠（元）,券核销金额（元）,券名称,商家红包消费金额（元）,卡消费金额（元）,退款批次号/请求号,服务费（元）,分润（元）,备注',
    ...rows,
    `#${'-'.repeat(41)}业务明细列表结束${'-'.repeat(36)}`,
    `#交易合计：${payments + (edits.wrongTotals ? 1 : 0)}笔，商家实收共${(paidSum / 100).toFixed(2)}元，商家优惠共0.00元`,
    `#退款合计：${refunds}笔，商家实收退款共-${(refundSum / 100).toFixed(2)}元，商家优惠退款共0.00元`,
    `#导出时间：[${y}年${m}月${d}日 09:12:40]`,
  ].join('\r\n');
  const summary = [
    '#支付宝业务汇总查询',
    '门店编号,门店名称,交易订单总笔数,退款订单总笔数,订单金额（元）,商家实收（元）,支付宝优惠（元）,商家优惠（元）,卡消费金额（元）,服务费（元）,分润（元）,实收净额（元）',
    `合计,,${payments},${refunds},${((paidSum - refundSum) / 100).toFixed(2)},${((paidSum - refundSum) / 100).toFixed(2)},0.00,0.00,0.00,0.00,0.00,0.00`,
  ].join('\r\n');
  const day = date.replaceAll('-', '');
  return zipSync({
    [`${app_pid}0156_${day}_业务明细.csv`]: iconv.encode(detail, 'gbk'),
    [`${app_pid}0156_${day}_业务明细(汇总).csv`]: iconv.encode(summary, 'gbk'),
  });
}
