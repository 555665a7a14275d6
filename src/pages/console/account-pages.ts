import { qrPngDataUri } from '../../domain/qr-png.js';
import type { EnrolmentView, SessionView } from './view-types.js';
import { html, raw } from '../html.js';
import { csrfField, layout, messageBox, when, type PageContext } from './layout.js';

// The signed-in user's own account: two-factor on or off, and their sessions (each can be ended).

export function accountPage(
  pc: PageContext,
  v: {
    twoFactor: boolean;
    canEnrol: boolean;
    /** Recovery codes left unused. */
    recoveryCodes: number;
    /** Two-factor is required of this user: it cannot be turned off. */
    required: boolean;
    sessions: readonly SessionView[];
    current: string;
    notice?: string;
    error?: string;
  },
): string {
  const { t, user } = pc;
  return layout(
    pc,
    t('account.title'),
    html`<h1>${t('account.title')}</h1>${messageBox('notice', v.notice)}${messageBox('error', v.error)}
    <section class="card"><dl class="fields"><dt>${t('sign_in.email')}</dt><dd>${user!.email}</dd><dt>${t('account.role')}</dt><dd>${t(`who.${user!.kind}`)} · ${t(`role.${user!.role}`)}</dd></dl></section>
    <section class="card" id="two-factor"><h2>${t('totp.title')}</h2>
    ${
      v.twoFactor
        ? html`<p id="totp-state">${t('totp.on')}</p>
        <p id="recovery-left">${t('totp.recovery_left', { count: v.recoveryCodes })}</p>
        <form method="post" action="/console/account/two-factor/recovery-codes" id="renew-codes">${csrfField(pc)}<p class="muted">${t('totp.recovery_renew_help')}</p>
        <label for="renew-password">${t('wallet.password_again')}</label><input id="renew-password" name="password" type="password" autocomplete="current-password" required>
        <button class="primary" type="submit">${t('totp.recovery_renew')}</button></form>
        ${
          v.required
            ? html`<p class="muted" id="totp-required">${t('totp.required_here')}</p>`
            : html`<h3>${t('totp.disable')}</h3><form method="post" action="/console/account/two-factor/disable">${csrfField(pc)}
        <label for="totp-password">${t('wallet.password_again')}</label><input id="totp-password" name="password" type="password" autocomplete="current-password" required>
        <button class="primary" type="submit">${t('totp.disable')}</button></form>`
        }`
        : v.canEnrol
          ? html`<p id="totp-state">${t('totp.off')}</p><p><a href="/console/account/two-factor" id="enrol">${t('totp.enable')}</a></p>`
          : html`<p id="totp-state">${t('totp.off')}</p><p class="muted">${t('error.totp_needs_master_key')}</p>`
    }
    </section>
    <section class="card" id="sessions"><h2>${t('account.sessions')}</h2><div class="table-wrap"><table><thead><tr><th scope="col">${t('account.signed_in')}</th><th scope="col">${t('account.last_seen')}</th><th scope="col">${t('audit.ip')}</th><th scope="col"></th></tr></thead>
    <tbody>${v.sessions.map(
      (s) =>
        html`<tr><td>${when(pc, s.created_at)}</td><td>${when(pc, s.last_seen_at)}</td><td>${s.ip ?? ''}</td><td>${
          s.session_hash === v.current
            ? html`<strong>${t('account.this_session')}</strong>`
            : html`<form method="post" action="/console/account/sessions/end">${csrfField(pc)}<input type="hidden" name="session" value="${s.session_hash}"><button class="link" type="submit">${t('account.end')}</button></form>`
        }</td></tr>`,
    )}</tbody></table></div>
    <form method="post" action="/console/sign-out-everywhere">${csrfField(pc)}<button class="primary" type="submit">${t('nav.sign_out_everywhere')}</button></form></section>`,
  );
}

export function enrolPage(pc: PageContext, e: EnrolmentView, error?: string, notice?: string): string {
  const { t } = pc;
  return layout(
    pc,
    t('totp.title'),
    html`<section class="card narrow"><h1>${t('totp.title')}</h1>${messageBox('notice', notice)}${messageBox('error', error)}<p>${t('totp.scan')}</p>
    <p><img id="totp-qr" src="${qrPngDataUri(e.uri, { width: 220, margin: 2 })}" width="220" height="220" alt="${t('totp.qr_alt')}"></p>
    <p>${t('totp.manual')} <code id="totp-secret">${e.secret.replace(/(.{4})/g, '$1 ').trim()}</code></p>
    <form method="post" action="/console/account/two-factor">${csrfField(pc)}<input type="hidden" name="pending" value="${e.pending}">
      <label for="code">${t('totp.code')}</label><input id="code" name="code" inputmode="numeric" pattern="[0-9]{6}" maxlength="6" autocomplete="one-time-code" required>
      <button class="primary" type="submit">${t('totp.confirm')}</button></form>
    <p><a href="/console/account">${raw('&larr; ')}${t('account.title')}</a></p></section>`,
  );
}

/** The recovery codes just made: shown this once, to be kept somewhere other than the phone. */
export function recoveryCodesPage(pc: PageContext, codes: readonly string[], first: boolean): string {
  const { t } = pc;
  return layout(
    pc,
    t('totp.recovery_title'),
    html`<section class="card narrow"><h1>${t('totp.recovery_title')}</h1>${first ? messageBox('notice', t('totp.now_on')) : ''}
    <p>${t('totp.recovery_help')}</p>
    <ol class="recovery-codes" id="recovery-codes">${codes.map((c) => html`<li><code>${c}</code></li>`)}</ol>
    <p><a href="/console" id="codes-kept">${t('totp.recovery_kept')}</a></p></section>`,
  );
}
