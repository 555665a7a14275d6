import { StatementFormatError, timeIn, type StatementLine } from '../../domain/reconciliation.js';
import { textOf } from '../../domain/text.js';
import type { ChannelAccount, StatementFetch, StatementSource } from '../../ports/connector.js';
import type { PoliClient } from './client.js';
import { amountOf, transactionStatus } from './transformers.js';

// POLi's day, as a statement: GetDailyTransactions (`GET /api/v2/Transaction/GetDailyTransactions
// ?date=YYYY-MM-DD&statuscodes=Completed`), the day's completed transactions as a JSON array whose
// items carry GetTransaction's fields (TransactionRefNo, MerchantReference, CurrencyCode,
// AmountPaid, TransactionStatusCode, EndDateTime). The array is kept as POLi sent it. POLi's
// times carry no offset and its manual does not name the zone of its days: the gateway takes both
// as New Zealand's, where its POLi merchants are (docs/decisions.md). POLi makes no refunds and
// states no fee per transaction.

export const POLI_DAILY_FORMAT = 'poli-daily-transactions-json';
const TIME_ZONE = 'Pacific/Auckland';

type Json = Readonly<Record<string, unknown>>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A payment line for each Completed transaction; the others (if a file holds them) were never paid. */
export function readPoliDaily(raw: Uint8Array | string): StatementLine[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(typeof raw === 'string' ? raw : new TextDecoder('utf-8', { fatal: true }).decode(raw));
  } catch (e) {
    throw new StatementFormatError(`not JSON: ${(e as Error).message}`);
  }
  if (!Array.isArray(parsed)) throw new StatementFormatError('not a list of transactions');
  const lines: StatementLine[] = [];
  for (const [i, t] of parsed.entries()) {
    const where = `transaction ${i + 1}`;
    if (!isObject(t)) throw new StatementFormatError(`${where} is not an object`);
    const status = transactionStatus(t.TransactionStatusCode ?? t.TransactionStatus);
    if (status !== 'Completed') continue;
    const currency = textOf(t.CurrencyCode);
    const amount = amountOf(t.AmountPaid, currency);
    if (amount === undefined) throw new StatementFormatError(`${where} has no AmountPaid in a known currency`);
    const ref = textOf(t.TransactionRefNo);
    if (!ref) throw new StatementFormatError(`${where} has no TransactionRefNo`);
    const ended = textOf(t.EndDateTime) || textOf(t.EstablishedDateTime);
    lines.push({
      line_no: lines.length + 1,
      kind: 'payment',
      provider_ref: ref,
      out_trade_no: textOf(t.MerchantReference),
      refund_id: null,
      amount,
      currency,
      fee: 0,
      occurred_at: timeIn(ended, TIME_ZONE, `${where} EndDateTime`),
      status,
    });
  }
  return lines;
}

export function poliStatements(client: PoliClient): StatementSource {
  return {
    format: POLI_DAILY_FORMAT,
    timeZone: TIME_ZONE,
    // The list is live: an hour past the day lets the last bank receipts in.
    publishedAfterMs: 3600_000,
    listsRefunds: false,
    async fetch(account: ChannelAccount, date: string): Promise<StatementFetch> {
      const r = await client.get(
        account,
        `/api/v2/Transaction/GetDailyTransactions?date=${date}&statuscodes=Completed`,
      );
      if (r.kind === 'unknown') return r;
      const text = r.body.trim();
      if (r.status !== 200 || !text.startsWith('['))
        return { kind: 'unknown', reason: `GetDailyTransactions: HTTP ${r.status} ${text.slice(0, 200)}` };
      return { kind: 'ready', raw: new TextEncoder().encode(text) };
    },
    read: readPoliDaily,
  };
}
