import { html, raw } from '../html.js';
import { csrfField, layout, messageBox, type PageContext } from './layout.js';

// Signing in, and setting a password through a one-time link.

export function signInPage(pc: PageContext, opts: { email?: string; error?: string; notice?: string } = {}): string {
  const { t } = pc;
  return layout(
    pc,
    t('sign_in.title'),
    html`<section class="card narrow"><h1>${t('sign_in.title')}</h1>
      ${messageBox('notice', opts.notice)}${messageBox('error', opts.error)}
      <form method="post" action="/console/sign-in">${csrfField(pc)}
        <label for="email">${t('sign_in.email')}</label><input id="email" name="email" type="email" autocomplete="username" required value="${opts.email ?? ''}">
        <label for="password">${t('sign_in.password')}</label><input id="password" name="password" type="password" autocomplete="current-password" required>
        <button class="primary" type="submit">${t('sign_in.submit')}</button>
      </form></section>`,
  );
}

/** The second step of a sign-in with two-factor: the code from the authenticator app. */
export function codePage(pc: PageContext, error?: string, recovery = false): string {
  const { t } = pc;
  return layout(
    pc,
    t('totp.code_title'),
    html`<section class="card narrow"><h1>${t('totp.code_title')}</h1><p>${t('totp.code_help')}</p>${messageBox('error', error)}
      <form method="post" action="/console/sign-in/code">${csrfField(pc)}
        <label for="code">${t('totp.code')}</label><input id="code" name="code" inputmode="numeric" pattern="[0-9]{6}" maxlength="6" autocomplete="one-time-code" required autofocus>
        <button class="primary" type="submit">${t('totp.verify')}</button>
      </form>
      <details id="use-recovery"${recovery ? raw(' open') : ''}><summary>${t('totp.recovery_use')}</summary>
      <form method="post" action="/console/sign-in/code">${csrfField(pc)}
        <label for="recovery-code">${t('totp.recovery_code')}</label><input id="recovery-code" name="code" maxlength="12" autocomplete="off" autocapitalize="characters" spellcheck="false" required placeholder="XXXXX-XXXXX">
        <button class="primary" type="submit">${t('totp.verify')}</button>
      </form></details></section>`,
  );
}

export function welcomePage(pc: PageContext, opts: { token: string; email: string; error?: string }): string {
  const { t } = pc;
  return layout(
    pc,
    t('welcome.title'),
    html`<section class="card narrow"><h1>${t('welcome.title')}</h1>
      <p>${t('welcome.intro', { email: opts.email })}</p>${messageBox('error', opts.error)}
      <form method="post" action="/console/welcome/${opts.token}">${csrfField(pc)}
        <input type="hidden" name="username" autocomplete="username" value="${opts.email}">
        <label for="password">${t('welcome.password')}</label><input id="password" name="password" type="password" autocomplete="new-password" minlength="12" required>
        <label for="confirm">${t('welcome.confirm')}</label><input id="confirm" name="confirm" type="password" autocomplete="new-password" minlength="12" required>
        <button class="primary" type="submit">${t('welcome.submit')}</button>
      </form></section>`,
  );
}

export function messagePage(pc: PageContext, title: string, text: string): string {
  return layout(
    pc,
    title,
    html`<section class="card narrow"><h1>${title}</h1><p>${text}</p><p><a href="/console">${pc.t('error.back')}</a></p></section>`,
  );
}
