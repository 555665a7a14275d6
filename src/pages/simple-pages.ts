import { assetUrl } from './assets.js';
import { LOCALE, type Lang } from './checkout-i18n.js';
import { html, raw, type Raw } from './html.js';

// The frame every gateway page shares: local stylesheet and script, nothing from other hosts. The empty
// icon keeps browsers from asking for /favicon.ico, which the gateway does not have (a 404 in the console).

export function documentPage(opts: {
  title: string;
  bodyClass?: string;
  body: Raw;
  script?: boolean;
  head?: Raw;
  lang?: Lang;
}): string {
  return html`<!doctype html><html lang="${LOCALE[opts.lang ?? 'en']}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1,viewport-fit=cover">
<meta name="robots" content="noindex"><meta name="referrer" content="no-referrer"><meta name="theme-color" content="#f4f5f8"><title>${opts.title}</title>
<link rel="icon" href="data:,"><link rel="stylesheet" href="${assetUrl('checkout.css')}">${opts.script === false ? '' : html`<script src="${assetUrl('checkout.js')}" defer></script>`}${opts.head ?? ''}</head>
<body class="${opts.bodyClass ?? ''}">${opts.body}</body></html>`.text;
}

/** A single card in the middle of the screen. */
export function page(title: string, body: Raw, bodyClass = '', lang: Lang = 'en'): string {
  return documentPage({
    title,
    lang,
    bodyClass: `simple ${bodyClass}`,
    body: html`<main class="shell narrow"><section class="card">${body}</section></main>`,
  });
}

const WARNING =
  '<svg viewBox="0 0 24 24" aria-hidden="true"><path fill="currentColor" d="M12 2a10 10 0 1 1 0 20 10 10 0 0 1 0-20Zm0 13.5a1.3 1.3 0 1 0 0 2.6 1.3 1.3 0 0 0 0-2.6ZM11 6.5v7h2v-7h-2Z"/></svg>';

export function errorPage(title: string, message: string, lang: Lang = 'en'): string {
  return page(
    title,
    html`<div class="result result-error" id="error-page"><span class="result-icon">${raw(WARNING)}</span><h1>${title}</h1><p>${message}</p></div>`,
    '',
    lang,
  );
}
