// The fake UnionPay's merchant file of a clearing day, written from UnionPay's file interface
// specification (part 3, 6.1, as its SDK demos read it; src/connectors/unionpay/statement.ts reads
// it): a zip holding the ZM file (every transaction of the day, one line each: 42 fixed-width GBK
// fields, each followed by one space) and an empty ZME file (errors). `edits` make the
// disagreements reconciliation must find.
import { deflateSync } from 'node:zlib';
import { zipSync } from 'fflate';
import iconv from 'iconv-lite';

const LENGTHS = [
  3, 11, 11, 6, 10, 19, 12, 4, 2, 21, 2, 32, 2, 6, 10, 13, 13, 4, 15, 2, 2, 6, 2, 4, 32, 1, 21, 15, 1, 15, 32, 13, 13,
  8, 32, 13, 13, 12, 2, 1, 32, 98,
];

export interface ZmTransaction {
  txnType: '01' | '04' | '31';
  orderId: string;
  queryId: string;
  /** Fen. */
  txnAmt: number;
  /** The consume's queryId, for a refund or revoke. */
  origQryId?: string;
  at: number;
}

export interface ZmEdits {
  omit?: Set<string>;
  /** Another amount (fen) by orderId. */
  amounts?: Map<string, number>;
  extra?: ZmTransaction[];
}

const beijing = (ms: number) => new Date(ms + 8 * 3600_000).toISOString();
/** The clearing day (`yyyyMMdd`) of a moment: it turns at 23:00 Beijing time. */
export const clearingDay = (ms: number) => new Date(ms + 9 * 3600_000).toISOString().slice(0, 10).replace(/-/g, '');

/** UnionPay's fee on a consume: 0.5 %, debited (D); on a refund, its share credited back (C). */
export const unionpayFee = (fen: number) => Math.round(fen * 0.005);

function line(t: ZmTransaction, merId: string, amount: number): Buffer {
  const fee = unionpayFee(amount);
  const b = beijing(t.at);
  const values: Record<number, string> = {
    0: t.txnType === '01' ? 'S22' : t.txnType === '04' ? 'S30' : 'S31',
    1: '00049992',
    2: '00049992',
    3: t.queryId.slice(-6),
    4: b.slice(5, 7) + b.slice(8, 10) + b.slice(11, 13) + b.slice(14, 16) + b.slice(17, 19),
    5: '6216********0018',
    6: String(amount).padStart(12, '0'),
    7: '5811',
    8: '07',
    9: t.queryId,
    11: t.orderId,
    12: '01',
    15: (t.txnType === '01' ? 'D' : 'C') + String(fee).padStart(12, '0'),
    16: (t.txnType === '01' ? 'C' : 'D') + String(amount - fee).padStart(12, '0'),
    19: t.txnType,
    20: t.txnType === '01' ? '01' : '00',
    21: '000201',
    // A bill number in Chinese before the fields read: the file is cut by bytes, not characters.
    24: '账单测试',
    26: t.origQryId ?? '',
    27: merId,
    30: '银联测试商户',
  };
  const fields = LENGTHS.map((length, i) => {
    const bytes = iconv.encode(values[i] ?? '', 'gbk');
    if (bytes.length > length) throw new Error(`ZM field ${i + 1} is longer than ${length} bytes`);
    return Buffer.concat([bytes, Buffer.alloc(length - bytes.length, ' ')]);
  });
  return Buffer.concat(fields.flatMap((f) => [f, Buffer.from(' ')]));
}

/** The day's ZM (yyyyMMdd: the clearing day), its transactions in the order they happened. */
export function zmFile(merId: string, day: string, transactions: Iterable<ZmTransaction>, edits: ZmEdits = {}): Buffer {
  const lines = [...transactions, ...(edits.extra ?? [])]
    .filter((t) => clearingDay(t.at) === day && !edits.omit?.has(t.orderId))
    .sort((a, b) => a.at - b.at)
    .map((t) => line(t, merId, edits.amounts?.get(t.orderId) ?? t.txnAmt));
  return Buffer.concat(lines.flatMap((l) => [l, Buffer.from('\r\n')]));
}

/** The file transfer's fileContent: base64 of the zlib deflation of the zip. */
export function zmFileContent(merId: string, day: string, zm: Buffer): string {
  const yymmdd = day.slice(2);
  const zip = zipSync({
    [`INN${yymmdd}88ZM_${merId}`]: zm,
    [`INN${yymmdd}88ZME_${merId}`]: new Uint8Array(),
  });
  return deflateSync(zip).toString('base64');
}
