import { html, type Raw } from './html.js';

const STYLE = `body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;background:#f4f6f8;color:#1c2430}
main{max-width:420px;margin:40px auto;background:#fff;border-radius:12px;padding:24px;box-shadow:0 2px 12px rgba(0,0,0,.08)}
h1{font-size:1.25rem;margin:0 0 12px}dl{display:grid;grid-template-columns:auto 1fr;gap:6px 12px}dt{color:#667}dd{margin:0}
button{font-size:1rem;padding:10px 16px;border-radius:8px;border:0;margin:6px 6px 0 0;cursor:pointer}
.pay{background:#1a7f37;color:#fff}.fail{background:#cf222e;color:#fff}.reject{background:#9a6700;color:#fff}`;

export function page(title: string, body: Raw): string {
  return html`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${title}</title><style>${STYLE}</style></head><body><main>${body}</main></body></html>`.text;
}

export function errorPage(title: string, message: string): string {
  return page(title, html`<h1>${title}</h1><p>${message}</p>`);
}
