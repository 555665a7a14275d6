import { asciiUrl } from '../domain/ascii-url.js';
import { isPending } from '../domain/transaction.js';
import { html, raw, type Raw } from './html.js';
import { displayMoney, displayRate, initials, METHOD_NAMES, pagePath, type CheckoutView } from './checkout-view.js';
import { methodPanel } from './method-panels.js';
import { documentPage, errorPage } from './simple-pages.js';

// The hosted payment page {host_url}/{nonce}: the order summary, the method's payment panel, and
// the result once the order is final. The panel is swapped for the result without a reload: the
// page's script long-polls {page}/status, which answers with resultPanel's HTML (and the redirect).

const LOCK = '<svg viewBox="0 0 24 24" aria-hidden="true"><path fill="currentColor" d="M12 2a5 5 0 0 1 5 5v3h1a2 2 0 0 1 2 2v8a2 2 0 0 1-2 2H6a2 2 0 0 1-2-2v-8a2 2 0 0 1 2-2h1V7a5 5 0 0 1 5-5Zm0 2a3 3 0 0 0-3 3v3h6V7a3 3 0 0 0-3-3Z"/></svg>';
const RESULT_ICONS: Readonly<Record<string, string>> = {
  paid: '<svg viewBox="0 0 24 24" aria-hidden="true"><path fill="currentColor" d="M12 2a10 10 0 1 1 0 20 10 10 0 0 1 0-20Zm4.3 6.3-5.6 5.6-2.9-2.9-1.4 1.4 4.3 4.3 7-7-1.4-1.4Z"/></svg>',
  failed: '<svg viewBox="0 0 24 24" aria-hidden="true"><path fill="currentColor" d="M12 2a10 10 0 1 1 0 20 10 10 0 0 1 0-20Zm3.5 5.1L12 10.6 8.5 7.1 7.1 8.5l3.5 3.5-3.5 3.5 1.4 1.4 3.5-3.5 3.5 3.5 1.4-1.4-3.5-3.5 3.5-3.5-1.4-1.4Z"/></svg>',
  canceled: '<svg viewBox="0 0 24 24" aria-hidden="true"><path fill="currentColor" d="M12 2a10 10 0 1 1 0 20 10 10 0 0 1 0-20ZM7 11v2h10v-2H7Z"/></svg>',
};

const VISIT_PROBLEMS = {
  unknown: ['Payment link not found', 'This payment link is not valid. Please return to the shop and start the payment again.'],
  used: ['Payment link already used', 'This payment link has already been opened in another browser or window. For your security it works only once. Please return to the shop and start the payment again.'],
  expired: ['Payment link expired', 'This payment link has expired. Please return to the shop and start the payment again.'],
} as const;

export function visitErrorPage(reason: keyof typeof VISIT_PROBLEMS): string {
  const [title, message] = VISIT_PROBLEMS[reason];
  return errorPage(title, message);
}

export function visitProblemMessage(reason: keyof typeof VISIT_PROBLEMS): string {
  return VISIT_PROBLEMS[reason][1];
}

function summary(view: CheckoutView): Raw {
  const { t, user, wallet } = view;
  const converted = t.currency !== 'CNY' && t.amount_cny !== null && t.currency_rate !== null;
  const row = (label: string, value: string, id: string) => html`<div><dt>${label}</dt><dd id="${id}">${value}</dd></div>`;
  return html`<section class="card summary" aria-label="Order summary">
<div class="merchant"><span class="avatar" aria-hidden="true">${initials(user.organisation_name)}</span><div><h1 class="merchant-name" id="merchant-name">${user.organisation_name}</h1><p class="wallet-name" id="wallet-name">${wallet.wallet_name}</p></div></div>
<p class="label">Amount due</p><p class="amount" id="amount">${displayMoney(t.amount, t.currency)} <span class="ccy">${t.currency}</span></p>
${converted ? html`<p class="converted" id="amount-cny">≈ ${displayMoney(t.amount_cny!, 'CNY')} CNY <span>at ${displayRate(t.currency_rate!)} CNY/${t.currency}</span></p>` : ''}
<dl class="details">${row('Product', t.product_name, 'product-name')}${row('Merchant reference', t.merchant_reference, 'merchant-reference')}${row('Order number', t.order_id, 'order-id')}${row('Payment method', METHOD_NAMES[t.payment_method], 'payment-method')}</dl>
</section>`;
}

/** The final state: what happened, and where the customer goes next. */
export function resultPanel(view: CheckoutView): Raw {
  const { t, user } = view;
  const amount = displayMoney(t.amount, t.currency);
  const merchant = user.organisation_name;
  const [title, text, kind] = resultTexts(t, amount, merchant);
  let next: Raw;
  if (view.redirect_url !== null) {
    next = html`<p class="fine" id="redirect-note"><span class="spinner" aria-hidden="true"></span>Taking you back to ${merchant}…</p><a class="btn primary" id="return-link" href="${view.redirect_url}">Return to ${merchant}</a>`;
  } else if (t.backPage_url) {
    next = html`<a class="btn" id="back-link" href="${asciiUrl(t.backPage_url)}">Back to ${merchant}</a>`;
  } else {
    next = html`<p class="fine" id="close-note">You can close this window.</p>`;
  }
  return html`<div class="result result-${kind}" id="result" data-status="${t.status}"><span class="result-icon">${raw(RESULT_ICONS[kind]!)}</span><h2 id="result-title">${title}</h2><p>${text}</p>${next}</div>`;
}

/** The result's title, text and look (paid, canceled or failed) for each status. */
function resultTexts(t: CheckoutView['t'], amount: string, merchant: string): [string, string, 'paid' | 'canceled' | 'failed'] {
  switch (t.status) {
    case 'paid':
      return ['Payment received', `${amount} has been paid to ${merchant}. Thank you!`, 'paid'];
    case 'failed':
      return ['Payment failed', `The payment did not go through and no money was taken. You can return to ${merchant} and try again.`, 'failed'];
    case 'rejected':
      return ['Transfer rejected', `Your bank rejected the transfer${t.status_message ? `: ${t.status_message}` : ''}. No money was taken.`, 'failed'];
    case 'canceled':
      return ['Payment canceled', 'This order was canceled. No money was taken.', 'canceled'];
    case 'pending':
      // Not shown: a pending order gets its payment panel instead.
      return ['Payment in progress', 'This payment has not ended yet.', 'canceled'];
  }
}

function backControl(view: CheckoutView): Raw {
  const { t } = view;
  if (!t.backPage_url) return html`<span></span>`;
  if (!isPending(t)) return html`<a class="back" href="${asciiUrl(t.backPage_url)}">‹ Back to ${view.user.organisation_name}</a>`;
  // A form POST: it changes state (cancels the order), and the SameSite=Lax cookie keeps it same-site.
  return html`<form method="post" action="${pagePath(view.nonce)}/cancel" class="back-form"><button type="submit" class="back" id="cancel-back">‹ Cancel and return to ${view.user.organisation_name}</button></form>`;
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
<header class="topbar">${backControl(view)}<span class="secure">${raw(LOCK)}Secure checkout</span></header>
<main class="checkout" id="checkout" data-status-url="${pagePath(view.nonce)}/status" data-status="${t.status}">
${summary(view)}
<section class="card pay" id="pay-panel" aria-live="polite">${panel}</section>
</main>
<footer class="foot"><span>${raw(LOCK)} Payments are encrypted and processed securely.</span>${view.sandbox ? html`<span class="tag">Sandbox</span>` : ''}</footer>
</div>`;
  return documentPage({
    title: `Pay ${view.user.organisation_name} · ${displayMoney(t.amount, t.currency)}`,
    bodyClass: `checkout-page m-${t.payment_method} b-${view.browser}`,
    body,
    head: refresh,
  });
}
