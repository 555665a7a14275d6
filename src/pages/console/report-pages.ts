import { html } from '../html.js';
import { layout, messageBox, money, type PageContext } from './layout.js';
import type { SettlementLineView } from './view-types.js';

// The settlement report: per day (UTC), currency and method, what was paid, refunded and kept.

export function settlementPage(
  pc: PageContext,
  v: { from: string; to: string; lines: readonly SettlementLineView[]; error?: string },
): string {
  const { t } = pc;
  const csv = `/console/reports/settlement?${new URLSearchParams({ from: v.from, to: v.to, format: 'csv' }).toString()}`;
  return layout(
    pc,
    t('report.title'),
    html`<h1>${t('report.title')}</h1>${messageBox('error', v.error)}
    <form class="card filters" method="get" action="/console/reports/settlement">
      <div><label for="from">${t('tx.from')}</label><input id="from" name="from" type="date" value="${v.from}" required></div>
      <div><label for="to">${t('tx.to')}</label><input id="to" name="to" type="date" value="${v.to}" required></div>
      <div><button class="primary" type="submit">${t('tx.apply')}</button></div>
    </form>
    <p class="muted">${t('report.help')} <a href="${csv}" id="settlement-csv" download>${t('report.csv')}</a></p>
    ${
      v.lines.length === 0
        ? html`<p class="card muted" id="no-rows">${t('report.none')}</p>`
        : html`<div class="table-wrap"><table id="settlement"><thead><tr><th scope="col">${t('report.day')}</th><th scope="col">${t('wallet.currency')}</th><th scope="col">${t('tx.method')}</th><th scope="col" class="num">${t('dashboard.count')}</th><th scope="col" class="num">${t('report.gross')}</th><th scope="col" class="num">${t('report.refunds')}</th><th scope="col" class="num">${t('report.net')}</th></tr></thead>
      <tbody>${v.lines.map((l) => html`<tr><td>${new Date(l.day).toISOString().slice(0, 10)}</td><td>${l.currency}</td><td>${l.payment_method}</td><td class="num">${l.count}</td><td class="num">${money(pc, l.gross, l.currency)}</td><td class="num">${l.refund_count > 0 ? html`${money(pc, l.refunds, l.currency)} (${l.refund_count})` : money(pc, 0, l.currency)}</td><td class="num">${money(pc, l.net, l.currency)}</td></tr>`)}</tbody></table></div>`
    }`,
  );
}
