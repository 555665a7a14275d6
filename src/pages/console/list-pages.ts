import { html } from '../html.js';
import { csrfField, layout, messageBox, money, when, type PageContext } from './layout.js';
import { dataTable } from './table.js';
import { option, organisationSelect, withQuery } from './filters.js';

// The lists of things other than orders: every refund, newest first, with its order and its
// provider's answer so far.

export interface RefundRowView {
  refund_id: string;
  order_id: string;
  merchant_reference: string;
  payment_method: string;
  refund_amount: number;
  currency: string;
  refund_status: string;
  reference: string;
  created_at: number;
  updated_at: number;
  /** Operators: the order's organisation. */
  organisation?: string;
}

export interface RefundFilterView {
  refund_status?: string;
  from?: string;
  to?: string;
  organisation_id?: string;
}

export function refundsPage(
  pc: PageContext,
  v: {
    filter: RefundFilterView;
    rows: readonly RefundRowView[];
    next?: string;
    first: boolean;
    error?: string;
    statuses: readonly string[];
    /** Operators: the organisations the filter offers. */
    organisations?: ReadonlyArray<{ organisation_id: number; organisation_name: string }>;
  },
): string {
  const { t } = pc;
  const f = v.filter;
  const query = (extra: Record<string, string>) => withQuery('/console/refunds', { ...f, ...extra });
  const operator = v.organisations !== undefined;
  return layout(
    pc,
    t('refunds.title'),
    html`<h1>${t('refunds.title')}</h1>${messageBox('error', v.error)}
    <form class="card filters" method="get" action="/console/refunds" role="search" aria-label="${t('tx.filter')}">
      <div><label for="refund_status">${t('tx.status')}</label><select id="refund_status" name="refund_status">${option('', t('tx.any'), f.refund_status)}${v.statuses.map((s) => option(s, t(`refund.status_${s}`), f.refund_status))}</select></div>
      <div><label for="from">${t('tx.from')}</label><input id="from" name="from" type="date" value="${f.from ?? ''}"></div>
      <div><label for="to">${t('tx.to')}</label><input id="to" name="to" type="date" value="${f.to ?? ''}"></div>
      ${operator ? organisationSelect(pc, v.organisations!, f.organisation_id) : ''}
      <div><button class="primary" type="submit">${t('tx.apply')}</button></div>
    </form>
    <p class="muted">${t('refunds.help')}</p>
    ${
      v.rows.length === 0
        ? html`<p class="card muted" id="no-rows">${t('refunds.none')}</p>`
        : dataTable(
            [
              { label: t('tx.created') },
              { label: t('refunds.refund_id') },
              { label: t('tx.order_id') },
              ...(operator ? [{ label: t('tx.organisation'), wrap: true }] : []),
              { label: t('tx.reference'), wrap: true },
              { label: t('tx.method') },
              { label: t('tx.amount'), num: true },
              { label: t('tx.status') },
              { label: t('refunds.reference'), wrap: true },
            ],
            v.rows.map((r) => [
              when(pc, r.created_at),
              html`<code>${r.refund_id}</code>`,
              html`<a href="/console/transactions/${encodeURIComponent(r.order_id)}">${r.order_id}</a>`,
              ...(operator ? [r.organisation ?? ''] : []),
              r.merchant_reference,
              t(`method.${r.payment_method}`),
              money(pc, r.refund_amount, r.currency),
              html`<span class="refund-${r.refund_status}">${t(`refund.status_${r.refund_status}`)}</span>${r.refund_status === 'pending' ? '' : html` <span class="muted">${when(pc, r.updated_at)}</span>`}`,
              r.reference,
            ]),
            { id: 'refunds' },
          )
    }
    <p class="pager">${v.first ? '' : html`<a href="${query({})}">${t('tx.first')}</a>`}${v.next ? html`<a id="next-page" rel="next" href="${query({ after: v.next })}">${t('tx.next')}</a>` : ''}</p>`,
  );
}

export interface NotificationRowView {
  event_id: string;
  order_id: string;
  /** The status it reports. */
  status: string;
  callback_host: string;
  delivery_status: string;
  attempts: number;
  created_at: number;
  next_attempt_at: number;
  delivered_at: number | null;
  organisation?: string;
}

export interface NotificationFilterView {
  state?: string;
  callback_host?: string;
  from?: string;
  to?: string;
  organisation_id?: string;
}

/** Every notification, newest first: what it reports, where to, how it fares; sent again one at a time or a host's failing ones at once. */
export function notificationsPage(
  pc: PageContext,
  v: {
    filter: NotificationFilterView;
    rows: readonly NotificationRowView[];
    next?: string;
    first: boolean;
    error?: string;
    notice?: string;
    canResend: boolean;
    organisations?: ReadonlyArray<{ organisation_id: number; organisation_name: string }>;
  },
): string {
  const { t } = pc;
  const f = v.filter;
  const query = (extra: Record<string, string>) => withQuery('/console/notifications', { ...f, ...extra });
  const operator = v.organisations !== undefined;
  const state = (r: NotificationRowView) =>
    r.delivery_status === 'delivered' ? 'delivered' : r.attempts > 0 ? 'failing' : 'waiting';
  const back = query({});
  return layout(
    pc,
    t('notifications.title'),
    html`<h1>${t('notifications.title')}</h1>${messageBox('notice', v.notice)}${messageBox('error', v.error)}
    <form class="card filters" method="get" action="/console/notifications" role="search" aria-label="${t('tx.filter')}">
      <div><label for="state">${t('tx.status')}</label><select id="state" name="state">${option('', t('tx.any'), f.state)}${['failing', 'waiting', 'delivered'].map((s) => option(s, t(`notifications.state_${s}`), f.state))}</select></div>
      <div><label for="callback_host">${t('wallet.host')}</label><input id="callback_host" name="callback_host" value="${f.callback_host ?? ''}" placeholder="shop.example:443" autocomplete="off"></div>
      <div><label for="from">${t('tx.from')}</label><input id="from" name="from" type="date" value="${f.from ?? ''}"></div>
      <div><label for="to">${t('tx.to')}</label><input id="to" name="to" type="date" value="${f.to ?? ''}"></div>
      ${operator ? organisationSelect(pc, v.organisations!, f.organisation_id) : ''}
      <div><button class="primary" type="submit">${t('tx.apply')}</button></div>
    </form>
    ${
      v.canResend && f.callback_host
        ? html`<form class="card" method="post" action="/console/notifications/retry-host" id="retry-host-form">${csrfField(pc)}<input type="hidden" name="callback_host" value="${f.callback_host}"><input type="hidden" name="back" value="${back}">
      <p class="muted">${t('notifications.retry_host_help', { host: f.callback_host })}</p><button class="primary" type="submit">${t('notifications.retry_host')}</button></form>`
        : ''
    }
    ${
      v.rows.length === 0
        ? html`<p class="card muted" id="no-rows">${t('notifications.none')}</p>`
        : dataTable(
            [
              { label: t('tx.created') },
              { label: t('notifications.event') },
              { label: t('tx.order_id') },
              ...(operator ? [{ label: t('tx.organisation'), wrap: true }] : []),
              { label: t('notifications.reports') },
              { label: t('wallet.host'), wrap: true },
              { label: t('tx.status') },
              { label: t('notifications.attempts'), num: true },
              { label: t('notifications.next') },
              { label: '' },
            ],
            v.rows.map((r) => [
              when(pc, r.created_at),
              html`<code>${r.event_id}</code>`,
              html`<a href="/console/transactions/${encodeURIComponent(r.order_id)}">${r.order_id}</a>`,
              ...(operator ? [r.organisation ?? ''] : []),
              r.status ? t(`status.${r.status}`) : '',
              html`<a href="${query({ callback_host: r.callback_host, after: '' })}">${r.callback_host}</a>`,
              html`<span class="delivery-${state(r)}">${t(`notifications.state_${state(r)}`)}</span>`,
              r.attempts,
              r.delivery_status === 'delivered'
                ? when(pc, r.delivered_at ?? r.created_at)
                : when(pc, r.next_attempt_at),
              v.canResend
                ? html`<form method="post" action="/console/notifications/${encodeURIComponent(r.event_id)}/resend">${csrfField(pc)}<input type="hidden" name="back" value="${back}"><button class="link" type="submit">${t('tx.resend')}</button></form>`
                : '',
            ]),
            { id: 'notifications' },
          )
    }
    <p class="pager">${v.first ? '' : html`<a href="${query({ after: '' })}">${t('tx.first')}</a>`}${v.next ? html`<a id="next-page" rel="next" href="${query({ after: v.next })}">${t('tx.next')}</a>` : ''}</p>`,
  );
}
