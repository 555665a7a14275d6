import { exponentOf, formatAmount } from '../../domain/money.js';
import type { ConsoleUser } from '../../domain/console.js';
import { assetUrl } from '../assets.js';
import { html, raw, type Raw } from '../html.js';
import { LANGS, LOCALE, translator, type Lang, type Translate } from './i18n.js';
import { labelTables } from './table.js';

// The frame of every console page: the language, the navigation for who is signed in, the
// language switch and the sign-out forms (POST, with the CSRF token).

export interface PageContext {
  lang: Lang;
  t: Translate;
  /** The signed-in user, or none (sign-in pages). */
  user?: ConsoleUser;
  /** The CSRF token every form of the page carries. */
  csrf: string;
  /** The path of this page (for the navigation's current item and the language switch's return). */
  path: string;
  /** Sandbox mode: a banner on every page (anyone can pay a sandbox order). */
  sandbox?: boolean;
}

export function pageContext(lang: Lang, csrf: string, path: string, user?: ConsoleUser, sandbox = false): PageContext {
  return { lang, t: translator(lang), csrf, path, ...(user && { user }), ...(sandbox && { sandbox }) };
}

/** An amount in the language's way of writing money, from minor units (never through a float). */
export function money(pc: PageContext, minor: number, currency: string): string {
  const exp = exponentOf(currency);
  const key = `${pc.lang} ${currency}`;
  let fmt = MONEY_FORMATS.get(key);
  if (!fmt)
    MONEY_FORMATS.set(
      key,
      (fmt = new Intl.NumberFormat(LOCALE[pc.lang], {
        style: 'currency',
        currency,
        minimumFractionDigits: exp,
        maximumFractionDigits: exp,
      })),
    );
  return fmt.format(formatAmount(minor, exp) as unknown as number);
}

// Intl formatters are made once per language (and currency): each holds native ICU memory that the
// garbage collector does not see, and a page of 50 rows made 100 of them.
const MONEY_FORMATS = new Map<string, Intl.NumberFormat>();
const TIME_FORMATS = new Map<Lang, Intl.DateTimeFormat>();

/** A time in the language's way, in UTC (said on the page). */
export function when(pc: PageContext, ms: number): string {
  let fmt = TIME_FORMATS.get(pc.lang);
  if (!fmt)
    TIME_FORMATS.set(
      pc.lang,
      (fmt = new Intl.DateTimeFormat(LOCALE[pc.lang], { dateStyle: 'medium', timeStyle: 'medium', timeZone: 'UTC' })),
    );
  return `${fmt.format(ms)} UTC`;
}

export function csrfField(pc: PageContext): Raw {
  return html`<input type="hidden" name="_csrf" value="${pc.csrf}">`;
}

export function layout(pc: PageContext, title: string, body: Raw): string {
  const { t, user } = pc;
  const nav = user
    ? html`<nav aria-label="${t('nav.dashboard')}"><ul>
        ${navItem(pc, '/console', t('nav.dashboard'))}
        ${navItem(pc, '/console/charts', t('nav.charts'))}
        ${navItem(pc, '/console/transactions', t('nav.transactions'))}
        ${navItem(pc, '/console/refunds', t('nav.refunds'))}
        ${navItem(pc, '/console/notifications', t('nav.notifications'))}
        ${navItem(pc, '/console/reports/settlement', t('nav.reports'))}
        ${user.kind === 'merchant' ? navItem(pc, '/console/wallets', t('nav.wallets')) : ''}
        ${user.kind === 'operator' ? html`${navItem(pc, '/console/payouts', t('nav.payouts'))}${navItem(pc, '/console/balances', t('nav.balances'))}${navItem(pc, '/console/reports/margin', t('nav.margin'))}${navItem(pc, '/console/exceptions', t('nav.exceptions'))}${navItem(pc, '/console/statements', t('nav.statements'))}` : ''}
        ${user.kind === 'merchant' ? navItem(pc, `/console/organisations/${user.organisation_id}`, t('nav.users')) : ''}
        ${user.kind === 'operator' ? html`${navItem(pc, '/console/organisations', t('nav.organisations'))}${navItem(pc, '/console/operators', t('nav.operators'))}${navItem(pc, '/console/rates', t('nav.rates'))}${navItem(pc, '/console/outbox', t('nav.outbox'))}${navItem(pc, '/console/audit', t('nav.audit'))}` : ''}
      </ul></nav>
      <a class="who" href="/console/account">${user.email} · ${t(`who.${user.kind}`)} · ${t(`role.${user.role}`)}</a>
      <form method="post" action="/console/sign-out">${csrfField(pc)}<button class="link" type="submit">${t('nav.sign_out')}</button></form>
      <form method="post" action="/console/sign-out-everywhere">${csrfField(pc)}<button class="link" type="submit">${t('nav.sign_out_everywhere')}</button></form>`
    : '';
  const switcher = html`<form method="post" action="/console/language" class="lang">${csrfField(pc)}<input type="hidden" name="back" value="${pc.path}">
      ${LANGS.filter((l) => l !== pc.lang).map((l) => html`<button class="link" type="submit" name="lang" value="${l}" lang="${LOCALE[l]}">${translator(l)('lang.name')}</button>`)}</form>`;
  return `<!doctype html>${
    html`<html lang="${LOCALE[pc.lang]}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · ${t('app.title')}</title><link rel="icon" href="data:,"><link rel="stylesheet" href="${assetUrl('console.css')}"></head>
<body><a class="skip" href="#main">${t('nav.skip')}</a>
${pc.sandbox ? html`<p class="sandbox-banner" id="sandbox-banner" role="status">${t('app.sandbox')}</p>` : ''}<header class="top"><span class="brand">${t('app.title')}</span>${nav}${switcher}</header>
<main id="main">${raw(labelTables(body.text))}</main></body></html>`.text
  }`;
}

function navItem(pc: PageContext, href: string, label: string): Raw {
  const current = pc.path === href || (href !== '/console' && pc.path.startsWith(href));
  return html`<li><a href="${href}"${current ? raw(' aria-current="page"') : ''}>${label}</a></li>`;
}

export function messageBox(kind: 'notice' | 'error', text: string | undefined): Raw {
  return text ? html`<p class="${kind}" role="${kind === 'error' ? 'alert' : 'status'}">${text}</p>` : html``;
}
