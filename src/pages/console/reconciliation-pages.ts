import { exponentOf, formatSignedAmount } from '../../domain/money.js';
import {
  EXCEPTION_ACTIONS,
  EXCEPTION_KIND_NAMES,
  type ExceptionKind,
  type MoneyException,
  type ProviderStatement,
  type StatementDay,
  type StoredStatementLine,
} from '../../domain/reconciliation.js';
import { html, type Raw } from '../html.js';
import { csrfField, layout, messageBox, when, type PageContext } from './layout.js';

// Reconciliation in the console (operators): the queue of money exceptions with its counts and
// filters, one exception with its evidence and what to do, the statements imported and the days
// still waiting, one statement's lines. The server checks the role again on every request
// (usecases/console-reconciliation.ts).

type ExceptionView = MoneyException;
type StatementView = ProviderStatement;

const minor = (amount: number, currency: string) => formatSignedAmount(amount, exponentOf(currency));

function feesOf(fees: string): string {
  return Object.entries(JSON.parse(fees) as Record<string, number>)
    .map(([c, m]) => `${minor(m, c)} ${c}`)
    .join(', ');
}

const orderLink = (order_id: string | null) =>
  order_id ? html`<a href="/console/transactions/${encodeURIComponent(order_id)}">${order_id}</a>` : '';

export function exceptionsPage(
  pc: PageContext,
  v: {
    exceptions: readonly ExceptionView[];
    counts: ReadonlyArray<{ kind: ExceptionKind; count: number }>;
    status: string;
    kind: string;
    notice?: string;
  },
): string {
  const { t } = pc;
  const opt = (value: string, label: string, selected: string) =>
    html`<option value="${value}"${value === selected ? html` selected` : ''}>${label}</option>`;
  return layout(
    pc,
    t('exceptions.title'),
    html`<h1>${t('exceptions.title')}</h1>${messageBox('notice', v.notice)}
    <p class="muted">${t('exceptions.help')}</p>
    <section class="card" id="exception-counts"><h2>${t('exceptions.open_by_kind')}</h2>${
      v.counts.length === 0
        ? html`<p class="muted">${t('exceptions.none_open')}</p>`
        : html`<ul>${v.counts.map((c) => html`<li><a href="/console/exceptions?kind=${c.kind}">${t(`exception.kind.${c.kind}`)}</a>: <span class="count">${c.count}</span></li>`)}</ul>`
    }</section>
    <form class="card filters" method="get" action="/console/exceptions">
      <div><label for="status">${t('tx.status')}</label><select id="status" name="status">${opt('open', t('exceptions.open'), v.status)}${opt('resolved', t('exceptions.resolved'), v.status)}${opt('all', t('exceptions.all'), v.status)}</select></div>
      <div><label for="kind">${t('exceptions.kind')}</label><select id="kind" name="kind">${opt('all', t('exceptions.all'), v.kind)}${EXCEPTION_KIND_NAMES.map((k) => opt(k, t(`exception.kind.${k}`), v.kind))}</select></div>
      <div><button class="primary" type="submit">${t('tx.apply')}</button></div>
    </form>
    ${
      v.exceptions.length === 0
        ? html`<p class="card muted" id="no-exceptions">${t('exceptions.none')}</p>`
        : html`<div class="table-wrap"><table id="exceptions"><thead><tr><th scope="col">${t('exceptions.when')}</th><th scope="col">${t('exceptions.kind')}</th><th scope="col">${t('exceptions.severity')}</th><th scope="col">order_id</th><th scope="col">${t('exceptions.detail')}</th><th scope="col">${t('tx.status')}</th></tr></thead>
      <tbody>${v.exceptions.map((e) => html`<tr id="exception-${e.exception_id}" class="severity-${e.severity}"><td><a href="/console/exceptions/${encodeURIComponent(e.exception_id)}">${when(pc, e.created_at)}</a></td><td>${t(`exception.kind.${e.kind}`)}</td><td>${t(`exception.severity.${e.severity}`)}</td><td>${orderLink(e.order_id)}</td><td>${e.detail}</td><td>${t(`exceptions.${e.exception_status}`)}</td></tr>`)}</tbody></table></div>`
    }`,
  );
}

export function exceptionPage(
  pc: PageContext,
  v: { exception: ExceptionView; canResolve: boolean; error?: string; notice?: string },
): string {
  const { t } = pc;
  const e = v.exception;
  const row = (label: string, value: Raw | string | null) =>
    value === null || value === '' ? '' : html`<tr><th scope="row">${label}</th><td>${value}</td></tr>`;
  let evidence = e.evidence;
  try {
    evidence = JSON.stringify(JSON.parse(e.evidence), null, 2);
  } catch {
    // Shown as stored.
  }
  return layout(
    pc,
    t('exception.title', { id: e.exception_id }),
    html`<p><a href="/console/exceptions">${t('exceptions.back')}</a></p>
    <h1>${t(`exception.kind.${e.kind}`)}</h1>${messageBox('error', v.error)}${messageBox('notice', v.notice)}
    <section class="card"><div class="table-wrap"><table id="exception"><tbody>
      ${row(t('exceptions.severity'), t(`exception.severity.${e.severity}`))}
      ${row(t('tx.status'), t(`exceptions.${e.exception_status}`))}
      ${row(t('exceptions.detail'), e.detail)}
      ${row(t('exceptions.source'), t(`exception.source.${e.source}`))}
      ${row(t('exceptions.when'), when(pc, e.created_at))}
      ${row(t('tx.provider'), e.provider)}
      ${row(t('id.wallet_id'), e.wallet_id ? html`<a href="/console/wallets/${encodeURIComponent(e.wallet_id)}/books">${e.wallet_id}</a>` : null)}
      ${row(t('tx.order_id'), e.order_id ? orderLink(e.order_id) : null)}
      ${row('out_trade_no', e.out_trade_no)}
      ${row(t('refunds.refund_id'), e.refund_id)}
      ${row(t('exceptions.statement'), e.statement_id ? html`<a href="/console/statements/${encodeURIComponent(e.statement_id)}">${e.statement_id}</a>${e.line_no !== null ? ` #${e.line_no}` : ''}` : null)}
    </tbody></table></div></section>
    <section class="card"><h2>${t('exceptions.todo')}</h2><p id="todo">${t(`exception.todo.${e.kind}`)}</p></section>
    <section class="card"><h2>${t('exceptions.evidence')}</h2><pre id="evidence">${evidence}</pre></section>
    ${
      e.exception_status === 'resolved'
        ? html`<section class="card" id="resolution"><h2>${t('exceptions.resolution')}</h2><p>${t('exceptions.resolved_by', { by: e.resolved_by ?? '', at: e.resolved_at === null ? '' : when(pc, e.resolved_at) })}</p><p>${e.note ?? ''}</p></section>`
        : v.canResolve
          ? html`${actionForms(pc, e)}<section class="card"><h2>${t('exceptions.resolve')}</h2><form method="post" action="/console/exceptions/${encodeURIComponent(e.exception_id)}/resolve">${csrfField(pc)}<div><label for="note">${t('exceptions.note')}</label><textarea id="note" name="note" required rows="3"></textarea></div><div><button class="primary" type="submit">${t('exceptions.resolve')}</button></div></form></section>`
          : ''
    }`,
  );
}

/** The actions that fit the exception's kind, besides resolving it with a note. */
function actionForms(pc: PageContext, e: ExceptionView): Raw {
  const { t } = pc;
  const path = `/console/exceptions/${encodeURIComponent(e.exception_id)}`;
  const actions = EXCEPTION_ACTIONS[e.kind];
  const forms: Raw[] = [];
  if (actions.includes('refund'))
    forms.push(
      html`<form method="post" action="${path}/refund">${csrfField(pc)}<p class="muted">${t('exceptions.refund_help')}</p><button class="primary" type="submit" id="refund-payment">${t('exceptions.refund')}</button></form>`,
    );
  if (actions.includes('settle'))
    forms.push(
      html`<form method="post" action="${path}/settle">${csrfField(pc)}<p class="muted">${t('exceptions.settle_help')}</p><button class="primary" type="submit" id="settle-payment">${t('exceptions.settle')}</button></form>`,
    );
  if (actions.includes('adjust'))
    forms.push(
      html`<form method="post" action="${path}/adjust">${csrfField(pc)}<p class="muted">${t('exceptions.adjust_help')}</p><div><label for="adjust-wallet">wallet_id</label><input id="adjust-wallet" name="wallet_id" required value="${e.wallet_id ?? ''}"></div><div><label for="adjust-amount">${t('books.adjust_amount')}</label><input id="adjust-amount" name="amount" required></div><div><label for="adjust-reason">${t('exceptions.reason')}</label><input id="adjust-reason" name="reason" required></div><div><button type="submit">${t('exceptions.adjust')}</button></div></form>`,
    );
  return forms.length === 0
    ? html``
    : html`<section class="card" id="actions"><h2>${t('exceptions.actions')}</h2>${forms}</section>`;
}

export function statementsPage(
  pc: PageContext,
  v: {
    statements: readonly StatementView[];
    waiting: readonly StatementDay[];
  },
): string {
  const { t } = pc;
  return layout(
    pc,
    t('statements.title'),
    html`<h1>${t('statements.title')}</h1><p class="muted">${t('statements.help')}</p>
    ${
      v.waiting.length === 0
        ? ''
        : html`<section class="card" id="waiting"><h2>${t('statements.waiting')}</h2><div class="table-wrap"><table><thead><tr><th scope="col">${t('statements.date')}</th><th scope="col">provider</th><th scope="col">merchant_id</th><th scope="col" class="num">${t('statements.attempts')}</th><th scope="col">${t('statements.next_try')}</th><th scope="col">${t('statements.why')}</th></tr></thead>
      <tbody>${v.waiting.map((d) => html`<tr><td>${d.statement_date}</td><td>${d.provider}</td><td>${d.merchant_id}</td><td class="num">${d.attempts}</td><td>${when(pc, d.next_try_at)}</td><td>${d.last_error ?? ''}</td></tr>`)}</tbody></table></div></section>`
    }
    ${
      v.statements.length === 0
        ? html`<p class="card muted" id="no-statements">${t('statements.none')}</p>`
        : html`<div class="table-wrap"><table id="statements"><thead><tr><th scope="col">${t('statements.date')}</th><th scope="col">provider</th><th scope="col">merchant_id</th><th scope="col" class="num">${t('statements.lines')}</th><th scope="col" class="num">${t('statements.matched')}</th><th scope="col" class="num">${t('statements.exceptions')}</th><th scope="col">${t('statements.fees')}</th><th scope="col">${t('statements.imported')}</th></tr></thead>
      <tbody>${v.statements.map((s) => html`<tr><td><a href="/console/statements/${encodeURIComponent(s.statement_id)}">${s.statement_date}</a>${s.status === 'importing' ? html` <span class="status-pending">${t('statements.importing')}</span>` : ''}</td><td>${s.provider}</td><td>${s.merchant_id}</td><td class="num">${s.line_count}</td><td class="num">${s.matched_count}</td><td class="num">${s.exception_count}</td><td>${feesOf(s.fees)}</td><td>${when(pc, s.imported_at)} · ${s.imported_by}</td></tr>`)}</tbody></table></div>`
    }`,
  );
}

export function statementPage(
  pc: PageContext,
  v: {
    statement: StatementView;
    lines: readonly StoredStatementLine[];
    next?: number;
  },
): string {
  const { t } = pc;
  const s = v.statement;
  return layout(
    pc,
    t('statements.one', { provider: s.provider, date: s.statement_date }),
    html`<p><a href="/console/statements">${t('statements.back')}</a></p>
    <h1>${t('statements.one', { provider: s.provider, date: s.statement_date })}</h1>
    ${s.status === 'importing' ? html`<section class="card"><p id="statement-importing">${t('statements.importing_help')}</p></section>` : ''}
    <section class="card"><p id="statement-summary">${t('statements.summary', { lines: s.line_count, matched: s.matched_count, exceptions: s.exception_count, fees: feesOf(s.fees) || '0' })}</p>
    <p class="muted">merchant_id ${s.merchant_id} · ${t(`statements.source_${s.source === 'file' ? 'file' : 'provider'}`)} · ${when(pc, s.imported_at)} · ${s.imported_by} · SHA-256 <code>${s.raw_sha256}</code></p></section>
    <div class="table-wrap"><table id="statement-lines"><thead><tr><th scope="col" class="num">#</th><th scope="col">${t('statements.kind')}</th><th scope="col">out_trade_no</th><th scope="col">refund_id</th><th scope="col">order_id</th><th scope="col" class="num">${t('books.amount')}</th><th scope="col" class="num">${t('books.fee')}</th><th scope="col">${t('exceptions.when')}</th><th scope="col">${t('statements.verdict')}</th></tr></thead>
    <tbody>${v.lines.map((l) => html`<tr class="verdict-${l.verdict}"><td class="num">${l.line_no}</td><td>${t(`statements.kind_${l.kind === 'refund' ? 'refund' : 'payment'}`)} (${l.status})</td><td>${l.out_trade_no}</td><td>${l.refund_id ?? ''}</td><td>${orderLink(l.order_id)}</td><td class="num">${minor(l.amount, l.currency)} ${l.currency}</td><td class="num">${minor(l.fee, l.currency)}</td><td>${when(pc, l.occurred_at)}</td><td>${l.exception_id ? html`<a href="/console/exceptions/${encodeURIComponent(l.exception_id)}">${t(`statements.verdict_${l.verdict}`)}</a>` : t(`statements.verdict_${l.verdict}`)}</td></tr>`)}</tbody></table></div>
    ${v.next !== undefined ? html`<p><a id="next-lines" href="/console/statements/${encodeURIComponent(s.statement_id)}?after=${v.next}">${t('statements.next')}</a></p>` : ''}`,
  );
}
