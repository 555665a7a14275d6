import type { WalletBalances } from '../domain/ledger.js';
import { exponentOf, formatSignedAmount } from '../domain/money.js';
import type { StatementView } from './console/books-pages.js';

// A wallet's statement as CSV, for `gateway statement --csv` and the console's download: an
// opening row, one row per movement, a closing row; amounts as decimals, a movement out negative.

export const CSV_HEADER = 'date,kind,order_id,refund_id,payout_id,pending,available,reserved,memo';
const csvField = (s: string) => (/[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);

export function statementCsv(s: StatementView & { from: number; to: number }): string {
  const e = exponentOf(s.currency);
  const m = (n: number) => formatSignedAmount(n, e);
  const row = (cells: string[]) => cells.map(csvField).join(',');
  const balances = (b: WalletBalances) => [m(b.pending), m(b.available), m(b.reserved)];
  return [
    CSV_HEADER,
    row([new Date(s.from).toISOString(), 'opening', '', '', '', ...balances(s.opening), '']),
    ...s.lines.map((l) =>
      row([
        new Date(l.created_at).toISOString(),
        l.kind,
        l.order_id ?? '',
        l.refund_id ?? '',
        l.payout_id ?? '',
        m(l.pending),
        m(l.available),
        m(l.reserved),
        l.memo ?? '',
      ]),
    ),
    row([new Date(s.to).toISOString(), 'closing', '', '', '', ...balances(s.closing), '']),
  ].join('\n');
}
