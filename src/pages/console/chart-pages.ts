import { niceCeiling, type ChartDay, type ChartFigures } from '../../domain/charts.js';
import { PAYMENT_METHODS } from '../../domain/transaction.js';
import { html, type Raw } from '../html.js';
import { exponentOf } from '../../domain/money.js';
import { LOCALE } from './i18n.js';
import { option, organisationSelect } from './filters.js';
import { layout, money, type PageContext } from './layout.js';

// The charts page: the last 30 days as server-rendered SVG (no script, no library: each bar has its
// figure as a tooltip, and each chart its figures as a table beside it for screen readers and
// phones), and the window's totals.

const W = 480;
const H = 200;
const LEFT = 52;
const RIGHT = 18;
const TOP = 10;
const BOTTOM = 24;

function dayLabel(pc: PageContext, day: number): string {
  const d = new Date(day);
  return pc.lang === 'zh' ? `${d.getUTCMonth() + 1}月${d.getUTCDate()}日` : `${d.getUTCDate()}/${d.getUTCMonth() + 1}`;
}

/** A bar per day, with a y axis of three round steps; `format` writes a value as the page shows it. */
function barChart(
  pc: PageContext,
  o: {
    id: string;
    title: string;
    days: readonly ChartDay[];
    value: (d: ChartDay) => number | null;
    /** A bar's figure (its tooltip). */
    format: (n: number) => string;
    /** An axis step's figure: short (the title says the unit). */
    axis?: (n: number) => string;
    max?: number;
  },
): Raw {
  const values = o.days.map(o.value);
  const top = o.max ?? niceCeiling(Math.max(0, ...values.map((v) => v ?? 0)));
  const plotW = W - LEFT - RIGHT;
  const plotH = H - TOP - BOTTOM;
  const step = plotW / Math.max(1, o.days.length);
  const y = (v: number) => TOP + plotH - (v / top) * plotH;
  const ticks = [0, top / 2, top];
  const bars = o.days.map((d, i) => {
    const v = values[i];
    if (v === null || v === undefined) return '';
    const h = Math.max(v > 0 ? 1 : 0, (v / top) * plotH);
    return html`<rect x="${(LEFT + i * step + step * 0.15).toFixed(1)}" y="${(TOP + plotH - h).toFixed(1)}" width="${(step * 0.7).toFixed(1)}" height="${h.toFixed(1)}"><title>${dayLabel(pc, d.day)}: ${o.format(v)}</title></rect>`;
  });
  const labels = o.days.map((d, i) =>
    i % 5 === 0 || i === o.days.length - 1
      ? html`<text x="${(LEFT + i * step + step / 2).toFixed(1)}" y="${H - 6}" text-anchor="middle">${dayLabel(pc, d.day)}</text>`
      : '',
  );
  return html`<figure class="chart" id="${o.id}"><figcaption>${o.title}</figcaption>
    <svg viewBox="0 0 ${W} ${H}" role="img" aria-label="${o.title}" xmlns="http://www.w3.org/2000/svg">
      ${ticks.map((tk) => html`<line class="grid" x1="${LEFT}" x2="${W - RIGHT}" y1="${y(tk).toFixed(1)}" y2="${y(tk).toFixed(1)}"/><text x="${LEFT - 6}" y="${(y(tk) + 4).toFixed(1)}" text-anchor="end">${(o.axis ?? o.format)(tk)}</text>`)}
      <g class="bars">${bars}</g>${labels}
    </svg></figure>`;
}

export interface ChartsView {
  currencies: readonly string[];
  currency?: string;
  payment_method?: string;
  organisation_id?: string;
  figures?: ChartFigures;
  organisations?: ReadonlyArray<{ organisation_id: number; organisation_name: string }>;
}

export function chartsPage(pc: PageContext, v: ChartsView): string {
  const { t } = pc;
  const f = v.figures;
  const c = v.currency;
  const rate = (paid: number, ended: number) => (ended === 0 ? '–' : `${((paid * 1000) / ended / 10).toFixed(1)}%`);
  const amount = (n: number) => (c ? money(pc, Math.round(n), c) : String(n));
  // An axis step in whole units of the currency (integer division of minor units), grouped as the language groups.
  const whole = new Intl.NumberFormat(LOCALE[pc.lang], { notation: 'compact' });
  const axisAmount = (n: number) => whole.format(c ? Math.round(n / 10 ** exponentOf(c)) : n);
  return layout(
    pc,
    t('charts.title'),
    html`<h1>${t('charts.title')}</h1>
    <form class="card filters" method="get" action="/console/charts" aria-label="${t('tx.filter')}">
      <div><label for="currency">${t('wallet.currency')}</label><select id="currency" name="currency">${v.currencies.map((x) => option(x, x, c))}</select></div>
      <div><label for="payment_method">${t('tx.method')}</label><select id="payment_method" name="payment_method">${option('', t('tx.any'), v.payment_method)}${PAYMENT_METHODS.map((m) => option(m, t(`method.${m}`), v.payment_method))}</select></div>
      ${v.organisations ? organisationSelect(pc, v.organisations, v.organisation_id, t('charts.all_merchants')) : ''}
      <div><button class="primary" type="submit">${t('tx.apply')}</button></div>
    </form>
    ${
      !f || !c
        ? html`<p class="card muted" id="no-rows">${t('charts.none')}</p>`
        : html`<p class="muted">${t('charts.help')}</p>
    <div class="stats" id="totals">
      <div class="card stat"><div class="muted">${t('charts.volume')}</div><div class="value" id="total-volume">${amount(f.totals.volume)}</div></div>
      <div class="card stat"><div class="muted">${t('charts.refunds')}</div><div class="value" id="total-refunds">${amount(f.totals.refunds)}</div></div>
      <div class="card stat"><div class="muted">${t('charts.net')}</div><div class="value" id="total-net">${amount(f.totals.net)}</div></div>
      <div class="card stat"><div class="muted">${t('charts.orders')}</div><div class="value" id="total-orders">${f.totals.created}</div></div>
      <div class="card stat"><div class="muted">${t('dashboard.success_rate')}</div><div class="value" id="total-rate">${rate(f.totals.paid, f.totals.ended)}</div></div>
    </div>
    <section class="card charts">
      ${barChart(pc, { id: 'chart-volume', title: t('charts.volume_by_day', { currency: c }), days: f.days, value: (d) => d.volume, format: amount, axis: axisAmount })}
      ${barChart(pc, { id: 'chart-count', title: t('charts.count_by_day'), days: f.days, value: (d) => d.created, format: (n) => String(Math.round(n)) })}
      ${barChart(pc, { id: 'chart-rate', title: t('charts.rate_by_day'), days: f.days, value: (d) => (d.ended === 0 ? null : (d.paid * 100) / d.ended), format: (n) => `${Math.round(n)}%`, max: 100 })}
    </section>
    <details class="card"><summary>${t('charts.figures')}</summary><div class="table-wrap"><table id="chart-figures"><thead><tr><th scope="col">${t('report.day')}</th><th scope="col" class="num">${t('charts.volume')}</th><th scope="col" class="num">${t('charts.refunds')}</th><th scope="col" class="num">${t('charts.orders')}</th><th scope="col" class="num">${t('dashboard.success_rate')}</th></tr></thead>
    <tbody>${f.days.map((d) => html`<tr><td>${new Date(d.day).toISOString().slice(0, 10)}</td><td class="num">${amount(d.volume)}</td><td class="num">${amount(d.refunds)}</td><td class="num">${d.created}</td><td class="num">${rate(d.paid, d.ended)}</td></tr>`)}</tbody></table></div></details>`
    }`,
  );
}
