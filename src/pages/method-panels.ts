import { createHash } from 'node:crypto';
import { qrPngDataUri } from '../domain/qr-png.js';
import { html, raw, type Raw } from './html.js';
import {
  channelUrl,
  displayMoney,
  methodName,
  pagePath,
  plainAmount,
  sandboxUrl,
  type CheckoutView,
} from './checkout-view.js';

// The payment part of the hosted page, one panel per method and browser. What a panel offers
// follows the spec's "Payment interface" and the wallet apps' own rules: WeChat Pay is paid inside
// WeChat (or by scanning the QR with present_qr=1 outside it); Alipay shows a QR on a desktop and
// opens the app on a phone; bank methods walk through their bank or transfer flow.

/** Simple marks (not the brands' logos), drawn inline: the page loads nothing from elsewhere. */
const ICONS: Readonly<Record<string, string>> = {
  wechat:
    '<svg viewBox="0 0 24 24" aria-hidden="true"><path fill="currentColor" d="M9.5 4C5.4 4 2 6.8 2 10.3c0 2 1.1 3.7 2.8 4.9L4.2 17.5l2.6-1.4c.9.3 1.8.4 2.7.4h.6a5.6 5.6 0 0 1-.2-1.5c0-3.5 3.3-6.2 7.4-6.2h.6C17.1 6.1 13.7 4 9.5 4Zm-2.6 4.6a.9.9 0 1 1 0-1.8.9.9 0 0 1 0 1.8Zm5.2 0a.9.9 0 1 1 0-1.8.9.9 0 0 1 0 1.8ZM22 15c0-2.9-2.9-5.2-6.3-5.2S9.4 12.1 9.4 15s2.8 5.2 6.3 5.2c.7 0 1.4-.1 2-.3l2.1 1.1-.5-1.9C20.9 18.2 22 16.7 22 15Zm-8.4-.8a.8.8 0 1 1 0-1.6.8.8 0 0 1 0 1.6Zm4.2 0a.8.8 0 1 1 0-1.6.8.8 0 0 1 0 1.6Z"/></svg>',
  alipay:
    '<svg viewBox="0 0 24 24" aria-hidden="true"><rect x="2" y="2" width="20" height="20" rx="5" fill="currentColor"/><path fill="#fff" d="M6 7.5h12v1.6h-5.1v1.6h4.3a12 12 0 0 1-2 4c1.7.8 3.3 1.4 4.8 1.8l-.7 1.6c-1.8-.5-3.6-1.3-5.3-2.2-1.6 1.4-3.5 2.2-5.4 2.2-1.9 0-2.9-1-2.9-2.3 0-1.6 1.4-2.6 3.4-2.6 1.2 0 2.5.3 3.9.9.5-.7.9-1.4 1.2-2.1H6v-1.3h5.1V9.1H6V7.5Zm2.7 6.4c-1.1 0-1.6.5-1.6 1.1 0 .6.6 1.1 1.6 1.1 1.2 0 2.4-.5 3.4-1.3-1.2-.6-2.4-.9-3.4-.9Z"/></svg>',
  bank: '<svg viewBox="0 0 24 24" aria-hidden="true"><path fill="currentColor" d="M12 2 2 7v2h20V7L12 2Zm-7 9v7h2v-7H5Zm4 0v7h2v-7H9Zm4 0v7h2v-7h-2Zm4 0v7h2v-7h-2ZM2 20v2h20v-2H2Z"/></svg>',
  coin: '<svg viewBox="0 0 24 24" aria-hidden="true"><circle cx="12" cy="12" r="10" fill="currentColor"/><path fill="#fff" d="M13.2 6v1.6c1.5.3 2.5 1.2 2.7 2.6h-1.8c-.2-.7-.8-1.1-1.8-1.1-1.1 0-1.7.5-1.7 1.1 0 .8.9 1 2.2 1.3 1.9.4 3.3 1 3.3 2.9 0 1.4-1 2.5-2.9 2.8V18h-1.6v-1.6c-1.8-.3-2.9-1.3-3-2.9h1.8c.1.9.8 1.4 2 1.4 1.1 0 1.8-.5 1.8-1.2 0-.8-.8-1-2.3-1.3-1.8-.4-3.1-1-3.1-2.8 0-1.3 1-2.4 2.6-2.7V6h1.8Z"/></svg>',
  phone:
    '<svg viewBox="0 0 24 24" aria-hidden="true"><path fill="currentColor" d="M7 2h10a2 2 0 0 1 2 2v16a2 2 0 0 1-2 2H7a2 2 0 0 1-2-2V4a2 2 0 0 1 2-2Zm0 3v13h10V5H7Zm5 14.2a1 1 0 1 0 0 2 1 1 0 0 0 0-2Z"/></svg>',
};

const ICON_OF: Readonly<Record<string, string>> = { wechat: 'wechat', alipay: 'alipay', coin_payments: 'coin' };

export function methodIcon(method: string): Raw {
  return raw(ICONS[ICON_OF[method] ?? 'bank']);
}

async function qrImage(text: string, alt: string): Promise<Raw> {
  const src = qrPngDataUri(text, {
    errorCorrectionLevel: 'M',
    margin: 1,
    width: 480,
    dark: '#111827',
    light: '#ffffff',
  });
  return html`<img class="qr-img" src="${src}" alt="${alt}" width="240" height="240">`;
}

function head(view: CheckoutView, subtitle: string): Raw {
  return html`<div class="pay-head"><span class="method-icon">${methodIcon(view.t.payment_method)}</span><div><h2>${methodName(view)}</h2><p>${subtitle}</p></div></div>`;
}

function waiting(text: string): Raw {
  return html`<p class="waiting" id="live-status" role="status"><span class="pulse" aria-hidden="true"></span>${text}</p>`;
}

function steps(items: string[]): Raw {
  return html`<ol class="steps">${items.map((s) => html`<li>${s}</li>`)}</ol>`;
}

/** The sandbox's stand-in for the customer's phone: the QR text opens the sandbox payment app. */
function sandboxBox(view: CheckoutView, text: string): Raw {
  if (!view.sandbox) return html``;
  const { tr } = view;
  return html`<aside class="sandbox"><span class="tag">${tr('page.sandbox')}</span><p>${text}${view.lang === 'zh' ? '' : ' '}${tr('sandbox.no_money')}</p><a id="sandbox-app-link" href="${sandboxUrl(view)}" target="_blank" rel="noopener">${tr('sandbox.open_app')}</a></aside>`;
}

function button(href: string, label: string, id: string): Raw {
  return html`<a class="btn primary" id="${id}" href="${href}">${label}</a>`;
}

/**
 * WeChat Pay's H5 page refuses a visit without a Referer from the domain the merchant registered
 * for H5: this one link sends the page's origin (the pages' own policy sends no referrer at all).
 */
function wechatH5Button(href: string, label: string): Raw {
  return html`<a class="btn primary" id="pay-button" href="${href}" referrerpolicy="origin">${label}</a>`;
}

function copyRow(view: CheckoutView, label: string, value: string, id: string): Raw {
  return html`<div class="copy-row"><dt>${label}</dt><dd><code id="${id}">${value}</code><button type="button" class="copy" data-copy="${id}" aria-label="${view.tr('pay.copy_label', { label })}">${view.tr('pay.copy')}</button></dd></div>`;
}

function infoRow(label: string, value: string, id: string): Raw {
  return html`<div class="copy-row plain"><dt>${label}</dt><dd id="${id}">${value}</dd></div>`;
}

/** The provider refused or could not be reached: nothing to pay with yet, the customer tries again. */
function unavailablePanel(view: CheckoutView): Raw {
  const { tr } = view;
  const [before, after = ''] = tr('pay.unavailable.text', { retry: '\u0000' }).split('\u0000');
  return html`${head(view, tr('pay.unavailable'))}<div class="notice" id="pay-unavailable"><span class="notice-icon">${raw(ICONS.phone)}</span><div><h3>${tr('pay.unavailable.title', { method: methodName(view) })}</h3>
<p>${before}<a id="pay-retry" href="${pagePath(view.nonce)}">${tr('pay.unavailable.retry')}</a>${after}</p></div></div>`;
}

function scanPanel(view: CheckoutView, text: Promise<Raw>, app: string, steps_: string[]): Promise<Raw> {
  const { tr } = view;
  return text.then(
    (img) =>
      html`${head(view, tr('pay.scan'))}<figure class="qr">${img}<figcaption>${tr('pay.scan_with', { app })}</figcaption></figure>
${steps(steps_)}${waiting(tr('pay.waiting'))}`,
  );
}

const WECHAT_SCAN = ['pay.wechat_scan.1', 'pay.wechat_scan.2', 'pay.wechat_scan.3'] as const;
const WECHAT_HOLD = ['pay.wechat_hold.1', 'pay.wechat_hold.2', 'pay.wechat_hold.3'] as const;
const ALIPAY_SCAN = ['pay.alipay_scan.1', 'pay.alipay_scan.2', 'pay.alipay_scan.3'] as const;

function wechatDesktopNotice(view: CheckoutView): Raw {
  const { tr } = view;
  return html`${head(view, tr('pay.inside_wechat'))}<div class="notice"><span class="notice-icon">${raw(ICONS.phone)}</span><div><h3>${tr('pay.continue_wechat.title')}</h3>
<p>${tr('pay.continue_wechat.text')}</p></div></div>
${waiting(tr('pay.waiting'))}`;
}

/** The app's name in the page's language (WeChat, Alipay). */
const appName = (view: CheckoutView, method: 'wechat' | 'alipay') =>
  view.lang === 'zh' ? (method === 'wechat' ? '微信' : '支付宝') : method === 'wechat' ? 'WeChat' : 'Alipay';

async function wechatPanel(view: CheckoutView): Promise<Raw> {
  const p = view.payment;
  if (p.kind === 'unavailable') return unavailablePanel(view);
  if (view.sandbox) return wechatSandboxPanel(view);
  const { tr } = view;
  const amount = displayMoney(view.t.amount, view.t.currency);
  const app = appName(view, 'wechat');
  const alt = tr('pay.qr_alt', { app: methodName(view) });
  switch (p.kind) {
    case 'qr':
      return scanPanel(
        view,
        qrImage(p.text, alt),
        app,
        (view.browser === 'wechat' ? WECHAT_HOLD : WECHAT_SCAN).map((k) => tr(k)),
      );
    case 'redirect':
      return html`${head(view, tr('pay.with_wechat_app'))}<p class="lead">${tr('pay.wechat_opens', { amount })}</p>
${wechatH5Button(p.url, tr('pay.open_wechat'))}${waiting(tr('pay.waiting_app', { app: methodName(view) }))}`;
    case 'jsapi':
      return html`${head(view, tr('pay.inside_wechat'))}<p class="lead">${tr('pay.confirm_in', { amount, app })}</p>
<button type="button" class="btn primary" id="pay-button" data-jsapi="${JSON.stringify(p.params)}">${tr('pay.pay_amount', { amount })}</button>${waiting(tr('pay.waiting_app', { app: methodName(view) }))}`;
    case 'instructions':
    case 'authorize':
    case 'sandbox':
    case 'transfer':
    case 'form':
      return wechatDesktopNotice(view);
  }
}

async function wechatSandboxPanel(view: CheckoutView): Promise<Raw> {
  const { tr } = view;
  const amount = displayMoney(view.t.amount, view.t.currency);
  const app = appName(view, 'wechat');
  const qrWanted = view.t.present_qr === '1';
  const waitingApp = waiting(tr('pay.waiting_app', { app: methodName(view) }));
  if (view.browser === 'wechat') {
    return html`${head(view, tr('pay.inside_wechat'))}<p class="lead">${tr('pay.confirm_in', { amount, app })}</p>
${button(channelUrl(view), tr('pay.pay_amount', { amount }), 'pay-button')}${waitingApp}${sandboxBox(view, tr('sandbox.button_opens'))}`;
  }
  if (view.browser === 'desktop' && qrWanted) {
    return html`${head(view, tr('pay.scan'))}<figure class="qr">${await qrImage(sandboxUrl(view), tr('pay.qr_alt', { app: methodName(view) }))}<figcaption>${tr('pay.scan_with', { app })}</figcaption></figure>
${steps(WECHAT_SCAN.map((k) => tr(k)))}${waiting(tr('pay.waiting'))}${sandboxBox(view, tr('sandbox.qr_opens'))}`;
  }
  if (view.browser === 'desktop') return html`${wechatDesktopNotice(view)}${sandboxBox(view, tr('sandbox.as_wechat'))}`;
  return html`${head(view, tr('pay.with_wechat_app'))}<p class="lead">${tr('pay.wechat_opens', { amount })}</p>
${button(channelUrl(view), tr('pay.open_wechat'), 'pay-button')}${qrWanted ? await otherPhone(view, app) : html``}${waitingApp}${sandboxBox(view, tr('sandbox.button_opens'))}`;
}

async function otherPhone(view: CheckoutView, app: string): Promise<Raw> {
  const { tr } = view;
  return html`<details class="other-phone"><summary>${tr('pay.other_phone')}</summary><figure class="qr">${await qrImage(sandboxUrl(view), tr('pay.qr_alt', { app }))}<figcaption>${tr('pay.scan_with', { app })}</figcaption></figure></details>`;
}

function alipayInWechat(view: CheckoutView): Raw {
  const { tr } = view;
  return html`${head(view, tr('pay.open_browser'))}<div class="notice"><span class="notice-icon">${raw(ICONS.phone)}</span><div><h3>${tr('pay.alipay_in_wechat.title')}</h3>
<p>${tr('pay.alipay_in_wechat.text')}</p></div></div>${waiting(tr('pay.waiting'))}`;
}

async function alipayPanel(view: CheckoutView): Promise<Raw> {
  const p = view.payment;
  if (p.kind === 'unavailable') return unavailablePanel(view);
  if (view.sandbox) return alipaySandboxPanel(view);
  const { tr } = view;
  const amount = displayMoney(view.t.amount, view.t.currency);
  const app = appName(view, 'alipay');
  switch (p.kind) {
    case 'qr':
      return scanPanel(
        view,
        qrImage(p.text, tr('pay.qr_alt', { app })),
        app,
        ALIPAY_SCAN.map((k) => tr(k)),
      );
    case 'redirect': {
      const inApp = view.browser === 'alipay';
      return html`${head(view, tr(inApp ? 'pay.inside_alipay' : 'pay.with_alipay_app'))}<p class="lead">${tr('pay.confirm_in', { amount, app })}</p>
${button(p.url, inApp ? tr('pay.pay_amount', { amount }) : tr('pay.open_alipay'), 'pay-button')}${waiting(tr('pay.waiting_app', { app }))}`;
    }
    case 'jsapi':
    case 'authorize':
    case 'instructions':
    case 'sandbox':
    case 'transfer':
    case 'form':
      return alipayInWechat(view);
  }
}

async function alipaySandboxPanel(view: CheckoutView): Promise<Raw> {
  const { tr } = view;
  const amount = displayMoney(view.t.amount, view.t.currency);
  const app = appName(view, 'alipay');
  if (view.browser === 'wechat') return html`${alipayInWechat(view)}${sandboxBox(view, tr('sandbox.as_alipay'))}`;
  if (view.browser === 'desktop') {
    return html`${head(view, tr('pay.scan'))}<figure class="qr">${await qrImage(sandboxUrl(view), tr('pay.qr_alt', { app }))}<figcaption>${tr('pay.scan_with', { app })}</figcaption></figure>
${steps(ALIPAY_SCAN.map((k) => tr(k)))}${waiting(tr('pay.waiting'))}${sandboxBox(view, tr('sandbox.qr_opens'))}`;
  }
  const inApp = view.browser === 'alipay';
  return html`${head(view, tr(inApp ? 'pay.inside_alipay' : 'pay.with_alipay_app'))}<p class="lead">${tr('pay.confirm_in', { amount, app })}</p>
${button(channelUrl(view), inApp ? tr('pay.pay_amount', { amount }) : tr('pay.open_alipay'), 'pay-button')}${inApp ? html`` : await otherPhone(view, app)}${waiting(tr('pay.waiting_app', { app }))}${sandboxBox(view, tr('sandbox.button_opens'))}`;
}

const POLI_BANKS: Readonly<Record<string, readonly string[]>> = {
  NZD: ['ANZ', 'ASB', 'BNZ', 'Kiwibank', 'TSB', 'Westpac'],
  AUD: ['ANZ', 'Bank of Melbourne', 'Commonwealth Bank', 'NAB', 'St.George', 'Westpac'],
};
const UNIONPAY_BANKS = [
  'Agricultural Bank of China',
  'Bank of China',
  'Bank of Communications',
  'China Construction Bank',
  'China Merchants Bank',
  'ICBC',
];

/** Bank selection, then on to the bank (the sandbox payment app), which returns to this page. */
function bankChoice(view: CheckoutView, banks: readonly string[], subtitle: string, cta: string, note: string): Raw {
  const { tr } = view;
  const action = channelUrl(view);
  const [base = '', query = ''] = action.split('?');
  const hidden = [...new URLSearchParams(query)].map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`);
  return html`${head(view, subtitle)}<form class="banks" id="bank-form" method="get" action="${base}"><fieldset><legend>${tr('pay.choose_bank')}</legend>
<div class="bank-list">${banks.map((b) => html`<label class="bank"><input type="radio" name="bank" value="${b}" required><span class="bank-mark">${b.slice(0, 1)}</span><span>${b}</span></label>`)}</div></fieldset>
${hidden}<button class="btn primary" id="bank-continue" type="submit">${cta}</button><p class="fine">${note}</p></form>${waiting(tr('pay.waiting_bank'))}${sandboxBox(view, tr('sandbox.bank'))}`;
}

/** Sandbox stand-ins for a channel's payee details, stable per order. */
function sandboxCode(order_id: string, length: number): string {
  const digits = BigInt(`0x${createHash('sha256').update(order_id).digest('hex')}`)
    .toString()
    .slice(-length);
  return digits.padStart(length, '0');
}

/** When a PayID stops taking payments, in Sydney's time (PayID is Australia's), in the page's language. */
function expiryText(view: CheckoutView, at: number): string {
  return new Intl.DateTimeFormat(view.lang === 'zh' ? 'zh-CN' : 'en-AU', {
    timeZone: 'Australia/Sydney',
    dateStyle: 'medium',
    timeStyle: 'short',
  }).format(at);
}

function payidPanel(view: CheckoutView): Raw {
  const { tr } = view;
  const p = view.payment;
  if (p.kind === 'unavailable') return unavailablePanel(view);
  if (p.kind === 'transfer')
    return html`${head(view, tr('pay.from_banking_app'))}${steps([tr('pay.payid.1'), tr('pay.payid.2', { merchant: view.user.organisation_name }), tr('pay.payid.3')])}
<dl class="copy-list">${copyRow(view, 'PayID', p.payId, 'payid')}${copyRow(view, tr('pay.amount'), plainAmount(view.t), 'transfer-amount')}${copyRow(view, tr('pay.reference'), view.t.order_id, 'transfer-reference')}</dl>
<p class="fine" id="payid-expires"><time datetime="${new Date(p.expiresAt).toISOString()}">${tr('pay.payid.expires', { time: expiryText(view, p.expiresAt) })}</time></p>
${waiting(tr('pay.waiting_transfer'))}`;
  const payId = `pay-${view.t.order_id}@payid.sandbox`;
  return html`${head(view, tr('pay.from_banking_app'))}${steps([tr('pay.payid.1'), tr('pay.payid.2', { merchant: view.user.organisation_name }), tr('pay.payid.3')])}
<dl class="copy-list">${copyRow(view, 'PayID', payId, 'payid')}${copyRow(view, tr('pay.amount'), plainAmount(view.t), 'transfer-amount')}${copyRow(view, tr('pay.reference'), view.t.order_id, 'transfer-reference')}</dl>
${waiting(tr('pay.waiting_transfer'))}${sandboxBox(view, tr('sandbox.bank'))}`;
}

function moneymorePanel(view: CheckoutView): Raw {
  const { tr } = view;
  const account = `02-0500-${sandboxCode(view.t.order_id, 7)}-00`;
  return html`${head(view, tr('pay.transfer'))}${steps([tr('pay.transfer.1'), tr('pay.transfer.2'), tr('pay.transfer.3')])}
<dl class="copy-list">${infoRow(tr('pay.account_name'), view.user.organisation_name, 'account-name')}${copyRow(view, tr('pay.account_number'), account, 'account-number')}${copyRow(view, tr('pay.amount'), plainAmount(view.t), 'transfer-amount')}${copyRow(view, tr('pay.reference'), view.t.order_id, 'transfer-reference')}</dl>
${waiting(tr('pay.waiting_transfer'))}${sandboxBox(view, tr('sandbox.bank'))}`;
}

async function coinPanel(view: CheckoutView): Promise<Raw> {
  const { tr } = view;
  const p = view.payment;
  if (p.kind === 'unavailable') return unavailablePanel(view);
  // CoinPayments' checkout: the customer picks the coin there, and comes back here.
  if (p.kind === 'redirect')
    return html`${head(view, tr('pay.crypto'))}<p class="lead">${tr('pay.coinpayments.lead', { amount: displayMoney(view.t.amount, view.t.currency) })}</p>
${button(p.url, tr('pay.coinpayments.continue'), 'pay-button')}<p class="fine">${tr('pay.coinpayments.note')}</p>${waiting(tr('pay.waiting_chain'))}`;
  const address = `tcoin1q${sandboxCode(`${view.t.order_id}/address`, 30)}`;
  const amount = plainAmount(view.t);
  return html`${head(view, tr('pay.crypto'))}<div class="coin"><figure class="qr small">${await qrImage(`tcoin:${address}?amount=${amount}`, tr('pay.crypto_address_alt'))}</figure>
<dl class="copy-list">${infoRow(tr('pay.crypto_network'), tr('pay.crypto_network_name'), 'coin-network')}${copyRow(view, tr('pay.crypto_amount'), amount, 'coin-amount')}${copyRow(view, tr('pay.crypto_address'), address, 'coin-address')}</dl></div>
<p class="fine">${tr('pay.crypto_note', { currency: view.t.currency })}</p>
${waiting(tr('pay.waiting_chain'))}${sandboxBox(view, tr('sandbox.chain'))}`;
}

/**
 * A provider's own page, the customer's bank behind it (POLi): one button there; the customer
 * comes back to this page, which then shows the outcome.
 */
function bankRedirectPanel(
  view: CheckoutView,
  url: string,
  again: boolean,
  lead: string,
  cta: string,
  note: string,
): Raw {
  const { tr } = view;
  return html`${head(view, tr('pay.from_bank'))}${again ? html`<p class="notice-line" id="pay-again" role="alert">${tr('pay.again')}</p>` : html``}<p class="lead">${lead}</p>
${button(url, cta, 'pay-button')}<p class="fine">${note}</p>${waiting(tr('pay.waiting_bank'))}`;
}

function poliPanel(view: CheckoutView): Raw {
  const { tr } = view;
  const p = view.payment;
  if (p.kind === 'unavailable') return unavailablePanel(view);
  if (p.kind === 'redirect')
    return bankRedirectPanel(
      view,
      p.url,
      p.again === true,
      tr('pay.poli.lead', { amount: displayMoney(view.t.amount, view.t.currency) }),
      tr('pay.poli.continue'),
      tr('pay.poli_note'),
    );
  return bankChoice(
    view,
    POLI_BANKS[view.t.currency] ?? [...new Set([...POLI_BANKS.NZD, ...POLI_BANKS.AUD])].sort(),
    tr('pay.from_bank'),
    tr('pay.to_bank'),
    tr('pay.poli_note'),
  );
}

/**
 * UnionPay's cashier: the browser posts the signed consume there (a form of hidden fields and one
 * button), pays by card, and comes back to this page.
 */
function unionpayPanel(view: CheckoutView): Raw {
  const { tr } = view;
  const p = view.payment;
  if (p.kind === 'unavailable') return unavailablePanel(view);
  if (p.kind === 'form') {
    const hidden = Object.entries(p.fields).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`);
    return html`${head(view, tr('pay.unionpay'))}${p.again === true ? html`<p class="notice-line" id="pay-again" role="alert">${tr('pay.again')}</p>` : html``}<p class="lead">${tr('pay.unionpay.lead', { amount: displayMoney(view.t.amount, view.t.currency) })}</p>
<form id="unionpay-form" method="post" action="${p.action}" accept-charset="UTF-8">${hidden}<button class="btn primary" id="pay-button" type="submit">${tr('pay.to_unionpay')}</button></form><p class="fine">${tr('pay.unionpay_note')}</p>${waiting(tr('pay.waiting_bank'))}`;
  }
  return bankChoice(view, UNIONPAY_BANKS, tr('pay.unionpay'), tr('pay.to_unionpay'), tr('pay.unionpay_note'));
}

export async function methodPanel(view: CheckoutView): Promise<Raw> {
  const { tr } = view;
  switch (view.t.payment_method) {
    case 'wechat':
      return wechatPanel(view);
    case 'alipay':
      return alipayPanel(view);
    case 'polipay':
      return poliPanel(view);
    case 'upi_upop':
      return unionpayPanel(view);
    case 'payid':
      return payidPanel(view);
    case 'moneymore':
      return moneymorePanel(view);
    case 'coin_payments':
      return coinPanel(view);
    default:
      return html`${head(view, tr('pay.payment'))}${waiting(tr('pay.waiting'))}${sandboxBox(view, tr('sandbox.open'))}`;
  }
}
