import { html, type Raw } from '../html.js';
import { csrfField, layout, messageBox, money, when, type PageContext } from './layout.js';
import type { AuditRowView, HostHealthView } from './view-types.js';

// Operators' pages for running the gateway: exchange rates with their history, and the
// notification outbox (backlog, oldest undelivered, hosts failing).

const rateText = (micros: number) => (micros / 1_000_000).toFixed(6).replace(/0+$/, '').replace(/\.$/, '');
/** The rate in an audit entry's JSON ({"rate_micros": n}), as a decimal. */
const auditRate = (json: string | null) =>
  json === null ? '–' : rateText((JSON.parse(json) as { rate_micros: number }).rate_micros);

export function ratesPage(
  pc: PageContext,
  v: {
    rates: ReadonlyArray<{ currency_from: string; currency_to: string; rate_micros: number; updated_at: number }>;
    history: readonly AuditRowView[];
    canConfigure: boolean;
    notice?: string;
    error?: string;
    typed?: { from: string; to: string; rate: string };
    /** A rate far from the last one, to be confirmed before it is set. */
    confirm?: { from: string; to: string; rate: string; before: number; change: number };
  },
): string {
  const { t } = pc;
  const c = v.confirm;
  return layout(
    pc,
    t('rates.title'),
    html`<h1>${t('rates.title')}</h1>${messageBox('notice', v.notice)}${messageBox('error', v.error)}
    ${
      c
        ? html`<section class="card" id="confirm-rate"><p role="alert">${t('rates.confirm', { from: c.from, to: c.to, rate: c.rate, before: rateText(c.before), change: (c.change * 100).toFixed(1) })}</p>
        <form method="post" action="/console/rates">${csrfField(pc)}<input type="hidden" name="from" value="${c.from}"><input type="hidden" name="to" value="${c.to}"><input type="hidden" name="rate" value="${c.rate}"><input type="hidden" name="confirmed" value="yes">
        <button class="primary" type="submit" id="confirm-rate-button">${t('rates.confirm_button', { rate: c.rate })}</button> <a href="/console/rates">${t('rates.confirm_cancel')}</a></form></section>`
        : ''
    }
    <div class="table-wrap"><table id="rates"><thead><tr><th scope="col">${t('rates.pair')}</th><th scope="col" class="num">${t('rates.rate')}</th><th scope="col">${t('rates.updated')}</th></tr></thead>
    <tbody>${v.rates.map((r) => html`<tr><td>${r.currency_from} → ${r.currency_to}</td><td class="num">${rateText(r.rate_micros)}</td><td>${when(pc, r.updated_at)}</td></tr>`)}</tbody></table></div>
    ${
      v.canConfigure
        ? html`<section class="card"><h2>${t('rates.set')}</h2><form method="post" action="/console/rates" id="set-rate" class="filters">${csrfField(pc)}
        <div><label for="rate-from">${t('rates.from')}</label><input id="rate-from" name="from" required maxlength="3" value="${v.typed?.from ?? 'NZD'}"></div>
        <div><label for="rate-to">${t('rates.to')}</label><input id="rate-to" name="to" required maxlength="3" value="${v.typed?.to ?? 'CNY'}"></div>
        <div><label for="rate-rate">${t('rates.rate')}</label><input id="rate-rate" name="rate" inputmode="decimal" required value="${v.typed?.rate ?? ''}"></div>
        <div><button class="primary" type="submit">${t('rates.set')}</button></div></form></section>`
        : ''
    }
    <section class="card"><h2>${t('rates.history')}</h2><div class="table-wrap"><table id="rate-history"><thead><tr><th scope="col">${t('audit.at')}</th><th scope="col">${t('rates.pair')}</th><th scope="col" class="num">${t('rates.before')}</th><th scope="col" class="num">${t('rates.rate')}</th><th scope="col">${t('audit.actor')}</th></tr></thead>
    <tbody>${v.history.map((e) => html`<tr><td>${when(pc, e.at)}</td><td>${e.object ?? ''}</td><td class="num">${auditRate(e.before)}</td><td class="num">${auditRate(e.after)}</td><td>${e.actor}</td></tr>`)}</tbody></table></div></section>`,
  );
}

export interface WaitingRefundView {
  refund_id: string;
  order_id: string;
  refund_amount: number;
  currency: string;
  created_at: number;
  updated_at: number;
}

export function outboxPage(
  pc: PageContext,
  v: {
    pending: number;
    oldest_created_at: number | null;
    failing: number;
    hosts: readonly HostHealthView[];
    refunds: { pending: number; rows: readonly WaitingRefundView[] };
    now: number;
  },
): string {
  const { t } = pc;
  const age =
    v.oldest_created_at === null
      ? '–'
      : t('outbox.age', { minutes: Math.floor((v.now - v.oldest_created_at) / 60_000) });
  return layout(
    pc,
    t('outbox.title'),
    html`<h1>${t('outbox.title')}</h1>
    <div class="stats"><div class="card stat"><div class="muted">${t('outbox.backlog')}</div><div class="value" id="backlog">${v.pending}</div></div>
    <div class="card stat"><div class="muted">${t('dashboard.failing')}</div><div class="value" id="failing">${v.failing}</div></div>
    <div class="card stat"><div class="muted">${t('outbox.oldest')}</div><div class="value" id="oldest">${age}</div></div></div>
    <section class="card" id="health"><h2>${t('outbox.hosts')}</h2>
    ${
      v.hosts.length === 0
        ? html`<p class="muted">${t('wallet.health_ok')}</p>`
        : html`<div class="table-wrap"><table><thead><tr><th scope="col">${t('wallet.host')}</th><th scope="col" class="num">${t('wallet.failing')}</th><th scope="col">${t('wallet.oldest')}</th><th scope="col">${t('wallet.last_failure')}</th></tr></thead>
      <tbody>${v.hosts.map((h) => html`<tr><td>${h.callback_host}</td><td class="num">${h.failing}</td><td>${when(pc, h.oldest_created_at)}</td><td class="wrap">${h.last ? html`${when(pc, h.last.attempted_at)}: ${h.last.error ?? `HTTP ${h.last.http_status}`}` : '–'}</td></tr>`)}</tbody></table></div>`
    }</section>
    ${waitingRefunds(pc, v.refunds)}`,
  );
}

/** Refunds a provider has not answered for: still reserved, asked again every round with the same refund_id. */
function waitingRefunds(pc: PageContext, v: { pending: number; rows: readonly WaitingRefundView[] }): Raw {
  const { t } = pc;
  return html`<section class="card" id="refunds-waiting"><h2>${t('outbox.refunds')}</h2><p class="muted">${t('outbox.refunds_help', { pending: v.pending })}</p>
    ${
      v.rows.length === 0
        ? html`<p class="muted">${t('outbox.refunds_none')}</p>`
        : html`<div class="table-wrap"><table><thead><tr><th scope="col">refund_id</th><th scope="col">order_id</th><th scope="col" class="num">${t('tx.amount')}</th><th scope="col">${t('tx.created')}</th><th scope="col">${t('outbox.refunds_asked')}</th></tr></thead>
      <tbody>${v.rows.map((r) => html`<tr><td>${r.refund_id}</td><td><a href="/console/transactions/${encodeURIComponent(r.order_id)}">${r.order_id}</a></td><td class="num">${r.currency ? money(pc, r.refund_amount, r.currency) : r.refund_amount}</td><td>${when(pc, r.created_at)}</td><td>${when(pc, r.updated_at)}</td></tr>`)}</tbody></table></div>`
    }</section>`;
}
