import { unzipSync } from 'fflate';
import type { ChannelAccount, StatementFetch, StatementSource } from '../../ports/connector.js';
import { STATEMENT_DOWNLOAD, type ProviderHttp } from '../http.js';
import type { AlipayClient } from './client.js';
import {
  beijingTime,
  statementAmount,
  StatementFormatError,
  textLines,
  type StatementLine,
} from '../../domain/reconciliation.js';

// Alipay's trade bill (`alipay.data.dataservice.bill.downloadurl.query`, bill_type `trade`): a zip
// of GBK-encoded CSV files, the detail (`{pid}_{yyyyMMdd}_业务明细.csv`) beside its summary
// (`..._业务明细(汇总).csv`). The detail opens with `#` lines (title, account, the day), then the
// column line, one line per trade (交易) or refund (退款), an end marker and `#` totals:
// `#交易合计：6笔，...` and `#退款合计：4笔，...`. Fields carry trailing tabs; a refund's amounts are
// negative and it names the payment's trade_no and out_trade_no, with the refund's out_request_no in
// 退款批次号/请求号; a charged service fee (服务费) is negative. Times are Beijing time; amounts yuan.
// Columns are found by their names (service providers' bills carry more columns).

export const ALIPAY_BILL_FORMAT = 'alipay-trade-bill-zip';

const DETAIL_TITLE = '#支付宝业务明细查询';
const COLUMNS = {
  trade_no: '支付宝交易号',
  out_trade_no: '商户订单号',
  kind: '业务类型',
  finished: '完成时间',
  amount: '订单金额（元）',
  refund_no: '退款批次号/请求号',
  fee: '服务费（元）',
} as const;

/** Fields of a line: split on commas outside double quotes, each trimmed of its tabs and spaces. */
function fieldsOf(line: string): string[] {
  const out: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === '"') {
      if (quoted && line[i + 1] === '"') {
        cell += '"';
        i++;
      } else quoted = !quoted;
    } else if (c === ',' && !quoted) {
      out.push(cell.trim());
      cell = '';
    } else cell += c;
  }
  out.push(cell.trim());
  return out;
}

/** The detail file out of the bill's zip (found by its title line, whatever the entry's name). */
export function alipayBillDetail(zip: Uint8Array): Uint8Array {
  let entries: Record<string, Uint8Array>;
  try {
    entries = unzipSync(zip);
  } catch (e) {
    throw new StatementFormatError(`not a zip file: ${(e as Error).message}`);
  }
  const gbk = new TextDecoder('gbk');
  for (const bytes of Object.values(entries))
    if (gbk.decode(bytes.subarray(0, 64)).startsWith(DETAIL_TITLE)) return bytes;
  throw new StatementFormatError(`no detail file (${DETAIL_TITLE}) in the zip`);
}

/** The lines of an Alipay trade bill (the zip as downloaded), read a line at a time; the totals checked at the end. */
export function* readAlipayBill(zip: Uint8Array): Generator<StatementLine> {
  const rows = textLines(alipayBillDetail(zip), 'gbk', false);
  let header: string[] | undefined;
  let fileLine = 0;
  // Read by hand up to the column line: a for-of left early would close the lines.
  while (!header) {
    const r = rows.next();
    if (r.done) break;
    fileLine++;
    if (r.value !== '' && !r.value.startsWith('#')) header = fieldsOf(r.value);
  }
  if (!header) throw new StatementFormatError('no column line');
  const at = {} as Record<keyof typeof COLUMNS, number>;
  for (const [key, name] of Object.entries(COLUMNS) as Array<[keyof typeof COLUMNS, string]>) {
    at[key] = header.indexOf(name);
    if (at[key] < 0) throw new StatementFormatError(`no column ${name}`);
  }
  let summary: { payments: number; refunds: number } | undefined;
  let payments: number | undefined;
  const seen = { payments: 0, refunds: 0 };
  for (const row of rows) {
    fileLine++;
    if (row === '') continue;
    if (row.startsWith('#')) {
      const count = /^#(交易|退款)合计：(\d+)笔/.exec(row);
      if (count?.[1] === '交易') payments = Number(count[2]);
      if (count?.[1] === '退款' && payments !== undefined) summary = { payments, refunds: Number(count[2]) };
      continue;
    }
    const f = fieldsOf(row);
    const where = `line ${fileLine}`;
    if (f.length < header.length)
      throw new StatementFormatError(`${where} has ${f.length} fields, not ${header.length}`);
    const kind = f[at.kind] === '交易' ? 'payment' : f[at.kind] === '退款' ? 'refund' : undefined;
    if (!kind)
      throw new StatementFormatError(`${where}: 业务类型 ${JSON.stringify(f[at.kind])} is neither 交易 nor 退款`);
    const amount = statementAmount(f[at.amount], 2, `${where} 订单金额`);
    seen[kind === 'payment' ? 'payments' : 'refunds']++;
    yield {
      line_no: seen.payments + seen.refunds,
      kind,
      provider_ref: f[at.trade_no],
      out_trade_no: f[at.out_trade_no],
      refund_id: kind === 'refund' ? f[at.refund_no] || null : null,
      amount: Math.abs(amount),
      currency: 'CNY',
      // Charged: negative in the bill; given back with a refund: positive.
      fee: -statementAmount(f[at.fee] || '0', 2, `${where} 服务费`),
      occurred_at: beijingTime(f[at.finished], `${where} 完成时间`),
      status: f[at.kind],
    };
  }
  if (summary && (summary.payments !== seen.payments || summary.refunds !== seen.refunds))
    throw new StatementFormatError(
      `the totals say ${summary.payments} trades and ${summary.refunds} refunds; the file has ${seen.payments} and ${seen.refunds}`,
    );
}

/** `isp.bill_not_exist` (and the documented BILL_NOT_EXIST, NO_BILL_DATA): not published yet, or nothing that day. */
const NOT_YET = /bill_not_exist|no_bill_data/i;

/** Alipay's statements: the day's bill address asked for (signed), then the zip downloaded at once (it lives 30 s). */
export function alipayStatements(client: AlipayClient, http: ProviderHttp): StatementSource {
  return {
    format: ALIPAY_BILL_FORMAT,
    timeZone: 'Asia/Shanghai',
    listsRefunds: true,
    // Published by 09:00 the next day in Beijing, some days later: asked from 10:00.
    publishedAfterMs: 10 * 3600_000,
    async fetch(account: ChannelAccount, date: string): Promise<StatementFetch> {
      const reply = await client.call(account, 'alipay.data.dataservice.bill.downloadurl.query', {
        bill_type: 'trade',
        bill_date: date,
      });
      if (reply.kind === 'unknown') return { kind: 'unknown', reason: reply.reason };
      if (reply.kind === 'failure') {
        const why = `${reply.sub_code || reply.code} ${reply.sub_msg}`.trim();
        return NOT_YET.test(reply.sub_code) ? { kind: 'not_ready', reason: why } : { kind: 'unknown', reason: why };
      }
      const url = reply.body.bill_download_url;
      if (typeof url !== 'string' || !url) return { kind: 'unknown', reason: 'the answer has no bill_download_url' };
      const file = await http.download(url, {}, STATEMENT_DOWNLOAD);
      if (file.kind === 'unknown') return file;
      if (file.status !== 200) return { kind: 'unknown', reason: `HTTP ${file.status} for the bill's file` };
      return { kind: 'ready', raw: new Uint8Array(file.bytes) };
    },
    read: readAlipayBill,
  };
}
