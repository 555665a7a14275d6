import type { WalletBalances } from '../../domain/ledger.js';
import { balancesCard } from './books-pages.js';
import type { Refund } from '../../domain/refund.js';
import { exponentOf, formatAmount, formatRate } from '../../domain/money.js';
import { PAYMENT_METHODS, STATUSES, type Transaction } from '../../domain/transaction.js';
import { html, type Interpolation, type Raw } from '../html.js';
import { csrfField, layout, messageBox, money, when, type PageContext } from './layout.js';
import { dataTable } from './table.js';
import { option, organisationSelect, queryOf, withQuery } from './filters.js';

// The signed-in pages: the dashboard, the transactions list and one transaction's page, the audit log.
// They take plain rows; what a user may see was decided before (usecases/console-reads.ts).

export interface SummaryView {
  currency: string;
  payment_method: string;
  status: Transaction['status'];
  count: number;
  amount: number;
}

/** Money of a window by currency and method: what was paid in it, or refunded in it. */
export interface MoneyView {
  currency: string;
  payment_method: string;
  amount: number;
}

function totals(rows: readonly SummaryView[], paid: readonly MoneyView[], refunds: readonly MoneyView[]) {
  const groups = new Map<
    string,
    {
      currency: string;
      payment_method: string;
      count: number;
      amount: number;
      refunded: number;
      success: number;
      ended: number;
    }
  >();
  const group = (r: { currency: string; payment_method: string }) => {
    const key = `${r.currency} ${r.payment_method}`;
    const g = groups.get(key) ?? {
      currency: r.currency,
      payment_method: r.payment_method,
      count: 0,
      amount: 0,
      refunded: 0,
      success: 0,
      ended: 0,
    };
    groups.set(key, g);
    return g;
  };
  for (const r of paid) group(r).amount += r.amount;
  for (const r of refunds) group(r).refunded += r.amount;
  for (const r of rows) {
    const g = group(r);
    g.count += r.count;
    if (r.status === 'paid') g.success += r.count;
    if (r.status !== 'pending') g.ended += r.count;
  }
  return [...groups.values()];
}

function rate(success: number, ended: number): string {
  return ended === 0 ? '–' : `${((success * 1000) / ended / 10).toFixed(1)}%`;
}

function summaryTable(
  pc: PageContext,
  title: string,
  rows: readonly SummaryView[],
  paid: readonly MoneyView[],
  refunds: readonly MoneyView[],
): Raw {
  const { t } = pc;
  const groups = totals(rows, paid, refunds);
  const success = groups.reduce((a, g) => a + g.success, 0);
  const ended = groups.reduce((a, g) => a + g.ended, 0);
  return html`<section class="card" aria-labelledby="h-${title}"><h2 id="h-${title}">${t(title)}</h2>
    ${
      groups.length === 0
        ? html`<p class="muted">${t('dashboard.none')}</p>`
        : html`<p>${t('dashboard.success_rate')}: <strong>${rate(success, ended)}</strong> <span class="muted">${t('dashboard.success_note')}</span></p>
    ${dataTable(
      [
        { label: t('tx.method') },
        { label: t('dashboard.volume'), num: true },
        { label: t('dashboard.refunded'), num: true },
        { label: t('dashboard.net'), num: true },
        { label: t('dashboard.count'), num: true },
        { label: t('dashboard.success_rate'), num: true },
      ],
      groups.map((g) => [
        t(`method.${g.payment_method}`),
        money(pc, g.amount, g.currency),
        money(pc, g.refunded, g.currency),
        money(pc, g.amount - g.refunded, g.currency),
        g.count,
        rate(g.success, g.ended),
      ]),
      { caption: html`${t('dashboard.by')}` },
    )}`
    }
  </section>`;
}

export function dashboardPage(
  pc: PageContext,
  d: {
    today: readonly SummaryView[];
    week: readonly SummaryView[];
    todayPaid: readonly MoneyView[];
    weekPaid: readonly MoneyView[];
    todayRefunds: readonly MoneyView[];
    weekRefunds: readonly MoneyView[];
    failing: number;
    /** Where the failing notifications are listed, for a user who may see that page. */
    failingHref?: string;
    balances?: readonly WalletBalances[];
    /** Operators: money exceptions open, and how many are urgent. */
    exceptions?: { open: number; urgent: number };
  },
): string {
  const { t } = pc;
  return layout(
    pc,
    t('dashboard.title'),
    html`<h1>${t('dashboard.title')}</h1>
    <div class="stats">${
      d.failingHref
        ? html`<a class="card stat" id="failing-link" href="${d.failingHref}"><div class="muted">${t('dashboard.failing')}</div><div class="value" id="failing">${d.failing}</div></a>`
        : html`<div class="card stat"><div class="muted">${t('dashboard.failing')}</div><div class="value" id="failing">${d.failing}</div></div>`
    }${
      d.exceptions
        ? html`<a class="card stat" id="exceptions-open" href="/console/exceptions"><div class="muted">${t('dashboard.exceptions')}</div><div class="value">${d.exceptions.open}</div>${d.exceptions.urgent > 0 ? html`<div class="urgent">${t('dashboard.exceptions_urgent', { count: d.exceptions.urgent })}</div>` : ''}</a>`
        : ''
    }</div>
    ${d.balances ? balancesCard(pc, d.balances) : ''}
    ${summaryTable(pc, 'dashboard.today', d.today, d.todayPaid, d.todayRefunds)}${summaryTable(pc, 'dashboard.week', d.week, d.weekPaid, d.weekRefunds)}`,
  );
}

export interface ListFilter {
  from?: string;
  to?: string;
  status?: string;
  payment_method?: string;
  wallet_id?: string;
  /** Operators only: one organisation's orders. */
  organisation_id?: string;
  q?: string;
}

/** The list's query string for a filter (and a page), as its links and the way back from an order carry it. */
export function listQuery(f: ListFilter & { after?: string }): string {
  return queryOf({ ...f });
}

/** The order's status; a paid order that was refunded in part or whole says how much. */
function statusCell(pc: PageContext, o: Pick<Transaction, 'status' | 'amount' | 'refunded_amount' | 'currency'>): Raw {
  const refunded =
    o.status === 'paid' && o.refunded_amount > 0
      ? html`, ${pc.t('status.refunded_of', { refunded: money(pc, o.refunded_amount, o.currency), amount: money(pc, o.amount, o.currency) })}`
      : '';
  return html`<span class="status-${o.status}">${pc.t(`status.${o.status}`)}${refunded}</span>`;
}

export function transactionsPage(
  pc: PageContext,
  v: {
    filter: ListFilter;
    rows: readonly Transaction[];
    next?: string;
    first: boolean;
    partial?: boolean;
    error?: string;
    /** The wallets the filter offers (a merchant's, or the chosen organisation's); none: typed. */
    wallets: readonly string[];
    /** Operators: the organisations the filter offers, and each row's organisation by its user_id. */
    organisations?: ReadonlyArray<{ organisation_id: number; organisation_name: string }>;
    organisationOf?: ReadonlyMap<string, { organisation_id: number; organisation_name: string }>;
  },
): string {
  const { t } = pc;
  const f = v.filter;
  const query = (extra: Record<string, string>, path = '/console/transactions') => withQuery(path, { ...f, ...extra });
  // The order's page links back to this very list (its filter and page).
  const back = listQuery(f);
  const orderHref = (order_id: string) =>
    `/console/transactions/${encodeURIComponent(order_id)}${back ? `?back=${encodeURIComponent(back)}` : ''}`;
  const operator = v.organisations !== undefined;
  const columns = [
    { label: t('tx.created') },
    { label: t('tx.order_id') },
    ...(operator ? [{ label: t('tx.organisation') }] : []),
    { label: t('tx.reference'), wrap: true },
    { label: t('tx.method') },
    { label: t('tx.amount'), num: true },
    { label: t('tx.status') },
  ];
  const walletFilter =
    v.wallets.length > 0 || !operator
      ? html`<select id="wallet_id" name="wallet_id">${option('', t('tx.any'), f.wallet_id)}${v.wallets.map((w) => option(w, w, f.wallet_id))}</select>`
      : html`<input id="wallet_id" name="wallet_id" value="${f.wallet_id ?? ''}" placeholder="W00000001" autocomplete="off">`;
  return layout(
    pc,
    t('tx.title'),
    html`<h1>${t('tx.title')}</h1>${messageBox('error', v.error)}
    <form class="card filters" method="get" action="/console/transactions" role="search" aria-label="${t('tx.filter')}">
      <div><label for="from">${t('tx.from')}</label><input id="from" name="from" type="date" value="${f.from ?? ''}"></div>
      <div><label for="to">${t('tx.to')}</label><input id="to" name="to" type="date" value="${f.to ?? ''}"></div>
      <div><label for="status">${t('tx.status')}</label><select id="status" name="status">${option('', t('tx.any'), f.status)}${STATUSES.map((s) => option(s, t(`status.${s}`), f.status))}</select></div>
      <div><label for="payment_method">${t('tx.method')}</label><select id="payment_method" name="payment_method">${option('', t('tx.any'), f.payment_method)}${PAYMENT_METHODS.map((m) => option(m, t(`method.${m}`), f.payment_method))}</select></div>
      ${operator ? organisationSelect(pc, v.organisations!, f.organisation_id) : ''}
      <div><label for="wallet_id">${t('tx.wallet')}</label>${walletFilter}</div>
      <div class="wide"><label for="q" title="${t('tx.search_help')}">${t('tx.search')}</label><input id="q" name="q" type="search" value="${f.q ?? ''}" placeholder="${t('tx.search_help')}" aria-describedby="q-help"><span class="visually-hidden" id="q-help">${t('tx.search_help')}</span></div>
      <div><button class="primary" type="submit">${t('tx.apply')}</button></div>
    </form>
    ${v.partial ? html`<p class="notice" role="status" id="partial">${t('tx.partial')}</p>` : ''}
    ${
      v.rows.length === 0
        ? html`<p class="card muted" id="no-rows">${t(v.partial ? 'tx.none_yet' : 'tx.none')}</p>`
        : dataTable(
            columns,
            v.rows.map((r) => {
              const org = v.organisationOf?.get(r.user_id);
              return [
                when(pc, r.created_at),
                html`<a href="${orderHref(r.order_id)}">${r.order_id}</a>`,
                ...(operator ? [org ? `${org.organisation_name} (${org.organisation_id})` : ''] : []),
                r.merchant_reference,
                t(`method.${r.payment_method}`),
                money(pc, r.amount, r.currency),
                statusCell(pc, r),
              ];
            }),
            { id: 'transactions' },
          )
    }
    <p class="pager">${v.first ? '' : html`<a href="${query({ after: '' })}">${t('tx.first')}</a>`}<a id="export-csv" href="${query({ after: '' }, '/console/transactions/export.csv')}" download>${t('tx.export')}</a>${v.next ? html`<a id="next-page" rel="next" href="${query({ after: v.next })}">${t('tx.next')}</a>` : ''}</p>`,
  );
}

export interface DetailView {
  order: Transaction;
  /** What the user's role may do here (the server checks again when it is done). */
  can?: { refund: boolean; cancel: boolean; resend: boolean };
  notice?: string;
  error?: string;
  organisation_name?: string;
  /** Operators: the order's organisation, linked. */
  organisation_id?: number;
  /** The list the user came from (its query string), for the way back. */
  back?: string;
  refunds: readonly Refund[];
  notifications: ReadonlyArray<{
    event_id: string;
    created_at: number;
    delivery_status: string;
    attempts: ReadonlyArray<{
      attempted_at: number;
      http_status: number | null;
      latency_ms: number;
      response_excerpt: string | null;
      error: string | null;
    }>;
    /** Attempts retention removed, and when the latest of them was made (null when none was). */
    attempts_pruned?: number;
    attempts_pruned_until?: number | null;
  }>;
  payments: ReadonlyArray<{
    out_trade_no: string;
    provider: string;
    flow: string;
    state: string;
    charged_amount: number;
    charged_currency: string;
    provider_ref: string | null;
    created_at: number;
    updated_at: number;
  }>;
  /** When the hosted page was opened (merchant-hosted: the gateway data fetched). */
  opened?: readonly number[];
  /** A refund that was refused: what was typed, shown again as typed (never the whole amount left). */
  typed?: { refund_amount: string; reference: string };
}

export function transactionPage(pc: PageContext, v: DetailView): string {
  const { t } = pc;
  const o = v.order;
  const events: Array<{ at: number; text: Raw }> = [{ at: o.created_at, text: html`${t('tx.event.created')}` }];
  for (const at of v.opened ?? [])
    events.push({ at, text: html`${t(o.host_type === 1 ? 'tx.event.gateway_data' : 'tx.event.opened')}` });
  for (const p of v.payments)
    events.push({
      at: p.created_at,
      text: html`${t('tx.event.payment', { out_trade_no: p.out_trade_no, flow: p.flow, state: p.state })}`,
    });
  if (o.status !== 'pending')
    events.push({
      at: o.pay_time ?? o.created_at,
      text: html`${t('tx.event.status', { status: t(`status.${o.status}`) })}${o.status_message ? ` (${o.status_message})` : ''}`,
    });
  for (const r of v.refunds)
    events.push({
      at: r.created_at,
      text: html`${t('tx.event.refund', { refund_id: r.refund_id, amount: money(pc, r.refund_amount, o.currency), status: t(`refund.status_${r.refund_status}`) })}`,
    });
  for (const n of v.notifications) {
    events.push({
      at: n.created_at,
      text: html`${t('tx.event.notification', { event_id: n.event_id })} (${t(`delivery.${n.delivery_status}`)})`,
    });
    for (const a of n.attempts) {
      const line = a.error
        ? t('tx.event.attempt_error', { error: a.error })
        : t('tx.event.attempt', { http_status: a.http_status ?? '-', latency_ms: a.latency_ms });
      events.push({
        at: a.attempted_at,
        text: html`${line}${a.response_excerpt ? html` · <code>${a.response_excerpt.slice(0, 80)}</code>` : ''}`,
      });
    }
    // At the time of the latest removed attempt: after the attempts kept from before them, before those kept after.
    if (n.attempts_pruned && n.attempts_pruned_until != null) {
      events.push({
        at: n.attempts_pruned_until,
        text: html`${t('tx.event.attempts_removed', { count: n.attempts_pruned })}`,
      });
    }
  }
  events.sort((a, b) => a.at - b.at);
  // A field's label in the reader's language, with the API's name of it where it has one (what an integrator searches for).
  const field = (label: string, value: Interpolation, name?: string) =>
    html`<dt>${label}${name ? html`<span class="field-name">${name}</span>` : ''}</dt><dd>${value}</dd>`;
  const wallet = html`${o.wallet_id} · <a href="/console/wallets/${encodeURIComponent(o.wallet_id)}" id="wallet-link">${t('tx.wallet_link')}</a>`;
  const organisation =
    v.organisation_name && v.organisation_id !== undefined
      ? html`<a href="/console/organisations/${v.organisation_id}" id="organisation-link">${v.organisation_name}</a> · <a href="/console/transactions?organisation_id=${v.organisation_id}">${t('tx.all_of_organisation')}</a>`
      : v.organisation_name;
  return layout(
    pc,
    t('tx.detail', { order_id: o.order_id }),
    html`<p class="back"><a href="/console/transactions${v.back ? `?${v.back}` : ''}" id="back-to-list">← ${t('tx.back_to_list')}</a></p>
    <h1>${t('tx.detail', { order_id: o.order_id })}</h1>${messageBox('notice', v.notice)}${messageBox('error', v.error)}
    <section class="card"><h2>${t('tx.fields')}</h2><dl class="fields" id="fields">
      ${field(t('tx.status'), statusCell(pc, o), 'status')}
      ${field(t('tx.amount'), money(pc, o.amount, o.currency), 'amount')}
      ${o.amount_cny !== null && o.currency !== 'CNY' ? field(t('tx.amount_cny'), money(pc, o.amount_cny, 'CNY'), 'amount_cny') : ''}
      ${o.currency_rate !== null ? field(t('tx.currency_rate'), formatRate(o.currency_rate, 6), 'currency_rate') : ''}
      ${o.refunded_amount > 0 ? field(t('tx.refunded'), money(pc, o.refunded_amount, o.currency)) : ''}
      ${field(t('tx.reference'), o.merchant_reference, 'merchant_reference')}
      ${field(t('tx.method'), t(`method.${o.payment_method}`), 'payment_method')}
      ${field(t('tx.host_type'), t(`tx.host_type_${o.host_type}`), 'host_type')}
      ${field(t('tx.channel'), o.channel)}
      ${field(t('tx.wallet'), wallet, 'wallet_id')}
      ${organisation ? field(t('tx.organisation'), organisation) : ''}
      ${field(t('tx.product_name'), o.product_name, 'product_name')}
      ${field(t('tx.callback_url'), o.callback_url, 'callback_url')}
      ${field(t('tx.return_url'), o.return_url, 'return_url')}
      ${field(t('tx.created'), when(pc, o.created_at))}
      ${o.pay_time !== null ? field(t('tx.pay_time'), when(pc, o.pay_time), 'pay_time') : ''}
    </dl></section>
    ${actions(pc, v)}
    ${paymentsTable(pc, v.payments)}
    <section class="card"><h2>${t('tx.timeline')}</h2><ol class="timeline" id="timeline">${events.map((e) => html`<li><time datetime="${new Date(e.at).toISOString()}">${when(pc, e.at)}</time>${e.text}</li>`)}</ol></section>`,
  );
}

/** The order's payments at its provider: what each charged, in which currency, and the provider's own id (what its support asks for). */
function paymentsTable(pc: PageContext, payments: DetailView['payments']): Raw | string {
  const { t } = pc;
  if (payments.length === 0) return '';
  return html`<section class="card"><h2>${t('tx.payments')}</h2>${dataTable(
    [
      { label: t('tx.out_trade_no') },
      { label: t('tx.provider') },
      { label: t('tx.flow') },
      { label: t('tx.charged'), num: true },
      { label: t('tx.payment_state') },
      { label: t('tx.provider_ref'), wrap: true },
      { label: t('tx.updated') },
    ],
    payments.map((p) => [
      p.out_trade_no,
      p.provider,
      p.flow,
      money(pc, p.charged_amount, p.charged_currency),
      t(`tx.payment_state_${p.state}`),
      p.provider_ref ?? '–',
      when(pc, p.updated_at),
    ]),
    { id: 'payments' },
  )}</section>`;
}

/** Refund (paid orders, roles that may) and resend (orders with a notification), as forms. */
function actions(pc: PageContext, v: DetailView): Raw | string {
  const { t } = pc;
  const o = v.order;
  const refund = v.can?.refund === true && o.status === 'paid' && o.refunded_amount < o.amount;
  const resend = v.can?.resend === true && v.notifications.length > 0;
  const cancel = v.can?.cancel === true && o.status === 'pending';
  const ask = v.can?.resend === true && o.status === 'pending' && v.payments.some((p) => p.state === 'open');
  if (!refund && !resend && !cancel && !ask) return '';
  const path = `/console/transactions/${encodeURIComponent(o.order_id)}`;
  const left = formatAmount(o.amount - o.refunded_amount, exponentOf(o.currency));
  return html`<section class="card" id="actions"><h2>${t('tx.actions')}</h2>
    ${
      refund
        ? html`<form method="post" action="${path}/refund" id="refund-form">${csrfField(pc)}
      <p class="muted">${t('tx.refund_left', { amount: money(pc, o.amount - o.refunded_amount, o.currency) })}</p>
      <label for="refund_amount">${t('tx.refund_amount')} (${o.currency})</label><input id="refund_amount" name="refund_amount" inputmode="decimal" required value="${v.typed?.refund_amount ?? left}">
      <label for="reference">${t('tx.refund_reference')}</label><input id="reference" name="reference" maxlength="200" value="${v.typed?.reference ?? ''}">
      <button class="primary" type="submit">${t('tx.refund')}</button></form>`
        : ''
    }
    ${ask ? html`<form method="post" action="${path}/ask-provider" id="ask-provider-form">${csrfField(pc)}<p class="muted">${t('tx.ask_provider_help')}</p><button class="primary" type="submit">${t('tx.ask_provider')}</button></form>` : ''}
    ${cancel ? html`<form method="post" action="${path}/cancel" id="cancel-form">${csrfField(pc)}<button class="primary" type="submit">${t('tx.cancel')}</button></form>` : ''}
    ${resend ? html`<form method="post" action="${path}/resend" id="resend-form">${csrfField(pc)}<button class="primary" type="submit">${t('tx.resend')}</button></form>` : ''}
  </section>`;
}

/** The step before a refund is made: what exactly will be refunded, and a button that does it. */
export function refundConfirmPage(pc: PageContext, o: Transaction, refund_amount: string, reference: string): string {
  const { t } = pc;
  const path = `/console/transactions/${encodeURIComponent(o.order_id)}`;
  const what = {
    amount: refund_amount,
    currency: o.currency,
    order_id: o.order_id,
    merchant_reference: o.merchant_reference,
  };
  return layout(
    pc,
    t('tx.refund_confirm_title'),
    html`<section class="card narrow"><h1>${t('tx.refund_confirm_title')}</h1><p id="refund-question">${t('tx.refund_confirm', what)}</p>
    ${reference ? html`<p id="refund-reference">${t('tx.refund_confirm_reference', { reference })}</p>` : ''}
    <form method="post" action="${path}/refund">${csrfField(pc)}
      <input type="hidden" name="refund_amount" value="${refund_amount}"><input type="hidden" name="reference" value="${reference}"><input type="hidden" name="confirmed" value="yes">
      <button class="primary" type="submit" id="confirm-refund">${t('tx.refund_confirm_button', what)}</button></form>
    <p><a href="${path}">${t('tx.back')}</a></p></section>`,
  );
}

/** The step before a cancel: which order, and a button that cancels it. */
export function cancelConfirmPage(pc: PageContext, o: Transaction): string {
  const { t } = pc;
  const path = `/console/transactions/${encodeURIComponent(o.order_id)}`;
  const what = {
    amount: money(pc, o.amount, o.currency),
    order_id: o.order_id,
    merchant_reference: o.merchant_reference,
  };
  return layout(
    pc,
    t('tx.cancel_confirm_title'),
    html`<section class="card narrow"><h1>${t('tx.cancel_confirm_title')}</h1><p id="cancel-question">${t('tx.cancel_confirm', what)}</p>
    <form method="post" action="${path}/cancel">${csrfField(pc)}<input type="hidden" name="confirmed" value="yes">
      <button class="primary" type="submit" id="confirm-cancel">${t('tx.cancel_confirm_button')}</button></form>
    <p><a href="${path}">${t('tx.back')}</a></p></section>`,
  );
}

export interface AuditView {
  audit_id: number;
  at: number;
  actor: string;
  action: string;
  object: string | null;
  ip: string | null;
  before: string | null;
  after: string | null;
}

export interface AuditFilterView {
  actor?: string;
  action?: string;
  organisation_id?: string;
  from?: string;
  to?: string;
}

/** Who made an entry, as a reader knows them: a user's email, the command line, or nobody signed in. */
function actorText(pc: PageContext, actor: string): string {
  if (actor === 'anonymous') return pc.t('audit.anonymous');
  if (actor.startsWith('cli:')) return pc.t('audit.cli', { name: actor.slice(4) });
  const email = /^cu_\S+ <(.*)>$/.exec(actor);
  return email ? email[1] : actor;
}

/** An action's name in the reader's language, with its code (what the CLI and the database say). */
function actionText(pc: PageContext, action: string): Raw {
  const key = `audit.action.${action}`;
  const label = pc.t(key);
  return label === key ? html`${action}` : html`${label}<span class="field-name">${action}</span>`;
}

export function auditPage(
  pc: PageContext,
  v: {
    rows: readonly AuditView[];
    older?: number;
    filter: AuditFilterView;
    actions: readonly string[];
    users: ReadonlyArray<{ console_user_id: string; email: string }>;
    organisations: ReadonlyArray<{ organisation_id: number; organisation_name: string }>;
    error?: string;
  },
): string {
  const { t } = pc;
  const f = v.filter;
  const older = withQuery('/console/audit', { ...f, ...(v.older && { before: String(v.older) }) });
  return layout(
    pc,
    t('audit.title'),
    html`<h1>${t('audit.title')}</h1>${messageBox('error', v.error)}
    <form class="card filters" method="get" action="/console/audit" role="search" aria-label="${t('tx.filter')}">
      <div><label for="actor">${t('audit.actor')}</label><select id="actor" name="actor">${option('', t('tx.any'), f.actor)}${option('cli:', t('audit.cli', { name: '*' }), f.actor)}${option('anonymous', t('audit.anonymous'), f.actor)}${v.users.map((u) => option(u.console_user_id, u.email, f.actor))}</select></div>
      <div><label for="action">${t('audit.action')}</label><select id="action" name="action">${option('', t('tx.any'), f.action)}${v.actions.map((a) => option(a, t(`audit.action.${a}`), f.action))}</select></div>
      ${organisationSelect(pc, v.organisations, f.organisation_id)}
      <div><label for="from">${t('tx.from')}</label><input id="from" name="from" type="date" value="${f.from ?? ''}"></div>
      <div><label for="to">${t('tx.to')}</label><input id="to" name="to" type="date" value="${f.to ?? ''}"></div>
      <div><button class="primary" type="submit">${t('tx.apply')}</button></div>
    </form>
    ${
      v.rows.length === 0
        ? html`<p class="card muted" id="no-rows">${t('audit.none')}</p>`
        : dataTable(
            [
              { label: t('audit.at'), width: 15 },
              { label: t('audit.actor'), width: 15 },
              { label: t('audit.action'), width: 15 },
              { label: t('audit.object'), width: 15 },
              { label: t('audit.ip'), width: 10 },
              { label: t('audit.change'), width: 30 },
            ],
            v.rows.map((r) => [
              when(pc, r.at),
              html`<span title="${r.actor}">${actorText(pc, r.actor)}</span>`,
              actionText(pc, r.action),
              r.object ?? '',
              r.ip ?? '',
              html`${r.before ?? ''}${r.before || r.after ? ' → ' : ''}${r.after ?? ''}`,
            ]),
            { id: 'audit', fixed: true },
          )
    }
    ${v.older ? html`<p class="pager"><a id="older" href="${older}">${t('audit.older')}</a></p>` : ''}`,
  );
}
