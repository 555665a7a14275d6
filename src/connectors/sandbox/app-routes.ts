import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../../domain/errors.js';
import { isPaid, isPending, type Transaction } from '../../domain/transaction.js';
import { checkoutTranslator, pageLanguage, type Lang } from '../../pages/checkout-i18n.js';
import { failureTexts } from '../../pages/checkout-page.js';
import { displayMoney } from '../../pages/checkout-view.js';
import { PAGE_HEADERS } from '../../pages/headers.js';
import { html, type Raw } from '../../pages/html.js';
import { errorPage, page } from '../../pages/simple-pages.js';
import type { GatewayContext } from '../../usecases/context.js';
import { isDatabaseAway } from '../../ports/store.js';
import { requireActiveUser } from '../../usecases/authenticate.js';
import { settlePayment } from '../../usecases/settle-payment.js';
import { SANDBOX_REFUSES_REFUNDS, SANDBOX_SCANNED } from './connector.js';

const RESULTS = ['paid', 'failed', 'rejected'] as const;
/** Where the sandbox "bank" may send the browser back to: only a hosted page of this gateway. */
const RETURN_TO = /^\/v2\/checkout\/[A-Za-z0-9]{1,128}$/;

function returnTo(v: unknown): string | null {
  return typeof v === 'string' && RETURN_TO.test(v) ? v : null;
}

function hiddenFields(fields: Record<string, string | null>) {
  return Object.entries(fields)
    .filter((e): e is [string, string] => e[1] !== null)
    .map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`);
}

function appPage(lang: Lang, t: Transaction, merchant: string, body: Raw, bank: string | null): string {
  const tr = checkoutTranslator(lang);
  const method = tr(`method.${t.payment_method}`);
  const row = (label: string, value: string) => html`<div><dt>${label}</dt><dd>${value}</dd></div>`;
  return page(
    tr('app.title', { method }),
    html`<header class="app-head"><p>${tr('app.name')}</p><h1>${bank ? tr('app.bank_via', { bank, method }) : method}</h1></header>
<p class="app-amount" id="app-amount">${displayMoney(t.amount, t.currency)}</p><p class="app-to">${tr('app.to', { merchant })}</p>
<dl class="details">${row(tr('summary.product'), t.product_name)}${row(tr('pay.reference'), t.merchant_reference)}${row(tr('summary.order'), t.order_id)}</dl>${body}`,
    `m-${t.payment_method}`,
    lang,
  );
}

/** The order if the sandbox serves it: a payment of a real provider is never settled here. */
async function sandboxOrder(ctx: GatewayContext, order_id: string): Promise<Transaction | undefined> {
  const t = await ctx.store.transactions.find(order_id);
  return t?.channel === 'sandbox' ? t : undefined;
}

/**
 * The sandbox "payment app": the QR text of every sandbox payment is `{base}/sandbox/pay/{order_id}`.
 * GET shows approve/decline buttons (and, like scanning a real QR, marks the payment as opened);
 * POST with form field `result` = paid | failed | rejected settles it, as a channel callback would.
 * Reached from a hosted page's bank flow or pay button, it carries `return_to` (the page) and sends
 * the browser back there afterwards, as a bank returns the customer to the gateway.
 * Registered only in sandbox mode.
 */
function langOf(request: FastifyRequest, reply: FastifyReply): Lang {
  const { lang, setCookie } = pageLanguage(
    (request.query as Record<string, unknown>).lang,
    request.headers.cookie,
    request.headers['accept-language'],
  );
  if (setCookie) reply.header('set-cookie', setCookie);
  return lang;
}

/**
 * The payment app's pages are a browser's: the database away (a failover, a restart) or anything
 * unexpected answers a page saying so, not the API's JSON. A form the page did not send (a refused
 * result) and the JSON callers (tests, scripts) keep the API's answers.
 */
function appPageError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const wantsJson = (request.headers.accept ?? '').includes('application/json');
  // Thrown on: the app's own handler (the API's answers) takes it.
  if (wantsJson || (error as Error) instanceof GatewayError || (error.statusCode ?? 500) < 500) throw error;
  const away = isDatabaseAway(error);
  if (away) request.log.warn({ err: error.message }, 'the sandbox payment app met the database away');
  else request.log.error({ err: error }, 'unexpected error in the sandbox payment app');
  reply.removeHeader('location');
  const lang = langOf(request, reply);
  const { status, title, text } = failureTexts(checkoutTranslator(lang), away, request.id);
  void reply
    .headers(PAGE_HEADERS)
    .code(status)
    .send(errorPage(title, text, lang));
}

export async function sandboxRoutes(app: FastifyInstance, ctx: GatewayContext): Promise<void> {
  // Not for HEAD: opening the page counts as scanning the QR (a cancel then fails with code 1).
  app.get('/sandbox/pay/:order_id', { exposeHeadRoute: false, errorHandler: appPageError }, async (request, reply) => {
    const { order_id } = request.params as { order_id: string };
    const query = request.query as { return_to?: unknown; bank?: unknown };
    const t = await sandboxOrder(ctx, order_id);
    reply.headers(PAGE_HEADERS);
    const lang = langOf(request, reply);
    const tr = checkoutTranslator(lang);
    if (!t) return reply.code(404).send(errorPage(tr('app.unknown.title'), tr('app.unknown.text', { order_id }), lang));
    if (isPending(t) && t.channel_state !== SANDBOX_SCANNED)
      await ctx.store.transactions.setChannelState(order_id, SANDBOX_SCANNED, ctx.now());
    const user = await ctx.credentials.user(t.user_id);
    const bank = typeof query.bank === 'string' && query.bank !== '' ? query.bank.slice(0, 64) : null;
    const from = returnTo(query.return_to);
    const back = hiddenFields({ return_to: from });
    const action = `/sandbox/pay/${encodeURIComponent(order_id)}`;
    const body = isPending(t)
      ? html`<div class="app-actions">
<form method="post" action="${action}"><input type="hidden" name="result" value="paid">${back}<button class="btn primary" id="approve">${tr('app.approve')}</button></form>
<form method="post" action="${action}"><input type="hidden" name="result" value="failed">${back}<button class="btn danger" id="decline">${tr('app.decline')}</button></form>
${t.payment_method === 'payid' ? html`<form method="post" action="${action}"><input type="hidden" name="result" value="rejected">${hiddenFields({ msgId: `PAYID-${t.order_id}`, message: 'Rejected by the sandbox bank' })}${back}<button class="btn danger" id="reject">${tr('app.reject')}</button></form>` : ''}
</div><p class="fine">${tr('app.choose')}</p>`
      : html`<p class="fine" id="status">${tr('app.status', { status: tr(`status.${t.status}`) })}</p>${from ? html`<a class="btn" href="${from}">${tr('app.back')}</a>` : ''}`;
    return reply.send(appPage(lang, t, user?.organisation_name ?? t.user_id, body, bank));
  });

  app.post('/sandbox/pay/:order_id', { errorHandler: appPageError }, async (request, reply) => {
    const { order_id } = request.params as { order_id: string };
    const body = (request.body ?? {}) as Record<string, unknown>;
    const result = body.result;
    const wantsJson = (request.headers.accept ?? '').includes('application/json');
    if (typeof result !== 'string' || !(RESULTS as readonly string[]).includes(result)) {
      throw new GatewayError(207, 'result must be paid, failed or rejected');
    }
    const str = (v: unknown) => {
      if (typeof v !== 'string' || v === '') return null;
      // eslint-disable-next-line no-control-regex -- matching control characters is the point
      if (/[\u0000-\u001f\u007f]/.test(v))
        throw new GatewayError(207, 'message and msgId must not contain control characters');
      return v.slice(0, 255);
    };
    // Only the sandbox's own payments: one a real provider serves is paid at that provider.
    const order = await sandboxOrder(ctx, order_id);
    if (!order) throw new GatewayError(201, `no sandbox payment ${order_id}`);
    // Anyone may post here (order ids are sequential): a disabled merchant's order is not paid.
    await requireActiveUser(ctx, order.user_id);
    const settled = await settlePayment(ctx, order_id, result as (typeof RESULTS)[number], {
      status_message: str(body.message),
      msgId: str(body.msgId),
    });
    if (wantsJson) return { code: 0, message: 'SUCCESS', order_id, status: settled.status };
    const back = returnTo(body.return_to);
    if (back) return reply.code(303).header('location', back).send();
    const user = await ctx.credentials.user(settled.user_id);
    reply.headers(PAGE_HEADERS);
    const lang = langOf(request, reply);
    const tr = checkoutTranslator(lang);
    return appPage(
      lang,
      settled,
      user?.organisation_name ?? settled.user_id,
      html`<p class="fine" id="status">${tr('app.now', { order_id, status: tr(`status.${settled.status}`) })}</p>`,
      null,
    );
  });

  // How the sandbox bank answers the refunds of a paid payment: answer=refuse makes the channel
  // refuse them (the merchant gets 556), answer=accept (the default state) makes it accept them.
  app.post('/sandbox/refunds/:order_id', async (request) => {
    const { order_id } = request.params as { order_id: string };
    const answer = ((request.body ?? {}) as Record<string, unknown>).answer;
    if (answer !== 'refuse' && answer !== 'accept') throw new GatewayError(207, 'answer must be refuse or accept');
    const t = await sandboxOrder(ctx, order_id);
    if (!t) throw new GatewayError(201, `no sandbox payment ${order_id}`);
    if (!isPaid(t))
      throw new GatewayError(
        207,
        `order ${order_id} is ${t.status}; only a paid payment's refunds can be refused or accepted`,
      );
    await ctx.store.transactions.setChannelState(
      order_id,
      answer === 'refuse' ? SANDBOX_REFUSES_REFUNDS : null,
      ctx.now(),
    );
    return { code: 0, message: 'SUCCESS', order_id, refunds: answer };
  });
}
