import { maskedAccount, PAYOUT_CURRENCIES, type BankAccount } from '../../domain/bank-account.js';
import type { FeePlan } from '../../domain/fees.js';
import type { WalletBalances } from '../../domain/ledger.js';
import type { AutoPayoutDay, AutoPayoutSetting } from '../../domain/auto-payout.js';
import { exponentOf, formatAmount } from '../../domain/money.js';
import type { Payout } from '../../domain/payout.js';
import { PAYMENT_METHODS } from '../../domain/transaction.js';
import { html, type Raw } from '../html.js';
import { csrfField, layout, messageBox, money, when, type PageContext } from './layout.js';

// The books in the console: the dashboard's balance card; a wallet's books (balances, statement
// with CSV, bank accounts, payouts; for operators its fee plans, limits and settlement delay); the
// operators' payout queue, every wallet's balances and the margin report. Which forms show follows
// the user's role; the server checks it again on every POST (usecases/console-books.ts).

export interface StatementView {
  currency: string;
  /** Where the next page starts, when there is one. */
  next?: { created_at: number; entry_key: string };
  opening: WalletBalances;
  closing: WalletBalances;
  lines: ReadonlyArray<{
    entry_key: string;
    kind: string;
    created_at: number;
    order_id: string | null;
    refund_id: string | null;
    payout_id: string | null;
    memo: string | null;
    pending: number;
    available: number;
    reserved: number;
  }>;
}

export interface LimitsView {
  payment_method: string;
  single_min: number | null;
  single_max: number | null;
  daily_max: number | null;
  updated_at: number;
  updated_by: string;
}

export interface WalletBooksView {
  wallet: { wallet_id: string; wallet_name: string; currency: string };
  organisation: { organisation_id: number; organisation_name: string };
  balances: WalletBalances;
  delay_days: number;
  statement: StatementView;
  bank_accounts: readonly BankAccount[];
  payouts: readonly Payout[];
  auto_payout: AutoPayoutSetting | undefined;
  auto_payout_days: readonly AutoPayoutDay[];
  fee_plans: readonly FeePlan[];
  limits: readonly LimitsView[];
  /** Changes to the limits, the settlement delay and adjustments, newest first. */
  history: ReadonlyArray<{ at: number; actor: string; action: string; object: string | null; after: string | null }>;
  from: string;
  to: string;
  /** A merchant's owner (or an operator's admin): add a bank account, ask for and cancel a payout. */
  canMoveMoney: boolean;
  /** An operator's admin: verify accounts, fee plans, limits, the settlement delay, the payouts' moves. */
  canConfigure: boolean;
  notice?: string;
  error?: string;
}

/** The three balances, per currency: the dashboard's card and the top of a wallet's books. */
export function balancesCard(pc: PageContext, rows: readonly WalletBalances[], id = 'balances'): Raw {
  const { t } = pc;
  if (rows.length === 0)
    return html`<section class="card" id="${id}"><h2>${t('books.balances')}</h2><p class="muted">${t('books.no_balance')}</p></section>`;
  return html`<section class="card" id="${id}"><h2>${t('books.balances')}</h2>
    <div class="table-wrap"><table><thead><tr><th scope="col">${t('wallet.currency')}</th><th scope="col" class="num">${t('books.pending')}</th><th scope="col" class="num">${t('books.available')}</th><th scope="col" class="num">${t('books.reserved')}</th></tr></thead>
    <tbody>${rows.map((b) => html`<tr><td>${b.currency}</td><td class="num">${money(pc, b.pending, b.currency)}</td><td class="num">${money(pc, b.available, b.currency)}</td><td class="num">${money(pc, b.reserved, b.currency)}</td></tr>`)}</tbody></table></div>
    <p class="muted">${t('books.balances_help')}</p></section>`;
}

/** A signed amount: money() takes none below zero. */
function signed(pc: PageContext, minor: number, currency: string): string {
  return minor < 0 ? `−${money(pc, -minor, currency)}` : money(pc, minor, currency);
}

function statementSection(pc: PageContext, v: WalletBooksView, path: string): Raw {
  const { t } = pc;
  const s = v.statement;
  const c = s.currency;
  const csv = `${path}/statement.csv?${new URLSearchParams({ from: v.from, to: v.to }).toString()}`;
  const ref = (l: StatementView['lines'][number]) =>
    l.order_id
      ? html`<a href="/console/transactions/${encodeURIComponent(l.order_id)}">${l.order_id}</a>`
      : (l.payout_id ?? '');
  const row = (label: string, b: WalletBalances, id: string) =>
    html`<tr id="${id}"><th scope="row" colspan="3">${label}</th><td class="num">${signed(pc, b.pending, c)}</td><td class="num">${signed(pc, b.available, c)}</td><td class="num">${signed(pc, b.reserved, c)}</td></tr>`;
  return html`<section class="card"><h2>${t('books.statement')}</h2>
    <form class="filters" method="get" action="${path}">
      <div><label for="from">${t('tx.from')}</label><input id="from" name="from" type="date" value="${v.from}" required></div>
      <div><label for="to">${t('tx.to')}</label><input id="to" name="to" type="date" value="${v.to}" required></div>
      <div><button class="primary" type="submit">${t('tx.apply')}</button></div>
    </form>
    <p class="muted">${t('books.statement_help')} <a href="${csv}" id="statement-csv" download>${t('report.csv')}</a></p>
    <div class="table-wrap"><table id="statement"><thead><tr><th scope="col">${t('books.when')}</th><th scope="col">${t('books.kind')}</th><th scope="col">${t('books.reference')}</th><th scope="col" class="num">${t('books.pending')}</th><th scope="col" class="num">${t('books.available')}</th><th scope="col" class="num">${t('books.reserved')}</th></tr></thead>
    <tbody>${row(t('books.opening'), s.opening, 'opening')}
    ${s.lines.map((l) => html`<tr><td>${when(pc, l.created_at)}</td><td>${t(`books.kind_${l.kind}`)}</td><td>${ref(l)}</td><td class="num">${l.pending ? signed(pc, l.pending, c) : ''}</td><td class="num">${l.available ? signed(pc, l.available, c) : ''}</td><td class="num">${l.reserved ? signed(pc, l.reserved, c) : ''}</td></tr>`)}
    ${row(t('books.closing'), s.closing, 'closing')}</tbody></table></div>
    ${s.next ? html`<p><a id="statement-next" href="${path}?${new URLSearchParams({ from: v.from, to: v.to, after: `${s.next.created_at}-${s.next.entry_key}` }).toString()}">${t('books.next_page')}</a></p>` : ''}</section>`;
}

function bankAccountsSection(pc: PageContext, v: WalletBooksView, path: string): Raw {
  const { t } = pc;
  const c = v.wallet.currency;
  const shown = (a: BankAccount) =>
    a.verified_at === null ? [a.bsb, a.account_number].filter(Boolean).join(' ') : maskedAccount(a);
  const form =
    v.canMoveMoney && (c === 'AUD' || c === 'NZD')
      ? html`<form class="inline" method="post" action="${path}/bank-accounts">${csrfField(pc)}
        <div><label for="holder">${t('books.holder')}</label><input id="holder" name="holder" required maxlength="32"></div>
        ${
          c === 'AUD'
            ? html`<div><label for="bsb">BSB</label><input id="bsb" name="bsb" required inputmode="numeric" placeholder="123-456"></div><div><label for="account_number">${t('books.account_number')}</label><input id="account_number" name="account_number" required inputmode="numeric"></div>`
            : html`<div><label for="nz_account">${t('books.nz_account')}</label><input id="nz_account" name="nz_account" required placeholder="12-3456-1234567-00"></div>`
        }
        <div><button type="submit">${t('books.add_account')}</button></div></form>`
      : '';
  return html`<section class="card"><h2>${t('books.bank_accounts')}</h2>
    ${
      v.bank_accounts.length === 0
        ? html`<p class="muted">${t('books.no_accounts')}</p>`
        : html`<div class="table-wrap"><table id="bank-accounts"><thead><tr><th scope="col">${t('books.holder')}</th><th scope="col">${t('books.account')}</th><th scope="col">${t('tx.status')}</th><th scope="col"></th></tr></thead>
      <tbody>${v.bank_accounts.map((a) => html`<tr><td>${a.holder}</td><td>${shown(a)}</td><td>${a.verified_at === null ? t('books.unverified') : t('books.verified_at', { at: when(pc, a.verified_at) })}</td><td>${a.verified_at === null && v.canConfigure ? html`<form method="post" action="/console/bank-accounts/${encodeURIComponent(a.bank_account_id)}/verify">${csrfField(pc)}<button type="submit">${t('books.verify')}</button></form>` : ''}</td></tr>`)}</tbody></table></div>`
    }
    ${form}<p class="muted">${t('books.accounts_help')}</p></section>`;
}

export function payoutRows(pc: PageContext, payouts: readonly Payout[], actions: (p: Payout) => Raw | string): Raw {
  const { t } = pc;
  return html`<div class="table-wrap"><table class="payouts"><thead><tr><th scope="col">${t('books.payout')}</th><th scope="col">wallet_id</th><th scope="col" class="num">${t('books.amount')}</th><th scope="col" class="num">${t('books.fee')}</th><th scope="col">${t('tx.status')}</th><th scope="col">${t('books.requested')}</th><th scope="col"></th></tr></thead>
    <tbody>${payouts.map((p) => html`<tr id="payout-${p.payout_id}"><td>${p.payout_id}</td><td><a href="/console/wallets/${encodeURIComponent(p.wallet_id)}/books">${p.wallet_id}</a></td><td class="num">${money(pc, p.amount, p.currency)}</td><td class="num">${money(pc, p.fee, p.currency)}</td><td>${t(`books.payout_${p.payout_status}`)}${p.return_reason ? ` (${p.return_reason})` : ''}</td><td>${when(pc, p.requested_at)}</td><td>${actions(p)}</td></tr>`)}</tbody></table></div>`;
}

export function moveButton(pc: PageContext, p: Payout, to: 'approve' | 'cancel' | 'paid' | 'returned'): Raw {
  const { t } = pc;
  return html`<form class="inline" method="post" action="/console/payouts/${encodeURIComponent(p.payout_id)}/${to}">${csrfField(pc)}${
    to === 'returned'
      ? html`<input name="reason" required aria-label="${t('books.return_reason')}" placeholder="${t('books.return_reason')}">`
      : ''
  }<button type="submit">${t(`books.move_${to}`)}</button></form>`;
}

function payoutsSection(pc: PageContext, v: WalletBooksView, path: string): Raw {
  const { t } = pc;
  const verified = v.bank_accounts.some((a) => a.verified_at !== null);
  return html`<section class="card"><h2>${t('books.payouts')}</h2>
    ${v.payouts.length === 0 ? html`<p class="muted">${t('books.no_payouts')}</p>` : payoutRows(pc, v.payouts, (p) => (v.canMoveMoney && (p.payout_status === 'requested' || p.payout_status === 'approved') ? moveButton(pc, p, 'cancel') : ''))}
    ${
      v.canMoveMoney && verified
        ? html`<form class="inline" method="post" action="${path}/payouts">${csrfField(pc)}<div><label for="amount">${t('books.amount')} (${v.wallet.currency})</label><input id="amount" name="amount" required inputmode="decimal"></div><div><button type="submit">${t('books.request_payout')}</button></div></form>`
        : ''
    }<p class="muted">${t('books.payouts_help')}</p></section>`;
}

function autoPayoutSection(pc: PageContext, v: WalletBooksView, path: string): Raw {
  const { t } = pc;
  const s = v.auto_payout;
  const c = v.wallet.currency;
  const decimal = (minor: number) => formatAmount(minor, exponentOf(c));
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  return html`<section class="card" id="auto-payout"><h2>${t('books.auto_payout')}</h2>
    <p>${s ? t('books.auto_on', { above: money(pc, s.above, c), keep: money(pc, s.keep, c) }) : t('books.auto_off')}</p>
    ${
      v.auto_payout_days.length === 0
        ? ''
        : html`<ul class="auto-payout-days">${v.auto_payout_days.map((d) => html`<li>${d.payout_id ? t('books.auto_day_payout', { day: day(d.day), payout_id: d.payout_id }) : t('books.auto_day_skipped', { day: day(d.day), note: d.note ?? '' })}</li>`)}</ul>`
    }
    ${
      v.canMoveMoney && PAYOUT_CURRENCIES.includes(c)
        ? html`<form class="inline" method="post" action="${path}/auto-payout">${csrfField(pc)}<div><label for="auto-above">${t('books.auto_above')} (${c})</label><input id="auto-above" name="above" required inputmode="decimal" value="${s ? decimal(s.above) : ''}"></div><div><label for="auto-keep">${t('books.auto_keep')} (${c})</label><input id="auto-keep" name="keep" inputmode="decimal" value="${s ? decimal(s.keep) : ''}"></div><div><button type="submit">${t('books.auto_save')}</button></div></form>${
            s
              ? html`<form class="inline" method="post" action="${path}/auto-payout">${csrfField(pc)}<input type="hidden" name="off" value="1"><button type="submit">${t('books.auto_turn_off')}</button></form>`
              : ''
          }`
        : ''
    }</section>`;
}

function planSection(pc: PageContext, v: WalletBooksView, path: string): Raw {
  const { t } = pc;
  const c = v.wallet.currency;
  const opt = (m: string) => html`<option value="${m}">${m}</option>`;
  const amount = (m: number | null) => (m === null ? '' : money(pc, m, c));
  return html`<section class="card"><h2>${t('books.fee_plans')}</h2>
    ${
      v.fee_plans.length === 0
        ? html`<p class="muted">${t('books.no_plans')}</p>`
        : html`<div class="table-wrap"><table id="fee-plans"><thead><tr><th scope="col">${t('tx.method')}</th><th scope="col">${t('books.version')}</th><th scope="col" class="num">%</th><th scope="col" class="num">${t('books.fixed')}</th><th scope="col" class="num">${t('books.min')}</th><th scope="col" class="num">${t('books.max')}</th><th scope="col">${t('books.refund_fee')}</th><th scope="col">${t('books.effective')}</th><th scope="col">${t('books.by')}</th></tr></thead>
      <tbody>${v.fee_plans.map((p) => html`<tr><td>${p.payment_method}</td><td>${p.version}</td><td class="num">${(p.basis_points / 100).toFixed(2)}</td><td class="num">${amount(p.fixed)}</td><td class="num">${amount(p.minimum)}</td><td class="num">${amount(p.maximum)}</td><td>${p.refund_fee}</td><td>${new Date(p.effective_from).toISOString().slice(0, 10)}</td><td>${p.created_by}</td></tr>`)}</tbody></table></div>`
    }
    ${
      v.canConfigure
        ? html`<form class="inline" method="post" action="${path}/fee-plans">${csrfField(pc)}
      <div><label for="method">${t('tx.method')}</label><select id="method" name="method">${[...PAYMENT_METHODS, 'payout'].map(opt)}</select></div>
      <div><label for="percent">%</label><input id="percent" name="percent" required inputmode="decimal"></div>
      <div><label for="fixed">${t('books.fixed')}</label><input id="fixed" name="fixed" inputmode="decimal"></div>
      <div><label for="min">${t('books.min')}</label><input id="min" name="min" inputmode="decimal"></div>
      <div><label for="max">${t('books.max')}</label><input id="max" name="max" inputmode="decimal"></div>
      <div><label for="effective">${t('books.effective')}</label><input id="effective" name="effective" type="date"></div>
      <div><label for="refund_fee">${t('books.refund_fee')}</label><select id="refund_fee" name="refund_fee"><option value="none">none</option><option value="pro_rata">pro_rata</option></select></div>
      <div><button type="submit">${t('books.add_version')}</button></div></form>`
        : ''
    }</section>`;
}

function historySection(pc: PageContext, v: WalletBooksView): Raw {
  const { t } = pc;
  return html`<section class="card"><h2>${t('books.history')}</h2>${
    v.history.length === 0
      ? html`<p class="muted">${t('books.no_history')}</p>`
      : html`<div class="table-wrap"><table id="history"><thead><tr><th scope="col">${t('books.when')}</th><th scope="col">${t('books.by')}</th><th scope="col">${t('books.kind')}</th><th scope="col">${t('books.change')}</th></tr></thead>
    <tbody>${v.history.map((h) => html`<tr><td>${when(pc, h.at)}</td><td>${h.actor}</td><td>${h.action}</td><td><code>${h.after ?? ''}</code></td></tr>`)}</tbody></table></div>`
  }</section>`;
}

function limitsSection(pc: PageContext, v: WalletBooksView, path: string): Raw {
  const { t } = pc;
  const c = v.wallet.currency;
  const amount = (m: number | null) => (m === null ? '—' : money(pc, m, c));
  return html`<section class="card"><h2>${t('books.limits')}</h2>
    ${
      v.limits.length === 0
        ? html`<p class="muted">${t('books.no_limits')}</p>`
        : html`<div class="table-wrap"><table id="limits"><thead><tr><th scope="col">${t('tx.method')}</th><th scope="col" class="num">${t('books.single_min')}</th><th scope="col" class="num">${t('books.single_max')}</th><th scope="col" class="num">${t('books.daily_max')}</th><th scope="col">${t('books.by')}</th></tr></thead>
      <tbody>${v.limits.map((l) => html`<tr><td>${l.payment_method || t('books.every_method')}</td><td class="num">${amount(l.single_min)}</td><td class="num">${amount(l.single_max)}</td><td class="num">${amount(l.daily_max)}</td><td>${l.updated_by}, ${when(pc, l.updated_at)}</td></tr>`)}</tbody></table></div>`
    }
    ${
      v.canConfigure
        ? html`<form class="inline" method="post" action="${path}/limits">${csrfField(pc)}
      <div><label for="limit-method">${t('tx.method')}</label><select id="limit-method" name="method"><option value="">${t('books.every_method')}</option>${PAYMENT_METHODS.map((m) => html`<option value="${m}">${m}</option>`)}</select></div>
      <div><label for="single_min">${t('books.single_min')}</label><input id="single_min" name="single_min" inputmode="decimal"></div>
      <div><label for="single_max">${t('books.single_max')}</label><input id="single_max" name="single_max" inputmode="decimal"></div>
      <div><label for="daily_max">${t('books.daily_max')}</label><input id="daily_max" name="daily_max" inputmode="decimal"></div>
      <div><button type="submit">${t('books.set_limits')}</button></div></form>
      <form class="inline" method="post" action="${path}/settlement">${csrfField(pc)}
      <div><label for="delay_days">${t('books.delay_days')}</label><input id="delay_days" name="delay_days" inputmode="numeric" value="${v.delay_days}" required></div>
      <div><button type="submit">${t('books.set_delay')}</button></div></form>
      <form class="inline" method="post" action="${path}/adjust">${csrfField(pc)}
      <div><label for="adjust-amount">${t('books.adjust_amount')}</label><input id="adjust-amount" name="amount" required inputmode="decimal" placeholder="-5.00"></div>
      <div><label for="adjust-reason">${t('books.adjust_reason')}</label><input id="adjust-reason" name="reason" required maxlength="200"></div>
      <div><button type="submit">${t('books.adjust')}</button></div></form>`
        : ''
    }</section>`;
}

export function walletBooksPage(pc: PageContext, v: WalletBooksView): string {
  const { t } = pc;
  const path = `/console/wallets/${encodeURIComponent(v.wallet.wallet_id)}/books`;
  return layout(
    pc,
    t('books.title', { wallet_id: v.wallet.wallet_id }),
    html`<h1>${t('books.title', { wallet_id: v.wallet.wallet_id })}</h1>
    <p class="muted">${v.organisation.organisation_name} · ${v.wallet.wallet_name} · ${t('books.delay', { days: v.delay_days })}</p>
    ${messageBox('notice', v.notice)}${messageBox('error', v.error)}
    ${balancesCard(pc, [v.balances], 'wallet-balances')}
    ${statementSection(pc, v, path)}
    ${bankAccountsSection(pc, v, path)}
    ${payoutsSection(pc, v, path)}
    ${autoPayoutSection(pc, v, path)}
    ${pc.user?.kind === 'operator' ? html`${planSection(pc, v, path)}${limitsSection(pc, v, path)}${historySection(pc, v)}` : ''}`,
  );
}

export function payoutQueuePage(
  pc: PageContext,
  v: {
    requested: readonly Payout[];
    approved: readonly Payout[];
    in_batch: readonly Payout[];
    batches: ReadonlyArray<{
      batch_id: string;
      currency: string;
      payout_count: number;
      total: number;
      created_at: number;
      created_by: string;
    }>;
    canConfigure: boolean;
    notice?: string;
    error?: string;
  },
): string {
  const { t } = pc;
  const group = (title: string, id: string, rows: readonly Payout[], actions: (p: Payout) => Raw | string) =>
    html`<section class="card" id="${id}"><h2>${title} (${rows.length})</h2>${rows.length === 0 ? html`<p class="muted">${t('books.no_payouts')}</p>` : payoutRows(pc, rows, actions)}</section>`;
  const can = v.canConfigure;
  return layout(
    pc,
    t('books.queue'),
    html`<h1>${t('books.queue')}</h1>${messageBox('notice', v.notice)}${messageBox('error', v.error)}
    ${group(t('books.payout_requested'), 'requested', v.requested, (p) => (can ? html`${moveButton(pc, p, 'approve')}${moveButton(pc, p, 'cancel')}` : ''))}
    ${group(t('books.payout_approved'), 'approved', v.approved, (p) => (can ? moveButton(pc, p, 'cancel') : ''))}
    ${
      can
        ? html`<section class="card"><h2>${t('books.batch')}</h2><p class="muted">${t('books.batch_help')}</p>
      ${PAYOUT_CURRENCIES.map((c) => html`<form class="inline" method="post" action="/console/payouts/batch">${csrfField(pc)}<input type="hidden" name="currency" value="${c}"><button class="primary" type="submit">${t('books.batch_currency', { currency: c })}</button></form>`)}</section>`
        : ''
    }
    ${group(t('books.payout_in_batch'), 'in-batch', v.in_batch, (p) => (can ? html`${moveButton(pc, p, 'paid')}${moveButton(pc, p, 'returned')}` : ''))}
    <section class="card"><h2>${t('books.batches')}</h2>${
      v.batches.length === 0
        ? html`<p class="muted">${t('books.no_batches')}</p>`
        : html`<div class="table-wrap"><table id="batches"><thead><tr><th scope="col">${t('books.batch_id')}</th><th scope="col">${t('wallet.currency')}</th><th scope="col" class="num">${t('dashboard.count')}</th><th scope="col" class="num">${t('books.amount')}</th><th scope="col">${t('books.when')}</th><th scope="col"></th></tr></thead>
      <tbody>${v.batches.map((b) => html`<tr><td>${b.batch_id}</td><td>${b.currency}</td><td class="num">${b.payout_count}</td><td class="num">${money(pc, b.total, b.currency)}</td><td>${when(pc, b.created_at)} · ${b.created_by}</td><td>${can ? html`<a href="/console/payouts/batches/${encodeURIComponent(b.batch_id)}/file" download>${t('books.download')}</a>` : ''}</td></tr>`)}</tbody></table></div>`
    }</section>`,
  );
}

export function allBalancesPage(pc: PageContext, rows: ReadonlyArray<WalletBalances & { wallet_id: string }>): string {
  const { t } = pc;
  return layout(
    pc,
    t('books.all_balances'),
    html`<h1>${t('books.all_balances')}</h1>${
      rows.length === 0
        ? html`<p class="card muted">${t('books.no_balance')}</p>`
        : html`<div class="table-wrap"><table id="all-balances"><thead><tr><th scope="col">wallet_id</th><th scope="col">${t('wallet.currency')}</th><th scope="col" class="num">${t('books.pending')}</th><th scope="col" class="num">${t('books.available')}</th><th scope="col" class="num">${t('books.reserved')}</th></tr></thead>
    <tbody>${rows.map((b) => html`<tr><td><a href="/console/wallets/${encodeURIComponent(b.wallet_id)}/books">${b.wallet_id}</a></td><td>${b.currency}</td><td class="num">${signed(pc, b.pending, b.currency)}</td><td class="num">${signed(pc, b.available, b.currency)}</td><td class="num">${signed(pc, b.reserved, b.currency)}</td></tr>`)}</tbody></table></div>`
    }`,
  );
}

export function marginPage(
  pc: PageContext,
  v: {
    from: string;
    to: string;
    rows: ReadonlyArray<{
      currency: string;
      payment_method: string;
      fees: number;
      count: number;
      provider_fees: number;
    }>;
    error?: string;
  },
): string {
  const { t } = pc;
  return layout(
    pc,
    t('books.margin'),
    html`<h1>${t('books.margin')}</h1>${messageBox('error', v.error)}
    <form class="card filters" method="get" action="/console/reports/margin">
      <div><label for="from">${t('tx.from')}</label><input id="from" name="from" type="date" value="${v.from}" required></div>
      <div><label for="to">${t('tx.to')}</label><input id="to" name="to" type="date" value="${v.to}" required></div>
      <div><button class="primary" type="submit">${t('tx.apply')}</button></div>
    </form><p class="muted">${t('books.margin_help')}</p>
    ${
      v.rows.length === 0
        ? html`<p class="card muted" id="no-rows">${t('report.none')}</p>`
        : html`<div class="table-wrap"><table id="margin"><thead><tr><th scope="col">${t('wallet.currency')}</th><th scope="col">${t('tx.method')}</th><th scope="col" class="num">${t('books.entries')}</th><th scope="col" class="num">${t('books.fees_earned')}</th><th scope="col" class="num">${t('books.fees_paid')}</th><th scope="col" class="num">${t('books.margin_net')}</th></tr></thead>
      <tbody>${v.rows.map((r) => html`<tr><td>${r.currency}</td><td>${r.payment_method}</td><td class="num">${r.count}</td><td class="num">${signed(pc, r.fees, r.currency)}</td><td class="num">${signed(pc, r.provider_fees, r.currency)}</td><td class="num">${signed(pc, r.fees - r.provider_fees, r.currency)}</td></tr>`)}</tbody></table></div>`
    }`,
  );
}
