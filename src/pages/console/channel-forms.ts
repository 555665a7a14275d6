import { html, raw, type Raw } from '../html.js';
import { csrfField, messageBox, type PageContext } from './layout.js';
import type { ProviderFormView } from './view-types.js';

// A wallet's provider accounts on its page: each account's public fields and its secrets'
// fingerprints, its test and removal, and a form per provider with that provider's fields only
// (from its descriptor). A field left empty keeps what is stored; a secret is never written back.

export interface ChannelsSectionView {
  channels: ReadonlyArray<Record<string, string>>;
  providers: readonly ProviderFormView[];
  /** Where the wallet is configured from, when the user may. */
  configurePath?: string;
  /** A master key is configured to seal the secrets. */
  canSet: boolean;
  /** The form sent back refused: its error, and what was typed (secrets left out). */
  sent?: { error: string; values: Readonly<Record<string, string>> };
}

export function channelsSection(pc: PageContext, v: ChannelsSectionView): Raw {
  const { t } = pc;
  const { configurePath, canSet } = v;
  return html`<section class="card" id="channels"><h2>${t('wallet.channels')}</h2>
    ${
      v.channels.length === 0
        ? html`<p class="muted">${t('wallet.channels_none')}</p>`
        : v.channels.map((c) =>
            accountShown(
              pc,
              c,
              v.providers.find((p) => p.name === c.provider),
              configurePath,
              canSet,
            ),
          )
    }
    ${configurePath && !canSet ? html`<p class="muted" id="channel-form-off">${t('wallet.channel_needs_key')}</p>` : ''}
    ${configurePath && canSet ? html`<h3>${t('wallet.channel_set')}</h3><p class="muted">${t('wallet.channel_help')}</p>${v.providers.map((p) => providerForm(pc, p, configurePath, v.sent))}` : ''}
  </section>`;
}

function accountShown(
  pc: PageContext,
  c: Readonly<Record<string, string>>,
  provider: ProviderFormView | undefined,
  configurePath: string | undefined,
  canSet: boolean,
): Raw {
  const { t, lang } = pc;
  const method = html`<input type="hidden" name="payment_method" value="${c.payment_method}">`;
  // A field by its form's label in the reader's language, with its name (what the CLI takes).
  const label = (k: string) => provider?.fields.find((f) => f.id === k)?.label[lang];
  return html`<h3>${t(`method.${c.payment_method}`)} · ${provider?.label[lang] ?? c.provider}</h3><dl class="fields">${Object.entries(
    c,
  )
    .filter(([k]) => !['wallet_id', 'payment_method', 'provider'].includes(k))
    .map(
      ([k, val]) =>
        html`<dt>${label(k) ?? k}${label(k) ? html`<span class="field-name">${k}</span>` : ''}</dt><dd>${val}</dd>`,
    )}</dl>${
    configurePath
      ? html`<div class="actions">${canSet ? html`<form method="post" action="${configurePath}/channels/test">${csrfField(pc)}${method}<button class="link" type="submit">${t('wallet.channel_test')}</button></form>` : ''}<form method="post" action="${configurePath}/channels/remove">${csrfField(pc)}${method}<button class="link" type="submit">${t('wallet.channel_remove')}</button></form></div>`
      : ''
  }`;
}

function providerForm(
  pc: PageContext,
  p: ProviderFormView,
  configurePath: string,
  sent: { error: string; values: Readonly<Record<string, string>> } | undefined,
): Raw {
  const { t, lang } = pc;
  const mine = sent?.values.provider === p.name ? sent : undefined;
  const typed = (id: string) => mine?.values[id] ?? '';
  const id = (field: string) => `ch-${p.name}-${field}`;
  const label = (f: ProviderFormView['fields'][number]) =>
    html`<label for="${id(f.id)}">${f.label[lang]}${f.required && !f.alternative ? '' : html` (${t('wallet.optional')})`}</label>`;
  const hint = (f: ProviderFormView['fields'][number]) =>
    html`<p class="muted hint">${f.help[lang]}${f.secret ? html` ${t('wallet.secret_kept')}` : ''}</p>`;
  const control = (f: ProviderFormView['fields'][number]): Raw => {
    switch (f.kind) {
      case 'choice':
      case 'flag': {
        const options = f.kind === 'flag' ? ['on', 'off'] : (f.choices ?? []);
        return html`<select id="${id(f.id)}" name="${f.id}"><option value="">${t('wallet.unchanged')}</option>${options.map((o) => html`<option value="${o}"${typed(f.id) === o ? raw(' selected') : ''}>${o}</option>`)}</select>`;
      }
      case 'text':
      case 'url':
        return html`<input id="${id(f.id)}" name="${f.id}" autocomplete="off" value="${typed(f.id)}">`;
      default:
        // Keys, certificates, secrets and files' base64: long text, pasted.
        return html`<textarea id="${id(f.id)}" name="${f.id}" rows="3" autocomplete="off" spellcheck="false">${f.secret ? '' : typed(f.id)}</textarea>`;
    }
  };
  return html`<details class="provider-form" id="channel-form-${p.name}"${mine ? raw(' open') : ''}><summary>${p.label[lang]}</summary>${messageBox('error', mine?.error)}
    <form method="post" action="${configurePath}/channels">${csrfField(pc)}<input type="hidden" name="provider" value="${p.name}">
      <label for="${id('payment_method')}">${t('tx.method')}</label><select id="${id('payment_method')}" name="payment_method">${p.methods.map((m) => html`<option value="${m}"${typed('payment_method') === m ? raw(' selected') : ''}>${t(`method.${m}`)}</option>`)}</select>
      ${p.fields.map((f) => html`${label(f)}${control(f)}${hint(f)}`)}
      <button class="primary" type="submit">${t('wallet.channel_save')}</button></form></details>`;
}
