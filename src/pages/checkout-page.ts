import { asciiUrl } from '../domain/ascii-url.js';
import { isPending } from '../domain/transaction.js';
import { html, raw, type Raw } from './html.js';
import { checkoutTranslator, LOCALE, type Lang, type Tr } from './checkout-i18n.js';
import { displayMoney, displayRate, initials, methodName, pagePath, type CheckoutView } from './checkout-view.js';
import { methodPanel } from './method-panels.js';
import { documentPage, errorPage } from './simple-pages.js';

// The hosted payment page {host_url}/{nonce}: the order summary, the method's payment panel, and
// the result once the order is final. The panel is swapped for the result without a reload: the
// page's script long-polls {page}/status, which answers with resultPanel's HTML (and the redirect).

const LOCK =
  '<svg viewBox="0 0 24 24" aria-hidden="true"><path fill="currentColor" d="M12 2a5 5 0 0 1 5 5v3h1a2 2 0 0 1 2 2v8a2 2 0 0 1-2 2H6a2 2 0 0 1-2-2v-8a2 2 0 0 1 2-2h1V7a5 5 0 0 1 5-5Zm0 2a3 3 0 0 0-3 3v3h6V7a3 3 0 0 0-3-3Z"/></svg>';
const RESULT_ICONS: Readonly<Record<string, string>> = {
  paid: '<svg viewBox="0 0 24 24" aria-hidden="true"><path fill="currentColor" d="M12 2a10 10 0 1 1 0 20 10 10 0 0 1 0-20Zm4.3 6.3-5.6 5.6-2.9-2.9-1.4 1.4 4.3 4.3 7-7-1.4-1.4Z"/></svg>',
  failed:
    '<svg viewBox="0 0 24 24" aria-hidden="true"><path fill="currentColor" d="M12 2a10 10 0 1 1 0 20 10 10 0 0 1 0-20Zm3.5 5.1L12 10.6 8.5 7.1 7.1 8.5l3.5 3.5-3.5 3.5 1.4 1.4 3.5-3.5 3.5 3.5 1.4-1.4-3.5-3.5 3.5-3.5-1.4-1.4Z"/></svg>',
  canceled:
    '<svg viewBox="0 0 24 24" aria-hidden="true"><path fill="currentColor" d="M12 2a10 10 0 1 1 0 20 10 10 0 0 1 0-20ZM7 11v2h10v-2H7Z"/></svg>',
};

export type VisitReason = 'unknown' | 'used' | 'expired';

export function visitErrorPage(reason: VisitReason, tr: Tr, lang: Lang): string {
  return errorPage(tr(`visit.${reason}.title`), tr(`visit.${reason}.text`), lang);
}

export function visitProblemMessage(reason: VisitReason, tr: Tr): string {
  return tr(`visit.${reason}.text`);
}

/**
 * What a customer's page says of a failure of the gateway's: the database away for a moment (a
 * failover, a restart: reload in a few seconds) or anything else (quote the request id).
 */
export function failureTexts(
  tr: Tr,
  away: boolean,
  requestId: string,
): { status: 503 | 500; title: string; text: string } {
  return away
    ? { status: 503, title: tr('error.busy.title'), text: tr('error.busy.text') }
    : { status: 500, title: tr('error.ours.title'), text: tr('error.ours.text', { id: requestId }) };
}

function summary(view: CheckoutView): Raw {
  const { t, user, wallet, tr } = view;
  const converted = t.currency !== 'CNY' && t.amount_cny !== null && t.currency_rate !== null;
  const row = (label: string, value: string, id: string) =>
    html`<div><dt>${label}</dt><dd id="${id}">${value}</dd></div>`;
  return html`<section class="card summary" aria-label="${tr('summary.label')}">
<div class="merchant"><span class="avatar" aria-hidden="true">${initials(user.organisation_name)}</span><div><h1 class="merchant-name" id="merchant-name">${user.organisation_name}</h1><p class="wallet-name" id="wallet-name">${wallet.wallet_name}</p></div></div>
<p class="label" id="amount-label">${tr(isPending(t) ? 'summary.due' : t.status === 'paid' ? 'summary.paid' : 'summary.amount')}</p><p class="amount" id="amount">${displayMoney(t.amount, t.currency)} <span class="ccy">${t.currency}</span></p>
${converted ? html`<p class="converted" id="amount-cny">≈ ${displayMoney(t.amount_cny!, 'CNY')} CNY <span>${tr('summary.at_rate', { rate: displayRate(t.currency_rate!), currency: t.currency })}</span></p>` : ''}
<dl class="details">${row(tr('summary.product'), t.product_name, 'product-name')}${row(tr('summary.reference'), t.merchant_reference, 'merchant-reference')}${row(tr('summary.order'), t.order_id, 'order-id')}${row(tr('summary.method'), methodName(view), 'payment-method')}</dl>
</section>`;
}

/** The final state: what happened, and where the customer goes next. */
export function resultPanel(view: CheckoutView): Raw {
  const { t, user, tr } = view;
  const amount = displayMoney(t.amount, t.currency);
  const merchant = user.organisation_name;
  const kind = t.status === 'paid' ? 'paid' : t.status === 'canceled' || t.status === 'pending' ? 'canceled' : 'failed';
  const why = t.status === 'rejected' && t.status_message ? `: ${t.status_message}` : '';
  const title = tr(`result.${t.status}.title`);
  const text = tr(`result.${t.status}.text`, { amount, merchant, why });
  let next: Raw;
  if (view.redirect_url !== null) {
    next = html`<p class="fine" id="redirect-note"><span class="spinner" aria-hidden="true"></span>${tr('result.taking_back', { merchant })}</p><a class="btn primary" id="return-link" href="${view.redirect_url}">${tr('result.return', { merchant })}</a>`;
  } else if (t.backPage_url) {
    next = html`<a class="btn" id="back-link" href="${asciiUrl(t.backPage_url)}">${tr('result.back', { merchant })}</a>`;
  } else {
    next = html`<p class="fine" id="close-note">${tr('result.close')}</p>`;
  }
  return html`<div class="result result-${kind}" id="result" data-status="${t.status}"><span class="result-icon">${raw(RESULT_ICONS[kind])}</span><h2 id="result-title">${title}</h2><p>${text}</p>${next}</div>`;
}

function backControl(view: CheckoutView): Raw {
  const { t, tr } = view;
  const merchant = view.user.organisation_name;
  if (!t.backPage_url) return html`<span></span>`;
  if (!isPending(t)) return html`<a class="back" href="${asciiUrl(t.backPage_url)}">${tr('back.to', { merchant })}</a>`;
  // A form POST: it changes state (cancels the order), and the SameSite=Lax cookie keeps it same-site.
  return html`<form method="post" action="${pagePath(view.nonce)}/cancel" class="back-form"><button type="submit" class="back" id="cancel-back">${tr('back.cancel', { merchant })}</button></form>`;
}

/** The other language, as a link that sets it (the cookie sticks for the next pages). */
function languageSwitch(view: CheckoutView): Raw {
  const other: Lang = view.lang === 'zh' ? 'en' : 'zh';
  return html`<a class="lang-switch" id="lang-switch" href="${pagePath(view.nonce)}?lang=${other}" lang="${LOCALE[other]}" hreflang="${LOCALE[other]}">${checkoutTranslator(other)('lang.name')}</a>`;
}

export async function renderCheckoutPage(view: CheckoutView): Promise<string> {
  const { t } = view;
  const pending = isPending(t);
  const panel = pending ? await methodPanel(view) : resultPanel(view);
  const refresh = pending
    ? html`<noscript><meta http-equiv="refresh" content="10"></noscript>`
    : view.redirect_url !== null
      ? html`<noscript><meta http-equiv="refresh" content="3;url=${view.redirect_url}"></noscript>`
      : html``;
  const body = html`<div class="shell">
${view.sandbox ? html`<p class="sandbox-banner" id="sandbox-banner" role="status">${view.tr('page.sandbox_banner')}</p>` : ''}
<header class="topbar">${backControl(view)}<span class="secure">${raw(LOCK)}${view.tr('page.secure')}</span>${languageSwitch(view)}</header>
<main class="checkout" id="checkout" data-status-url="${pagePath(view.nonce)}/status" data-status="${t.status}" data-copy="${view.tr('pay.copy')}" data-copied="${view.tr('pay.copied')}" data-confirming="${view.tr('pay.confirming')}">
${summary(view)}
<section class="card pay" id="pay-panel" aria-live="polite">${panel}</section>
</main>
<footer class="foot"><span>${raw(LOCK)} ${view.tr('page.encrypted')}</span>${view.sandbox ? html`<span class="tag">${view.tr('page.sandbox')}</span>` : ''}</footer>
</div>`;
  return documentPage({
    title: view.tr('page.title', { merchant: view.user.organisation_name, amount: displayMoney(t.amount, t.currency) }),
    lang: view.lang,
    bodyClass: `checkout-page m-${t.payment_method} b-${view.browser}`,
    body,
    head: refresh,
  });
}
