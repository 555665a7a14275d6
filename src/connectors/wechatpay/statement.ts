import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { gunzip as gunzipCb } from 'node:zlib';
import type { ChannelAccount, StatementFetch, StatementSource } from '../../ports/connector.js';
import type { WechatPayClient } from './client.js';
import { isCrossBorder } from './transformers.js';
import {
  beijingTime,
  statementAmount,
  StatementFormatError,
  textLines,
  type StatementLine,
} from '../../domain/reconciliation.js';

// WeChat Pay's trade bill (`GET /v3/bill/tradebill`, bill_type ALL): UTF-8 CSV (a BOM at times),
// its first line the column names, then one line per payment (交易状态 SUCCESS) or refund (REFUND,
// naming the payment's ids, with 商户退款单号 our out_refund_no), every field of a data line led
// by a backtick; then a summary: `总交易单数,...` and one line of totals. Times are Beijing time;
// amounts yuan; fees (手续费) have five decimals, charged positive, given back negative. Columns
// are found by name: older merchants' bills lack 订单金额 and 申请退款金额 (总金额, 退款金额 serve).

/** Off the event loop: a day's bill unzips to tens of megabytes. */
const gunzip = promisify(gunzipCb);

export const WECHATPAY_BILL_FORMAT = 'wechatpay-trade-bill-csv';

const SUMMARY_HEADER = '总交易单数';

/** A line's fields without their leading backtick. */
function fieldsOf(line: string): string[] {
  return line.split(',').map((f) => (f.startsWith('`') ? f.slice(1) : f).trim());
}

/** The bill's lines, read a line at a time; the summary's count checked at the end. */
export function* readWechatpayBill(bytes: Uint8Array | string): Generator<StatementLine> {
  const rows: Iterator<string, unknown> =
    typeof bytes === 'string' ? bytes.split(/\r?\n/)[Symbol.iterator]() : textLines(bytes, 'utf-8');
  const next = (): string => {
    const r = rows.next();
    return r.done ? '' : r.value;
  };
  let first = next();
  if (first.startsWith('\uFEFF')) first = first.slice(1);
  const header = fieldsOf(first);
  const col = (...names: string[]) => {
    for (const name of names) {
      const i = header.indexOf(name);
      if (i >= 0) return i;
    }
    throw new StatementFormatError(`no column ${names.join(' or ')}`);
  };
  const at = {
    time: col('交易时间'),
    transaction_id: col('微信订单号'),
    out_trade_no: col('商户订单号'),
    state: col('交易状态'),
    currency: col('货币种类'),
    paid: col('订单金额', '总金额'),
    out_refund_no: col('商户退款单号'),
    refunded: col('申请退款金额', '退款金额'),
    refund_state: col('退款状态'),
    fee: col('手续费'),
  };
  let dataRows = 0;
  let lineNo = 0;
  let fileLine = 1;
  for (let r = rows.next(); !r.done; r = rows.next()) {
    const row = r.value;
    fileLine++;
    if (row === '') continue;
    if (row.startsWith(SUMMARY_HEADER)) {
      const totals = fieldsOf(next());
      const count = Number(totals[fieldsOf(row).indexOf(SUMMARY_HEADER)]);
      if (!Number.isInteger(count)) throw new StatementFormatError('the summary has no count of lines');
      if (count !== dataRows)
        throw new StatementFormatError(`the summary counts ${count} lines; the file has ${dataRows}`);
      return;
    }
    if (!row.startsWith('`')) throw new StatementFormatError(`line ${fileLine} is not a line of data`);
    dataRows++;
    const f = fieldsOf(row);
    const where = `line ${fileLine}`;
    if (f.length < header.length)
      throw new StatementFormatError(`${where} has ${f.length} fields, not ${header.length}`);
    const state = f[at.state];
    // A revoked (撤销) payment was never paid: nothing to match.
    if (state !== 'SUCCESS' && state !== 'REFUND') continue;
    const refund = state === 'REFUND';
    const currency = f[at.currency] || 'CNY';
    yield {
      line_no: ++lineNo,
      kind: refund ? 'refund' : 'payment',
      provider_ref: f[at.transaction_id],
      out_trade_no: f[at.out_trade_no],
      refund_id: refund ? f[at.out_refund_no] || null : null,
      amount: Math.abs(statementAmount(f[refund ? at.refunded : at.paid], 2, `${where} amount`)),
      currency,
      fee: statementAmount(f[at.fee] || '0', 2, `${where} 手续费`),
      occurred_at: beijingTime(f[at.time], `${where} 交易时间`),
      status: refund ? `REFUND ${f[at.refund_state]}` : state,
    };
  }
  throw new StatementFormatError('no summary (总交易单数): the file is cut short');
}

/**
 * WeChat Pay's statements: the day's trade bill asked for (`GET /v3/bill/tradebill`, gzipped), then
 * its file from `download_url`, unzipped, its SHA1 checked against the signed answer's hash_value.
 * NO_STATEMENT_EXIST: nothing happened that day (an empty statement); STATEMENT_CREATING: later.
 */
export function wechatpayStatements(client: WechatPayClient): StatementSource {
  return {
    format: WECHATPAY_BILL_FORMAT,
    timeZone: 'Asia/Shanghai',
    listsRefunds: true,
    // Made from 09:00 the next day in Beijing; WeChat Pay says to ask after 10:00.
    publishedAfterMs: 10 * 3600_000,
    async fetch(account: ChannelAccount, date: string): Promise<StatementFetch> {
      // The cross-border API's statements (`/v3/global/statements`) are another format: not read yet.
      if (isCrossBorder(account))
        return { kind: 'unknown', reason: 'cross-border statements are not fetched: import the file with --file' };
      const reply = await client.call(
        account,
        'GET',
        `/v3/bill/tradebill?bill_date=${date}&bill_type=ALL&tar_type=GZIP`,
      );
      if (reply.kind === 'unknown') return reply;
      if (reply.kind === 'error') {
        if (reply.code === 'NO_STATEMENT_EXIST') return { kind: 'empty' };
        const why = `HTTP ${reply.status} ${reply.code} ${reply.message}`.trim();
        return reply.code === 'STATEMENT_CREATING'
          ? { kind: 'not_ready', reason: why }
          : { kind: 'unknown', reason: why };
      }
      const { download_url, hash_type, hash_value } = reply.body;
      if (typeof download_url !== 'string' || typeof hash_value !== 'string')
        return { kind: 'unknown', reason: 'the answer has no download_url and hash_value' };
      if (hash_type !== undefined && hash_type !== 'SHA1')
        return { kind: 'unknown', reason: `hash_type ${JSON.stringify(hash_type)}` };
      const file = await client.download(account, download_url);
      if (file.kind === 'unknown') return file;
      if (file.status !== 200) return { kind: 'unknown', reason: `HTTP ${file.status} for the bill's file` };
      let raw: Buffer;
      try {
        raw = file.bytes[0] === 0x1f && file.bytes[1] === 0x8b ? await gunzip(file.bytes) : file.bytes;
      } catch (e) {
        return { kind: 'unknown', reason: `the bill's file does not unzip: ${(e as Error).message}` };
      }
      const sha1 = createHash('sha1').update(raw).digest('hex');
      if (sha1 !== hash_value.toLowerCase())
        return { kind: 'unknown', reason: "the bill's file is not the one its hash_value names" };
      return { kind: 'ready', raw: new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength) };
    },
    read: readWechatpayBill,
  };
}
