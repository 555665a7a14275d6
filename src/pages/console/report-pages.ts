import { html } from '../html.js';
import { layout, messageBox, money, type PageContext } from './layout.js';
import { dataTable } from './table.js';
import { option, organisationSelect, withQuery } from './filters.js';
import type { SettlementLineView } from './view-types.js';

// The settlement report: per day (UTC), wallet, currency and method, what was paid, refunded and
// kept; then each wallet's totals over the range. An operator sees whose wallet each one is and
// may choose one organisation or one wallet.

export interface SettlementFilterView {
  from: string;
  to: string;
  organisation_id?: string;
  wallet_id?: string;
}

export function settlementPage(
  pc: PageContext,
  v: {
    filter: SettlementFilterView;
    lines: readonly SettlementLineView[];
    error?: string;
    /** The wallets the filter offers, with their organisation's name for an operator. */
    wallets: ReadonlyArray<{ wallet_id: string; organisation?: string }>;
    organisations?: ReadonlyArray<{ organisation_id: number; organisation_name: string }>;
  },
): string {
  const { t } = pc;
  const f = v.filter;
  const csv = withQuery('/console/reports/settlement', { ...f, format: 'csv' });
  const owner = new Map(v.wallets.map((w) => [w.wallet_id, w.organisation]));
  const operator = v.organisations !== undefined;
  const totals = new Map<string, SettlementLineView>();
  for (const l of v.lines) {
    const key = `${l.wallet_id} ${l.currency}`;
    const s = totals.get(key) ?? {
      ...l,
      day: 0,
      payment_method: '',
      count: 0,
      gross: 0,
      refund_count: 0,
      refunds: 0,
      net: 0,
    };
    s.count += l.count;
    s.gross += l.gross;
    s.refund_count += l.refund_count;
    s.refunds += l.refunds;
    s.net += l.net;
    totals.set(key, s);
  }
  const refunds = (l: SettlementLineView) =>
    l.refund_count > 0 ? html`${money(pc, l.refunds, l.currency)} (${l.refund_count})` : money(pc, 0, l.currency);
  const wallet = (id: string) =>
    operator && owner.get(id) ? html`${id} <span class="muted">${owner.get(id)}</span>` : id;
  return layout(
    pc,
    t('report.title'),
    html`<h1>${t('report.title')}</h1>${messageBox('error', v.error)}
    <form class="card filters" method="get" action="/console/reports/settlement">
      <div><label for="from">${t('tx.from')}</label><input id="from" name="from" type="date" value="${f.from}" required></div>
      <div><label for="to">${t('tx.to')}</label><input id="to" name="to" type="date" value="${f.to}" required></div>
      ${operator ? organisationSelect(pc, v.organisations!, f.organisation_id, t('charts.all_merchants')) : ''}
      <div><label for="wallet_id">${t('tx.wallet')}</label><select id="wallet_id" name="wallet_id">${option('', t('tx.any'), f.wallet_id)}${v.wallets.map((w) => option(w.wallet_id, w.organisation ? `${w.wallet_id} · ${w.organisation}` : w.wallet_id, f.wallet_id))}</select></div>
      <div><button class="primary" type="submit">${t('tx.apply')}</button></div>
    </form>
    <p class="muted">${t('report.help')} <a href="${csv}" id="settlement-csv" download>${t('report.csv')}</a></p>
    ${
      v.lines.length === 0
        ? html`<p class="card muted" id="no-rows">${t('report.none')}</p>`
        : html`<section class="card"><h2>${t('report.per_wallet')}</h2>${dataTable(
            [
              { label: t('tx.wallet'), wrap: true },
              { label: t('wallet.currency') },
              { label: t('dashboard.count'), num: true },
              { label: t('report.gross'), num: true },
              { label: t('report.refunds'), num: true },
              { label: t('report.net'), num: true },
            ],
            [...totals.values()].map((l) => [
              wallet(l.wallet_id),
              l.currency,
              l.count,
              money(pc, l.gross, l.currency),
              refunds(l),
              money(pc, l.net, l.currency),
            ]),
            { id: 'settlement-totals' },
          )}</section>
    <section class="card"><h2>${t('report.per_day')}</h2>${dataTable(
      [
        { label: t('report.day') },
        { label: t('tx.wallet'), wrap: true },
        { label: t('wallet.currency') },
        { label: t('tx.method') },
        { label: t('dashboard.count'), num: true },
        { label: t('report.gross'), num: true },
        { label: t('report.refunds'), num: true },
        { label: t('report.net'), num: true },
      ],
      v.lines.map((l) => [
        new Date(l.day).toISOString().slice(0, 10),
        wallet(l.wallet_id),
        l.currency,
        t(`method.${l.payment_method}`),
        l.count,
        money(pc, l.gross, l.currency),
        refunds(l),
        money(pc, l.net, l.currency),
      ]),
      { id: 'settlement' },
    )}</section>`
    }`,
  );
}
