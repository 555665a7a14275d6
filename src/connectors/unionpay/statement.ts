import { promisify } from 'node:util';
import { inflate as inflateCb } from 'node:zlib';
import { unzipSync } from 'fflate';
import { beijingTime, StatementFormatError, type StatementLine } from '../../domain/reconciliation.js';
import type { ChannelAccount, StatementFetch, StatementSource } from '../../ports/connector.js';
import type { AcpClient } from './client.js';
import { acpTime } from './sign.js';

// UnionPay's statement: the merchant's daily file of the file transfer (txnType 76, fileType 00,
// posted signed to filedownload.95516.com with the clearing day as settleDate MMDD). The signed
// answer carries the zip as base64 of its zlib deflation; in the zip, the entry
// `INN{yyMMdd}88ZM_{merId}` is the day's transactions (ZM), one per line, fixed width, GBK: 42
// fields of set byte lengths, each followed by one separator byte (UnionPay's file interface
// specification, part 3, 6.1, as its SDK demos read it). UnionPay's clearing day runs from 23:00
// to 23:00 Beijing time, so its days are those of UTC+09:00. The ZM has no currency: its amounts
// are the account's (CNY for a domestic account).

const inflate = promisify(inflateCb);

export const UNIONPAY_ZM_FORMAT = 'unionpay-acp-zm-zip';

/** The ZM fields' byte lengths, in order. */
const ZM_LENGTHS = [
  3, 11, 11, 6, 10, 19, 12, 4, 2, 21, 2, 32, 2, 6, 10, 13, 13, 4, 15, 2, 2, 6, 2, 4, 32, 1, 21, 15, 1, 15, 32, 13, 13,
  8, 32, 13, 13, 12, 2, 1, 32, 98,
];
/** The fields read, by their place in the line. */
const ZM = {
  sentAt: 4, // 交易传输时间 MMDDhhmmss, Beijing time
  amount: 6, // 交易金额, fen
  queryId: 9, // 查询流水号
  orderId: 11, // 商户订单号
  fee: 15, // 商户手续费 (a C or D before the digits: credited or debited to the merchant)
  txnType: 19, // 交易类型: 01 consume, 04 refund, 31 revoke
  origQryId: 26, // 原交易查询流水号 (a refund's or revoke's consume)
  merId: 27,
} as const;
const ZM_ENTRY = /^INN(\d{6})\d{2}ZM_/;

const gbk = new TextDecoder('gbk');

/** The fields of one ZM line, by byte length. */
function zmFields(line: Uint8Array, where: string): string[] {
  const out: string[] = [];
  let at = 0;
  for (const length of ZM_LENGTHS) {
    if (at + length > line.length && out.length <= ZM.merId)
      throw new StatementFormatError(`${where} ends at byte ${line.length}, inside field ${out.length + 1}`);
    out.push(gbk.decode(line.subarray(at, at + length)).trim());
    at += length + 1;
  }
  return out;
}

/** Fen written as digits, with UnionPay's C (to the merchant) or D (from it) before them when it is a fee. */
function fenOf(text: string, what: string): { fen: number; sign: 'C' | 'D' | '' } {
  const m = /^([CD]?)(\d{1,13})$/.exec(text);
  if (!m) throw new StatementFormatError(`${what} is not an amount: ${JSON.stringify(text)}`);
  return { fen: Number(m[2]), sign: m[1] as 'C' | 'D' | '' };
}

/** The ZM file out of what UnionPay gave (the zip, its ZM entry's yyMMdd with it), or the ZM file itself. */
function zmOf(raw: Uint8Array): { bytes: Uint8Array; yymmdd: string | undefined } {
  if (raw[0] !== 0x50 || raw[1] !== 0x4b) return { bytes: raw, yymmdd: undefined };
  let entries: Record<string, Uint8Array>;
  try {
    entries = unzipSync(raw);
  } catch (e) {
    throw new StatementFormatError(`not a zip: ${(e as Error).message}`);
  }
  const name = Object.keys(entries).find((n) => ZM_ENTRY.test(n.split('/').pop() ?? ''));
  if (!name) throw new StatementFormatError(`no ZM file in the zip (${Object.keys(entries).join(', ') || 'empty'})`);
  return { bytes: entries[name], yymmdd: ZM_ENTRY.exec(name.split('/').pop()!)![1] };
}

/** `MMDDhhmmss` in Beijing time, its year the file's (or the one before, for a December line in January's file). */
function sentAt(text: string, year: number, fileMonth: number, where: string): number {
  if (!/^\d{10}$/.test(text)) throw new StatementFormatError(`${where} 交易传输时间 is not MMDDhhmmss`);
  const month = Number(text.slice(0, 2));
  const y = month > fileMonth + 1 ? year - 1 : year;
  return beijingTime(
    `${y}-${text.slice(0, 2)}-${text.slice(2, 4)} ${text.slice(4, 6)}:${text.slice(6, 8)}:${text.slice(8, 10)}`,
    `${where} 交易传输时间`,
  );
}

export function* readUnionpayZm(
  raw: Uint8Array,
  account?: ChannelAccount,
  today = Date.now(),
): Generator<StatementLine> {
  const { bytes, yymmdd } = zmOf(raw);
  const currency = account?.config.currency_mode === 'cross-border' ? (account.config.currency ?? 'CNY') : 'CNY';
  // The file's day names the year its MMDD times are in; a bare ZM file is taken to be recent.
  const beijing = new Date(today + 8 * 3600_000);
  const year = yymmdd ? 2000 + Number(yymmdd.slice(0, 2)) : beijing.getUTCFullYear();
  const fileMonth = yymmdd ? Number(yymmdd.slice(2, 4)) : beijing.getUTCMonth() + 1;
  let lineNo = 0;
  let start = 0;
  let n = 0;
  while (start < bytes.length) {
    let end = bytes.indexOf(0x0a, start);
    if (end < 0) end = bytes.length;
    const line = bytes.subarray(start, end > start && bytes[end - 1] === 0x0d ? end - 1 : end);
    start = end + 1;
    if (line.length === 0) continue;
    n++;
    const where = `line ${n}`;
    const f = zmFields(line, where);
    const txnType = f[ZM.txnType];
    if (txnType !== '01' && txnType !== '04' && txnType !== '31') continue;
    const refund = txnType !== '01';
    const fee = fenOf(f[ZM.fee] || '0', `${where} 商户手续费`);
    const orderId = f[ZM.orderId];
    yield {
      line_no: ++lineNo,
      kind: refund ? 'refund' : 'payment',
      provider_ref: f[ZM.queryId],
      // A refund line names its consume by queryId only.
      out_trade_no: refund ? '' : orderId,
      // A revoke's orderId is the refund's with a V (connector.ts).
      refund_id: refund ? (txnType === '31' ? orderId.replace(/V$/, '') : orderId) : null,
      amount: fenOf(f[ZM.amount], `${where} 交易金额`).fen,
      currency,
      fee: fee.sign === 'C' ? -fee.fen : fee.fen,
      occurred_at: sentAt(f[ZM.sentAt], year, fileMonth, where),
      status: refund ? `${txnType === '04' ? 'refund' : 'revoke'} of ${f[ZM.origQryId]}` : 'consume',
    };
  }
}

/** `YYYY-MM-DD` as the file transfer's settleDate: `MMDD`. */
const settleDateOf = (date: string) => date.slice(5, 7) + date.slice(8, 10);

/**
 * The file download host beside the account's gateway: filedownload.95516.com for UnionPay's own
 * (gateway.95516.com, gateway.test.95516.com); any other endpoint (a proxy, a test double) serves both.
 */
export function fileEndpointOf(account: ChannelAccount): string {
  const gateway = (account.config.endpoint || 'https://gateway.95516.com').replace(/\/+$/, '');
  return gateway.replace(/^https:\/\/gateway\.((?:test\.)?95516\.com)$/, 'https://filedownload.$1');
}

export function unionpayStatements(client: AcpClient, now: () => number): StatementSource {
  return {
    format: UNIONPAY_ZM_FORMAT,
    timeZone: 'Etc/GMT-9',
    listsRefunds: true,
    // Made in the morning after the clearing day; asked for from 10:00 Beijing time.
    publishedAfterMs: 10 * 3600_000,
    async fetch(account: ChannelAccount, date: string): Promise<StatementFetch> {
      const r = await client.post(
        account,
        '/',
        {
          version: '5.1.0',
          encoding: 'UTF-8',
          signMethod: '01',
          txnType: '76',
          txnSubType: '01',
          bizType: '000000',
          accessType: '0',
          fileType: '00',
          merId: account.config.mer_id ?? '',
          settleDate: settleDateOf(date),
          txnTime: acpTime(now()),
        },
        fileEndpointOf(account),
      );
      if (r.kind === 'unknown') return r;
      const { respCode, respMsg, fileContent } = r.fields;
      if (respCode !== '00')
        return { kind: 'not_ready', reason: `UnionPay answered ${respCode ?? '-'} ${respMsg ?? ''}`.trim() };
      if (!fileContent) return { kind: 'unknown', reason: 'an answer without fileContent' };
      try {
        return { kind: 'ready', raw: new Uint8Array(await inflate(Buffer.from(fileContent, 'base64'))) };
      } catch (e) {
        return { kind: 'unknown', reason: `fileContent does not inflate: ${(e as Error).message}` };
      }
    },
    read: (raw, account) => readUnionpayZm(raw, account),
  };
}
