import { exponentOf } from '../../domain/money.js';
import { dayIn, StatementFormatError, type StatementLine } from '../../domain/reconciliation.js';
import { textOf } from '../../domain/text.js';
import type { ChannelAccount, StatementFetch, StatementSource } from '../../ports/connector.js';
import type { CoinPaymentsClient } from './client.js';
import { errorOf, invoiceState, type FiatCurrency } from './transformers.js';

// CoinPayments' day, as a statement: its invoice list (`GET /api/v1/merchant/invoices`, `from` and
// `to` on the invoices' creation, `limit` and the `after` cursor of `paging.cursors`), the
// invoices confirmed (paid) in the UTC day. The list filters by creation only, so it is asked from
// two days before the day (an invoice lives far less: the order's expiry) and each invoice is kept
// by its `confirmed` time. The statement kept is `{"currency": {...}, "items": [...]}`: the kept
// invoices, with the wallet currency's id at CoinPayments that their amounts are in. CoinPayments
// makes no refunds; its fees come out of what it pays the merchant in coin, not the invoice's
// amount, and are not read.

export const COINPAYMENTS_INVOICES_FORMAT = 'coinpayments-invoices-json';
const PAGE = 100;
const MAX_PAGES = 1000;
const CREATED_BEFORE_MS = 2 * 86_400_000;

type Json = Readonly<Record<string, unknown>>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export function readCoinpaymentsInvoices(raw: Uint8Array, account?: ChannelAccount): StatementLine[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(raw));
  } catch (e) {
    throw new StatementFormatError(`not JSON: ${(e as Error).message}`);
  }
  if (!isObject(parsed) || !Array.isArray(parsed.items) || !isObject(parsed.currency))
    throw new StatementFormatError('not a list of invoices with their currency');
  const currency = { id: textOf(parsed.currency.id), decimals: Number(parsed.currency.decimals) };
  const code = textOf(parsed.currency.code) || account?.config.currency || '';
  let exponent: number;
  try {
    exponent = exponentOf(code);
  } catch {
    throw new StatementFormatError(`unknown currency ${JSON.stringify(code)}`);
  }
  const lines: StatementLine[] = [];
  for (const [i, item] of parsed.items.entries()) {
    const where = `invoice ${i + 1}`;
    if (!isObject(item)) throw new StatementFormatError(`${where} is not an object`);
    const state = invoiceState(item, { charge: { currency: code }, exponent, currency });
    if (state.kind === 'unknown') throw new StatementFormatError(`${where}: ${state.reason}`);
    if (state.kind !== 'paid') continue;
    const at = Date.parse(textOf(item.confirmed) || textOf(item.completed));
    if (Number.isNaN(at)) throw new StatementFormatError(`${where} has no confirmed time`);
    lines.push({
      line_no: lines.length + 1,
      kind: 'payment',
      provider_ref: state.provider_ref,
      out_trade_no: textOf(item.invoiceId),
      refund_id: null,
      amount: state.charge.amount,
      currency: state.charge.currency,
      fee: 0,
      occurred_at: at,
      status: textOf(item.status),
    });
  }
  return lines;
}

export function coinpaymentsStatements(
  client: CoinPaymentsClient,
  fiat: (account: ChannelAccount, code: string) => Promise<FiatCurrency | { kind: string; reason: string }>,
): StatementSource {
  return {
    format: COINPAYMENTS_INVOICES_FORMAT,
    timeZone: 'UTC',
    // The list is live: an hour past the day lets the last confirmations in.
    publishedAfterMs: 3600_000,
    listsRefunds: false,
    async fetch(account: ChannelAccount, date: string): Promise<StatementFetch> {
      const code = account.config.currency ?? '';
      const currency = await fiat(account, code);
      if ('kind' in currency) return { kind: 'unknown', reason: currency.reason };
      const { from, to } = dayIn(date, 'UTC');
      const items: unknown[] = [];
      let after: string | undefined;
      for (let page = 0; page < MAX_PAGES; page++) {
        const query = new URLSearchParams({
          from: new Date(from - CREATED_BEFORE_MS).toISOString(),
          to: new Date(to - 1).toISOString(),
          limit: String(PAGE),
          ...(after && { after }),
        });
        const r = await client.call(account, 'GET', `/api/v1/merchant/invoices?${query}`);
        if (r.kind === 'unknown') return r;
        if (r.status !== 200 || !isObject(r.body) || !Array.isArray(r.body.items))
          return { kind: 'unknown', reason: `invoices: HTTP ${r.status} ${errorOf(r.body)}` };
        for (const item of r.body.items) {
          const confirmed = isObject(item) ? Date.parse(textOf(item.confirmed) || textOf(item.completed)) : NaN;
          if (confirmed >= from && confirmed < to) items.push(item);
        }
        const paging = isObject(r.body.paging) ? r.body.paging : {};
        const cursors = isObject(paging.cursors) ? paging.cursors : {};
        after = textOf(cursors.after) || undefined;
        if (!after || !paging.next || r.body.items.length === 0) {
          const statement = { currency: { ...currency, code }, items };
          return { kind: 'ready', raw: new TextEncoder().encode(JSON.stringify(statement)) };
        }
      }
      return { kind: 'unknown', reason: `invoices: more than ${MAX_PAGES} pages` };
    },
    read: readCoinpaymentsInvoices,
  };
}
