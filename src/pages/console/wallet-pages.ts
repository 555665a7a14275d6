import { html, raw, type Interpolation, type Raw } from '../html.js';
import { methodBoxes, methodList, statusForm } from './admin-pages.js';
import { dataTable } from './table.js';
import { csrfField, layout, messageBox, when, type PageContext } from './layout.js';
import { channelsSection } from './channel-forms.js';
import type { HostHealthView, OrganisationView, ProviderFormView, WalletView } from './view-types.js';

// A merchant's wallets and one wallet's integration parameters: ids, methods, the API key behind a
// password, its rotation with an overlap window, and how its notifications fare by callback host.

export function walletsPage(
  pc: PageContext,
  v: { organisation: OrganisationView; wallets: readonly WalletView[] },
): string {
  const { t } = pc;
  return layout(
    pc,
    t('wallets.title'),
    html`<h1>${t('wallets.title')}</h1><p class="muted">${v.organisation.organisation_name} (${v.organisation.organisation_id})</p>
    ${dataTable(
      [
        { label: t('id.wallet_id') },
        { label: t('id.user_id') },
        { label: t('wallet.name'), wrap: true },
        { label: t('wallet.currency') },
        { label: t('wallet.methods'), wrap: true },
      ],
      v.wallets.map((w) => [
        html`<a href="/console/wallets/${encodeURIComponent(w.wallet_id)}">${w.wallet_id}</a> · <a href="/console/wallets/${encodeURIComponent(w.wallet_id)}/books">${t('books.link')}</a>`,
        w.user_id,
        w.wallet_name,
        w.currency,
        methodList(pc, w.payment_methods),
      ]),
      { id: 'wallets' },
    )}`,
  );
}

export interface WalletPageView {
  wallet: WalletView;
  organisation: OrganisationView;
  methods: readonly string[];
  /** Whether the replaced key still verifies now (the end is wallet.previous_key_expires_at). */
  overlapping: boolean;
  health: readonly HostHealthView[];
  channels: ReadonlyArray<Record<string, string>>;
  /** The providers whose accounts can be set, each with its form's fields. */
  providers: readonly ProviderFormView[];
  /** The overlap windows offered, in hours, and the one chosen unless another is. */
  overlapChoices: readonly number[];
  overlapDefault: number;
  /** What the rotate form carries of the key it is shown with, so that sending it twice rotates once. */
  keyMark: string;
  /** Whether the user's role may reveal and rotate the key. */
  canSeeKeys: boolean;
  /** Shown once, right after the password was entered again (reveal) or the key was rotated. */
  revealed?: { api_key: string; rotated: boolean };
  /** Whether the user may change the wallet's settings (operators' admins). */
  canConfigure: boolean;
  notice?: string;
  error?: string;
  /** Provider accounts can be set (a master key is configured to seal their secrets). */
  canSetChannels: boolean;
  /** The provider account form sent back refused: its error, and what was typed (secrets left out). */
  channelForm?: { error: string; values: Readonly<Record<string, string>> };
  /** Whether the user may send a test notification (the roles that may resend). */
  canTest?: boolean;
  /** The test notification just sent: where, what was sent, what came back. */
  tested?: TestNotificationView;
}

export interface TestNotificationView {
  url: string;
  delivered: boolean;
  http_status: number | null;
  response_excerpt: string | null;
  latency_ms: number;
  error: string | null;
  body: string;
  headers: Readonly<Record<string, string>>;
}

export function walletPage(pc: PageContext, v: WalletPageView): string {
  const { t } = pc;
  const w = v.wallet;
  const path = `/console/wallets/${encodeURIComponent(w.wallet_id)}`;
  const field = (label: string, value: Interpolation, id?: string) =>
    html`<dt>${label}</dt><dd${id ? raw(` id="${id}"`) : ''}>${value}</dd>`;
  return layout(
    pc,
    t('wallet.title', { wallet_id: w.wallet_id }),
    html`<h1>${t('wallet.title', { wallet_id: w.wallet_id })}</h1>${messageBox('notice', v.notice)}${messageBox('error', v.error)}
    <p><a href="${path}/books" id="books-link">${t('books.link')}</a></p>
    <section class="card"><h2>${t('wallet.parameters')}</h2><dl class="fields" id="parameters">
      ${field(t('id.user_id'), w.user_id)}${field(t('id.wallet_id'), w.wallet_id)}
      ${field(t('tx.organisation'), `${v.organisation.organisation_name} (${v.organisation.organisation_id})`)}
      ${field(t('wallet.name'), w.wallet_name)}${field(t('wallet.currency'), w.currency)}
      ${field(t('wallet.methods'), methodList(pc, v.methods.join(',')), 'methods')}
      ${field(t('wallet.legacy'), t(w.legacy_signatures === 1 ? 'wallet.on' : 'wallet.off'))}
      ${field(t('tx.status'), t(`admin.status_${w.wallet_status}`))}
      ${field(t('wallet.overlap'), v.overlapping ? t('wallet.overlap_until', { at: when(pc, w.previous_key_expires_at!) }) : t('wallet.overlap_none'), 'overlap')}
    </dl></section>
    ${v.canConfigure ? settingsSection(pc, v, path) : ''}
    ${keySection(pc, v, path)}
    ${channelsSection(pc, { channels: v.channels, providers: v.providers, ...(v.canConfigure && { configurePath: path }), canSet: v.canSetChannels, ...(v.channelForm && { sent: v.channelForm }) })}
    ${v.canTest ? testSection(pc, v, path) : ''}
    ${healthSection(pc, v.health)}`,
  );
}

/** "Send a test notification": a URL, a button, and what the endpoint answered to the signed sample. */
function testSection(pc: PageContext, v: WalletPageView, path: string): Raw {
  const { t } = pc;
  const r = v.tested;
  const answer = r
    ? html`<div class="${r.delivered ? 'notice' : 'error'}" id="test-result" role="status"><p><strong>${t(r.delivered ? 'wallet.test_delivered' : 'wallet.test_not_delivered')}</strong></p>
      <dl class="fields">
        <dt>${t('wallet.test_status')}</dt><dd id="test-status">${r.http_status ?? '–'}</dd>
        <dt>${t('wallet.test_body')}</dt><dd><code id="test-body">${r.response_excerpt ?? ''}</code></dd>
        <dt>${t('wallet.test_time')}</dt><dd>${r.latency_ms} ms</dd>
        ${r.error ? html`<dt>${t('wallet.test_error')}</dt><dd id="test-error">${r.error}</dd>` : ''}
      </dl>
      <details><summary>${t('wallet.test_sent')}</summary><pre class="wrap">POST ${r.url}
${Object.entries(r.headers).map(([k, val]) => `${k}: ${val}\n`)}
${r.body}</pre></details></div>`
    : '';
  return html`<section class="card" id="test-notification"><h2>${t('wallet.test_title')}</h2><p class="muted">${t('wallet.test_help')}</p>
    <form method="post" action="${path}/test-notification" id="test-notification-form">${csrfField(pc)}
      <label for="test-url">${t('wallet.test_url')}</label><input id="test-url" name="url" type="url" required maxlength="2000" inputmode="url" placeholder="https://shop.example/payment/notify" value="${r?.url ?? ''}">
      <div><button class="primary" type="submit">${t('wallet.test_send')}</button></div></form>
    ${answer}</section>`;
}

function keySection(pc: PageContext, v: WalletPageView, path: string): Raw {
  const { t } = pc;
  if (!v.canSeeKeys)
    return html`<section class="card"><h2>${t('wallet.key')}</h2><p class="muted">${t('wallet.key_role')}</p></section>`;
  const password = (id: string) =>
    html`<label for="${id}">${t('wallet.password_again')}</label><input id="${id}" name="password" type="password" autocomplete="current-password" required>`;
  return html`<section class="card" id="key"><h2>${t('wallet.key')}</h2>
    ${
      v.revealed
        ? html`<p class="notice" role="status">${t(v.revealed.rotated ? 'wallet.rotated' : 'wallet.revealed')}</p><p><code id="api-key" class="secret">${v.revealed.api_key}</code></p>`
        : html`<form method="post" action="${path}/reveal" id="reveal-form">${csrfField(pc)}<p class="muted">${t('wallet.reveal_help')}</p>${password('reveal-password')}<button class="primary" type="submit">${t('wallet.reveal')}</button></form>`
    }
    <h3>${t('wallet.rotate')}</h3>
    <form method="post" action="${path}/rotate" id="rotate-form">${csrfField(pc)}<input type="hidden" name="from" value="${v.keyMark}"><p class="muted">${t('wallet.rotate_help')}</p>
      <label for="overlap_hours">${t('wallet.overlap_choice')}</label><select id="overlap_hours" name="overlap_hours">${v.overlapChoices.map((h) => html`<option value="${h}"${h === v.overlapDefault ? raw(' selected') : ''}>${h === 0 ? t('wallet.overlap_0') : h === 1 ? t('wallet.overlap_1') : t('wallet.overlap_hours', { hours: h })}</option>`)}</select>
      ${password('rotate-password')}<button class="primary" type="submit">${t('wallet.rotate_button')}</button></form>
  </section>`;
}

function healthSection(pc: PageContext, health: readonly HostHealthView[]): Raw {
  const { t } = pc;
  return html`<section class="card" id="health"><h2>${t('wallet.health')}</h2>
    ${
      health.length === 0
        ? html`<p class="muted">${t('wallet.health_ok')}</p>`
        : html`<div class="table-wrap"><table><thead><tr><th scope="col">${t('wallet.host')}</th><th scope="col" class="num">${t('wallet.failing')}</th><th scope="col">${t('wallet.oldest')}</th><th scope="col">${t('wallet.last_failure')}</th></tr></thead>
      <tbody>${health.map((h) => html`<tr><td>${h.callback_host}</td><td class="num">${h.failing}</td><td>${when(pc, h.oldest_created_at)}</td><td class="wrap">${h.last ? html`${when(pc, h.last.attempted_at)}: ${h.last.error ?? `HTTP ${h.last.http_status}`}` : '–'}</td></tr>`)}</tbody></table></div>`
    }
  </section>`;
}

function settingsSection(pc: PageContext, v: WalletPageView, path: string): Raw {
  const { t } = pc;
  return html`<section class="card" id="settings"><h2>${t('wallet.settings')}</h2><form method="post" action="${path}/settings" id="settings-form">${csrfField(pc)}
    <label for="s-name">${t('wallet.name')}</label><input id="s-name" name="name" required maxlength="200" value="${v.wallet.wallet_name}">
    ${methodBoxes(pc, v.methods)}
    <label class="check"><input type="checkbox" name="legacy_signatures" value="on"${v.wallet.legacy_signatures === 1 ? raw(' checked') : ''}> ${t('wallet.legacy_accept')}</label>
    <div><button class="primary" type="submit">${t('admin.save')}</button></div></form>
    ${statusForm(pc, { action: `${path}/status`, id: 'wallet-status', active: v.wallet.wallet_status === 'active', help: 'wallet.status_help', disable: 'wallet.disable', enable: 'wallet.enable' })}</section>`;
}
