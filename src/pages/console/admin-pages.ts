import type { User, Wallet } from '../../domain/account.js';
import { ROLES_OF, type ConsoleKind, type ConsoleUser } from '../../domain/console.js';
import { CURRENCY_EXPONENT } from '../../domain/money.js';
import { PAYMENT_METHODS } from '../../domain/transaction.js';
import { html, raw, type Raw } from '../html.js';
import { csrfField, layout, messageBox, when, type PageContext } from './layout.js';
import { LANGS, translator } from './i18n.js';
import { dataTable } from './table.js';
import type { OrganisationView as Organisation } from './view-types.js';

// Operators' configuration pages (organisations, an organisation's API users, wallets and console
// users, operators), and an owner's view of their own organisation's console users.

export interface Message {
  notice?: string;
  error?: string;
  /**
   * A one-time link just made (an invitation or a password reset): mailed to its address, or shown
   * once here (no email, or the email failed: why), never put in a URL.
   */
  link?: {
    email: string;
    url?: string;
    expires_at: number;
    mailed?: boolean;
    mail_failed?: boolean;
    mail_error?: string;
  };
  /** What was typed into a form that was refused, to show it again. */
  typed?: {
    wallet?: { user_id: string; currency: string; name: string; methods: readonly string[] };
    invite?: { email: string; role: string };
  };
}

function messages(pc: PageContext, m: Message): Raw {
  return html`${messageBox('notice', m.notice)}${messageBox('error', m.error)}${
    m.link?.mailed
      ? html`<div class="notice" role="status" id="link-mailed"><p>${pc.t('users.link_mailed', { email: m.link.email, at: when(pc, m.link.expires_at) })}</p></div>`
      : m.link?.url
        ? html`<div class="notice" role="status" id="one-time-link">${m.link.mail_failed ? html`<p class="error">${m.link.mail_error !== undefined ? pc.t('users.mail_failed', { reason: m.link.mail_error }) : pc.t('users.mail_failed_plain')}</p>` : ''}<p>${pc.t('users.link_for', { email: m.link.email, at: when(pc, m.link.expires_at) })}</p><p><code>${m.link.url}</code></p></div>`
        : ''
  }`;
}

const selected = (on: boolean) => (on ? raw(' selected') : '');
const currencyOptions = (chosen?: string) =>
  Object.keys(CURRENCY_EXPONENT).map((c) => html`<option value="${c}"${selected(c === chosen)}>${c}</option>`);

export function organisationsPage(
  pc: PageContext,
  v: { organisations: ReadonlyArray<Organisation & { active_api_users: number }>; canConfigure: boolean } & Message,
): string {
  const { t } = pc;
  return layout(
    pc,
    t('orgs.title'),
    html`<h1>${t('orgs.title')}</h1>${messages(pc, v)}
    ${dataTable(
      [
        { label: t('id.organisation_id') },
        { label: t('wallet.name'), wrap: true },
        { label: t('tx.status') },
        { label: t('tx.created') },
      ],
      v.organisations.map((o) => [
        html`<a href="/console/organisations/${o.organisation_id}">${o.organisation_id}</a>`,
        o.organisation_name,
        t(
          o.closed_at ? 'orgs.status_closed' : o.active_api_users > 0 ? 'admin.status_active' : 'admin.status_disabled',
        ),
        when(pc, o.created_at),
      ]),
      { id: 'organisations' },
    )}
    ${
      v.canConfigure
        ? html`<section class="card"><h2>${t('orgs.create')}</h2><p class="muted">${t('orgs.create_help')}</p><form method="post" action="/console/organisations" id="create-organisation">${csrfField(pc)}
        <label for="org-name">${t('wallet.name')}</label><input id="org-name" name="name" required maxlength="200">
        <label for="org-currency">${t('wallet.currency')}</label><select id="org-currency" name="currency">${currencyOptions()}</select>
        <button class="primary" type="submit">${t('orgs.create')}</button></form></section>`
        : ''
    }`,
  );
}

export interface OrganisationPageView extends Message {
  organisation: Organisation;
  apiUsers: readonly User[];
  wallets: readonly Wallet[];
  consoleUsers: readonly ConsoleUser[];
  /** Whether two-factor is required of the organisation's console users. */
  twoFactorRequired: boolean;
  /** When the page was made (consoleUsersSection). */
  shownAt: number;
  canConfigure: boolean;
  canManage: boolean;
}

export function organisationPage(pc: PageContext, v: OrganisationPageView): string {
  const { t } = pc;
  const o = v.organisation;
  const base = `/console/organisations/${o.organisation_id}`;
  const anyActive = v.apiUsers.some((u) => u.user_status === 'active');
  const typed = v.typed?.wallet;
  return layout(
    pc,
    o.organisation_name,
    html`<h1>${o.organisation_name} <span class="muted">(${o.organisation_id})</span></h1>${messages(pc, v)}
    ${o.closed_at ? html`<p class="notice" id="closed">${t('orgs.closed_on', { at: when(pc, o.closed_at) })}</p>` : ''}
    ${
      v.canConfigure && !o.closed_at
        ? html`<section class="card"><form method="post" action="${base}/rename" id="rename">${csrfField(pc)}<label for="rename-name">${t('wallet.name')}</label><input id="rename-name" name="name" required maxlength="200" value="${o.organisation_name}"><button class="primary" type="submit">${t('admin.save')}</button></form>
        ${statusForm(pc, { action: `${base}/status`, id: 'organisation-status', active: anyActive, help: 'orgs.status_help', disable: 'orgs.disable', enable: 'orgs.enable' })}</section>`
        : ''
    }
    <section class="card" id="api-users"><h2>${t('orgs.api_users')}</h2>${dataTable(
      [{ label: t('id.user_id') }, { label: t('wallet.name'), wrap: true }, { label: t('tx.status') }, { label: '' }],
      v.apiUsers.map((u) => [
        u.user_id,
        u.user_name,
        t(`admin.status_${u.user_status}`),
        v.canConfigure
          ? statusButton(pc, `/console/api-users/${encodeURIComponent(u.user_id)}/status`, u.user_status === 'active')
          : '',
      ]),
    )}</section>
    <section class="card" id="org-wallets"><h2>${t('wallets.title')}</h2>${dataTable(
      [
        { label: t('id.wallet_id') },
        { label: t('id.user_id') },
        { label: t('wallet.currency') },
        { label: t('wallet.methods'), wrap: true },
        { label: t('wallet.legacy') },
        { label: t('tx.status') },
      ],
      v.wallets.map((w) => [
        html`<a href="/console/wallets/${encodeURIComponent(w.wallet_id)}">${w.wallet_id}</a>`,
        w.user_id,
        w.currency,
        methodList(pc, w.payment_methods),
        t(w.legacy_signatures === 1 ? 'wallet.on' : 'wallet.off'),
        t(`admin.status_${w.wallet_status}`),
      ]),
    )}
    ${
      v.canConfigure
        ? html`<h3>${t('orgs.add_wallet')}</h3><form method="post" action="${base}/wallets" id="add-wallet">${csrfField(pc)}
        <label for="w-user">user_id</label><select id="w-user" name="user_id">${v.apiUsers.map((u) => html`<option value="${u.user_id}"${selected(u.user_id === typed?.user_id)}>${u.user_id}</option>`)}</select>
        <label for="w-currency">${t('wallet.currency')}</label><select id="w-currency" name="currency">${currencyOptions(typed?.currency)}</select>
        <label for="w-name">${t('wallet.name')}</label><input id="w-name" name="name" maxlength="200" value="${typed?.name ?? ''}">
        ${methodBoxes(pc, typed?.methods ?? PAYMENT_METHODS)}
        <button class="primary" type="submit">${t('orgs.add_wallet')}</button></form>`
        : ''
    }</section>
    ${
      v.canConfigure && !o.closed_at
        ? html`<section class="card" id="close-organisation"><h2>${t('orgs.close')}</h2><p class="muted">${t('orgs.close_help')}</p>
      <form method="post" action="${base}/close">${csrfField(pc)}<label for="close-name">${t('orgs.close_type', { name: o.organisation_name })}</label><input id="close-name" name="name" required maxlength="200" autocomplete="off">
      <div><button class="primary danger" type="submit">${t('orgs.close')}</button></div></form></section>`
        : ''
    }
    ${consoleUsersSection(pc, { users: v.consoleUsers, canManage: v.canManage && !o.closed_at, kind: 'merchant', inviteAction: `${base}/invite`, twoFactor: { required: v.twoFactorRequired, action: `${base}/two-factor` }, shownAt: v.shownAt, ...(v.typed?.invite && { typed: v.typed.invite }) })}`,
  );
}

/** A wallet's methods (comma-separated, as stored) by their names in the reader's language. */
export function methodList(pc: PageContext, methods: string): string {
  return methods
    .split(',')
    .filter(Boolean)
    .map((m) => pc.t(`method.${m}`))
    .join(pc.lang === 'zh' ? '、' : ', ');
}

export function methodBoxes(pc: PageContext, checked: readonly string[]): Raw {
  return html`<fieldset class="methods"><legend>${pc.t('wallet.methods')}</legend>${PAYMENT_METHODS.map(
    (m) =>
      html`<label class="check"><input type="checkbox" name="methods" value="${m}"${checked.includes(m) ? raw(' checked') : ''}> ${pc.t(`method.${m}`)}</label>`,
  )}</fieldset>`;
}

type MessageKey = Parameters<PageContext['t']>[0];

/** A card's form that turns a whole thing off, or on again, in one step (an organisation, a wallet). */
export function statusForm(
  pc: PageContext,
  v: { action: string; id: string; active: boolean; help: MessageKey; disable: MessageKey; enable: MessageKey },
): Raw {
  return html`<form method="post" action="${v.action}" id="${v.id}">${csrfField(pc)}<p class="muted">${pc.t(v.help)}</p><input type="hidden" name="status" value="${v.active ? 'disabled' : 'active'}"><button class="primary${v.active ? ' danger' : ''}" type="submit">${pc.t(v.active ? v.disable : v.enable)}</button></form>`;
}

/** The step before something is turned off (an organisation, a wallet, a user, a user's two-factor): what stops, and a button that does it. */
export function confirmPage(
  pc: PageContext,
  v: {
    title: string;
    question: string;
    action: string;
    fields?: Readonly<Record<string, string>>;
    button: string;
    back: string;
  },
): string {
  return layout(
    pc,
    v.title,
    html`<section class="card narrow"><h1>${v.title}</h1><p id="confirm-question">${v.question}</p>
    <form method="post" action="${v.action}">${csrfField(pc)}${Object.entries(v.fields ?? {}).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}<input type="hidden" name="confirmed" value="yes">
      <button class="primary danger" type="submit" id="confirm">${v.button}</button></form>
    <p><a href="${v.back}">${pc.t('admin.back')}</a></p></section>`,
  );
}

function statusButton(pc: PageContext, action: string, active: boolean): Raw {
  return html`<form method="post" action="${action}">${csrfField(pc)}<input type="hidden" name="status" value="${active ? 'disabled' : 'active'}"><button class="link" type="submit">${pc.t(active ? 'admin.disable' : 'admin.enable')}</button></form>`;
}

/** Console users with what the viewer may do to them, and the invitation form. */
export function consoleUsersSection(
  pc: PageContext,
  v: {
    users: readonly ConsoleUser[];
    canManage: boolean;
    kind: ConsoleKind;
    inviteAction: string;
    /** Whether two-factor is required of these users, and the form that changes it. */
    twoFactor: { required: boolean; action: string };
    /** When the page was made: a password link form sent again (a reload) makes no second link. */ shownAt: number;
    typed?: { email: string; role: string };
  },
): Raw {
  const { t, user: me } = pc;
  return html`<section class="card" id="console-users"><h2>${t('users.title')}</h2><div class="table-wrap"><table><thead><tr><th scope="col">${t('sign_in.email')}</th><th scope="col">${t('account.role')}</th><th scope="col">${t('tx.status')}</th><th scope="col">${t('totp.title')}</th><th scope="col"></th></tr></thead>
    <tbody>${v.users.map((u) => {
      const base = `/console/console-users/${encodeURIComponent(u.console_user_id)}`;
      const actions =
        v.canManage && u.console_user_id !== me?.console_user_id
          ? html`${statusButton(pc, `${base}/status`, u.status === 'active')}
          <form method="post" action="${base}/password-link">${csrfField(pc)}<input type="hidden" name="shown_at" value="${v.shownAt}"><button class="link" type="submit">${t('users.password_link')}</button></form>
          ${u.totp_sealed ? html`<form method="post" action="${base}/reset-two-factor">${csrfField(pc)}<button class="link" type="submit">${t('users.reset_totp')}</button></form>` : ''}`
          : '';
      return html`<tr><td>${u.email}</td><td>${t(`role.${u.role}`)}</td><td>${t(`admin.status_${u.status}`)}${u.password_hash === null ? html` · ${t('users.invited')}` : ''}</td><td>${t(u.totp_sealed ? 'admin.on' : 'admin.off')}</td><td class="actions">${actions}</td></tr>`;
    })}</tbody></table></div>
    ${
      v.canManage
        ? html`<form method="post" action="${v.twoFactor.action}" id="two-factor-required">${csrfField(pc)}<label class="check"><input type="checkbox" name="required" value="on"${v.twoFactor.required ? raw(' checked') : ''}> ${t('users.two_factor_required')}</label><p class="muted">${t('users.two_factor_help')}</p><div><button class="primary" type="submit">${t('admin.save')}</button></div></form>`
        : v.twoFactor.required
          ? html`<p class="muted" id="two-factor-required">${t('totp.required_here')}</p>`
          : ''
    }
    ${
      v.canManage
        ? html`<h3>${t('users.invite')}</h3><form method="post" action="${v.inviteAction}" id="invite">${csrfField(pc)}
        <label for="invite-email">${t('sign_in.email')}</label><input id="invite-email" name="email" type="email" required value="${v.typed?.email ?? ''}">
        <label for="invite-role">${t('account.role')}</label><select id="invite-role" name="role">${ROLES_OF[v.kind].map((r) => html`<option value="${r}"${selected(r === v.typed?.role)}>${t(`role.${r}`)}</option>`)}</select>
        <label for="invite-lang">${t('users.invite_lang')}</label><select id="invite-lang" name="lang">${LANGS.map((l) => html`<option value="${l}"${selected(l === pc.lang)}>${translator(l)('lang.name')}</option>`)}</select>
        <button class="primary" type="submit">${t('users.invite')}</button></form>`
        : ''
    }</section>`;
}

export function operatorsPage(
  pc: PageContext,
  v: { users: readonly ConsoleUser[]; canManage: boolean; twoFactorRequired: boolean; shownAt: number } & Message,
): string {
  return layout(
    pc,
    pc.t('users.operators'),
    html`<h1>${pc.t('users.operators')}</h1>${messages(pc, v)}${consoleUsersSection(pc, { users: v.users, canManage: v.canManage, kind: 'operator', inviteAction: '/console/operators/invite', twoFactor: { required: v.twoFactorRequired, action: '/console/operators/two-factor' }, shownAt: v.shownAt, ...(v.typed?.invite && { typed: v.typed.invite }) })}`,
  );
}
