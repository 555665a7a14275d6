import { dayIn, StatementFormatError, type StatementLine } from '../../domain/reconciliation.js';
import { textOf } from '../../domain/text.js';
import type { ChannelAccount, StatementFetch, StatementSource } from '../../ports/connector.js';
import type { AzupayClient } from './client.js';
import { centsOf, errorOf, requestStatus } from './transformers.js';

// Azupay's day, as a statement: the payment requests completed in it (Sydney time, the zone of
// Azupay's own daily report), asked of its search (`POST /paymentRequest/search`, COMPLETED_DESC,
// a page of 100 at a time by `nextPageId`). Azupay's daily transaction report is not read: its
// columns are not published. The raw statement kept is `{"records": [...]}`, every page's records
// in the order they came. Azupay charges no fee per payment; its refunds (refundInformation) do not
// name our refund id and are on the request of their payment's day, so a day's refunds are not in
// it: refunds are reconciled by the refund recovery's queries, not by this statement.

export const AZUPAY_SEARCH_FORMAT = 'azupay-payment-request-search-json';
const TIME_ZONE = 'Australia/Sydney';
const PAGE = 100;
/** Pages asked at most for one day (100,000 requests): more is a loop, not a day. */
const MAX_PAGES = 1000;

type Json = Readonly<Record<string, unknown>>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The day's completed requests: a payment line for each that was paid (COMPLETE, or refunded by the merchant since). */
export function readAzupaySearch(raw: Uint8Array | string): StatementLine[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(typeof raw === 'string' ? raw : new TextDecoder('utf-8', { fatal: true }).decode(raw));
  } catch (e) {
    throw new StatementFormatError(`not JSON: ${(e as Error).message}`);
  }
  if (!isObject(parsed) || !Array.isArray(parsed.records)) throw new StatementFormatError('no records');
  const lines: StatementLine[] = [];
  for (const [i, record] of parsed.records.entries()) {
    const where = `record ${i + 1}`;
    if (!isObject(record) || !isObject(record.PaymentRequest) || !isObject(record.PaymentRequestStatus))
      throw new StatementFormatError(`${where} is not a payment request`);
    const s = record.PaymentRequestStatus;
    const status = requestStatus(s.status);
    if (!status) throw new StatementFormatError(`${where} has an unknown status ${JSON.stringify(s.status)}`);
    // Returned by Azupay itself (a wrong amount, or after expiry): the payer has it back, nothing was paid.
    const returnedByAzupay =
      status.startsWith('RETURN_') && textOf(s.returnInitiator ?? record.PaymentRequest.returnInitiator) !== 'MANUAL';
    if ((status !== 'COMPLETE' && !status.startsWith('RETURN_')) || returnedByAzupay) continue;
    const amount = centsOf(s.amountReceived);
    const at = Date.parse(textOf(s.completedDatetime));
    if (amount === undefined || amount <= 0) throw new StatementFormatError(`${where} has no amountReceived`);
    if (Number.isNaN(at)) throw new StatementFormatError(`${where} has no completedDatetime`);
    lines.push({
      line_no: lines.length + 1,
      kind: 'payment',
      provider_ref: textOf(s.paymentRequestId),
      out_trade_no: textOf(record.PaymentRequest.clientTransactionId),
      refund_id: null,
      amount,
      currency: 'AUD',
      fee: 0,
      occurred_at: at,
      status,
    });
  }
  return lines;
}

export function azupayStatements(client: AzupayClient): StatementSource {
  return {
    format: AZUPAY_SEARCH_FORMAT,
    timeZone: TIME_ZONE,
    // The search is live: an hour past the day lets the last payments finish.
    publishedAfterMs: 3600_000,
    listsRefunds: false,
    async fetch(account: ChannelAccount, date: string): Promise<StatementFetch> {
      const { from, to } = dayIn(date, TIME_ZONE);
      const search = {
        PaymentRequestSearch: {
          fromDate: new Date(from).toISOString(),
          // Azupay's range ends on its last instant.
          toDate: new Date(to - 1).toISOString(),
          searchByDateType: 'COMPLETED_DESC',
        },
      };
      const records: unknown[] = [];
      let next: string | undefined;
      for (let page = 0; page < MAX_PAGES; page++) {
        const query = `numberOfRecords=${PAGE}${next ? `&nextPageId=${encodeURIComponent(next)}` : ''}`;
        const r = await client.call(account, 'POST', `/paymentRequest/search?${query}`, search);
        if (r.kind === 'unknown') return r;
        if (r.status !== 200) return { kind: 'unknown', reason: `search: HTTP ${r.status} ${errorOf(r.body)}` };
        if (!Array.isArray(r.body.records)) return { kind: 'unknown', reason: 'search: an answer without records' };
        records.push(...(r.body.records as unknown[]));
        next = textOf(r.body.nextPageId) || undefined;
        if (!next) return { kind: 'ready', raw: new TextEncoder().encode(JSON.stringify({ records })) };
      }
      return { kind: 'unknown', reason: `search: more than ${MAX_PAGES} pages` };
    },
    read: readAzupaySearch,
  };
}
