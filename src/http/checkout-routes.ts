import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { PaymentPresentation } from '../domain/channel.js';
import { GatewayError } from '../domain/errors.js';
import { isDatabaseAway } from '../ports/store.js';
import { isPending } from '../domain/transaction.js';
import { browserOf, type BrowserKind } from '../domain/redirection.js';
import { checkoutTranslator, type Lang } from '../pages/checkout-i18n.js';
import {
  failureTexts,
  renderCheckoutPage,
  resultPanel,
  visitErrorPage,
  visitProblemMessage,
} from '../pages/checkout-page.js';
import { pagePath, type CheckoutView } from '../pages/checkout-view.js';
import { errorPage } from '../pages/simple-pages.js';
import {
  CHECKOUT_VISIT_MS,
  checkoutRedirect,
  payerState,
  checkoutStatus,
  leaveCheckout,
  needsHandoff,
  openCheckout,
  type CheckoutVisit,
  type VisitProblem,
} from '../usecases/checkout-visit.js';
import {
  presentPayment,
  providerReturn,
  providerReturnByNonce,
  type PayerReturn,
} from '../usecases/checkout-payment.js';
import type { GatewayContext } from '../usecases/context.js';
import { ClientGone } from './client-gone.js';
import { pageHeaders, pageLang, readCookie } from './page-replies.js';
import { noteAnswer } from './request-log.js';

// The hosted payment page {host_url}/{nonce} and the two requests the page makes:
//   GET  /v2/checkout/:nonce          the page; the first GET uses up the nonce and sets the visit cookie
//   GET  /v2/checkout/:nonce/status   live status (long poll with ?wait=1), JSON
//   POST /v2/checkout/:nonce/cancel   the back link: cancel, then 303 to backPage_url
// The visit cookie is HttpOnly, SameSite=Lax and scoped to the page's path, so each nonce has its
// own and a cross-site form cannot trigger the cancel.

const COOKIE = 'gw_visit';
const NONCE = /^[A-Za-z0-9]{1,128}$/;
/** A provider's return form (UnionPay's carries its certificate): not read, only bounded. */
const RETURN_BODY_LIMIT = 64 * 1024;
const STATUS_CODES: Record<VisitProblem, number> = { unknown: 404, used: 410, expired: 410 };

/** The query parameter that carries a visit token from WeChat to the phone's browser (needsHandoff). */
const HANDOFF = 'visit';
const TOKEN = /^[A-Za-z0-9_-]{1,64}$/;

function handoffToken(request: FastifyRequest): string | undefined {
  const v = (request.query as Record<string, unknown> | undefined)?.[HANDOFF];
  return typeof v === 'string' && TOKEN.test(v) ? v : undefined;
}

const OAUTH_CODE = /^[A-Za-z0-9_-]{1,128}$/;

/** The page's own parameters: anything else in the address is what a provider added on sending the customer back. */
const PAGE_PARAMETERS = new Set([HANDOFF, 'code', 'state', 'lang']);

function fromProvider(request: FastifyRequest): boolean {
  return Object.keys(request.query ?? {}).some((k) => !PAGE_PARAMETERS.has(k));
}

/**
 * The payer round trip of this visit (presentPayment's PayerReturn): its state is derived from
 * the visit's token, so a code is taken only when it comes back to the visit that asked for it.
 */
function payerReturn(request: FastifyRequest, token: string): PayerReturn {
  const state = payerState(token);
  const q = (request.query ?? {}) as Record<string, unknown>;
  const code = typeof q.code === 'string' && OAUTH_CODE.test(q.code) && q.state === state ? q.code : undefined;
  return { state, ...(code !== undefined && { code }) };
}

function visitCookie(ctx: GatewayContext, nonce: string, token: string): string {
  const secure = ctx.config.publicUrl.startsWith('https:') ? '; Secure' : '';
  return `${COOKIE}=${token}; Path=${pagePath(nonce)}; Max-Age=${CHECKOUT_VISIT_MS / 1000}; HttpOnly; SameSite=Lax${secure}`;
}

/**
 * A request the client got wrong before the route ran: a body that is not JSON, not UTF-8 or too
 * large (the back link's POST needs no body at all). Not a failure of the gateway's.
 */
function clientFault(error: FastifyError | GatewayError): string | undefined {
  // The body parsers' refusals (body-parsers.ts); the routes' own refusals are pages, not errors.
  if (error instanceof GatewayError) return error.code === 3 ? error.detail : undefined;
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return 'the request body is too large';
  const status = error.statusCode ?? 500;
  return status >= 400 && status < 500 ? error.message : undefined;
}

/** Unexpected failures on these routes answer a page (or JSON for the status), never a stack trace. */
function pageErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const fault = clientFault(error);
  if (fault !== undefined) {
    // Logged in the request's one line, like the API's refusals (request-log.ts).
    noteAnswer(reply, 3, fault);
    const lang = pageLang(request, reply);
    const tr = checkoutTranslator(lang);
    void pageHeaders(reply)
      .code(400)
      .send(errorPage(tr('error.unreadable.title'), tr('error.unreadable.text'), lang));
    return;
  }
  // A header set before the failure (a redirect's Location) must not go out with the error page.
  reply.removeHeader('location');
  const lang = pageLang(request, reply);
  const tr = checkoutTranslator(lang);
  // The database away for a moment (a failover, a restart) or a clash undone: reloading will do.
  const away = isDatabaseAway(error);
  if (away) {
    request.log.warn({ err: error.message }, 'the hosted page met the database away');
    reply.header('retry-after', '5');
  } else request.log.error({ err: error }, 'unexpected error on the hosted page');
  const { status, title, text } = failureTexts(tr, away, request.id);
  if (request.url.split('?')[0].endsWith('/status')) {
    void reply.code(status).header('cache-control', 'no-store').send({ status: 'error', message: text });
    return;
  }
  void pageHeaders(reply)
    .code(status)
    .send(errorPage(title, text, lang));
}

export async function checkoutRoutes(app: FastifyInstance, ctx: GatewayContext): Promise<void> {
  const viewOf = (
    visit: CheckoutVisit,
    nonce: string,
    browser: BrowserKind,
    redirect_url: string | null,
    lang: Lang,
    payment: PaymentPresentation = { kind: 'instructions' },
  ): CheckoutView => ({
    lang,
    tr: checkoutTranslator(lang),
    t: visit.transaction,
    user: visit.user,
    wallet: visit.wallet,
    nonce,
    browser,
    sandbox: visit.transaction.channel === 'sandbox',
    payment,
    redirect_url,
  });
  const paramsOf = (request: FastifyRequest) => {
    const { nonce } = request.params as { nonce: string };
    return { nonce, valid: NONCE.test(nonce), token: readCookie(request.headers.cookie, COOKIE) };
  };

  app.get('/v2/checkout/:nonce', {
    // A HEAD (link checkers, previews) must not use up the nonce.
    exposeHeadRoute: false,
    errorHandler: pageErrorHandler,
    handler: async (request, reply) => {
      const { nonce, valid, token } = paramsOf(request);
      pageHeaders(reply);
      const lang = pageLang(request, reply);
      const tr = checkoutTranslator(lang);
      if (!valid) return reply.code(404).send(visitErrorPage('unknown', tr, lang));
      // A visit handed over in the address (see needsHandoff): only when this browser has none of its own.
      const handed = token === undefined ? handoffToken(request) : undefined;
      // The new visit's cookie is set as soon as the nonce is used: also on a page that then fails.
      const opened = await openCheckout(ctx, nonce, token ?? handed, (fresh) => {
        reply.header('set-cookie', visitCookie(ctx, nonce, fresh));
      });
      if (!opened.ok) return reply.code(STATUS_CODES[opened.reason]).send(visitErrorPage(opened.reason, tr, lang));
      const browser = browserOf(request.headers['user-agent']);
      const { newToken } = opened.visit;
      if (newToken !== undefined) {
        if (needsHandoff(opened.visit, browser))
          return reply
            .code(303)
            .header('location', `${pagePath(nonce)}?${HANDOFF}=${newToken}`)
            .send();
      } else if (handed !== undefined) {
        // The browser that was handed the visit keeps it in its own cookie, and the token leaves the address bar.
        reply.header('set-cookie', visitCookie(ctx, nonce, handed));
        return reply.code(303).header('location', pagePath(nonce)).send();
      }
      const order = opened.visit.transaction;
      // Back from the provider's page (POLi's ?token=, Alipay's signed return): it is asked now, and
      // the page is shown again without what the provider added to its address.
      if (fromProvider(request) && isPending(order)) {
        await providerReturn(ctx, order, request.log);
        return reply.code(303).header('location', pagePath(nonce)).send();
      }
      const back = payerReturn(request, (newToken ?? token)!);
      const payment = isPending(order)
        ? await presentPayment(ctx, order, browser, `${ctx.config.publicUrl}${pagePath(nonce)}`, back)
        : undefined;
      // WeChat's JSAPI needs the payer's openid: WeChat identifies the payer and sends the browser back here with a code.
      if (payment?.kind === 'authorize') return reply.code(302).header('location', payment.url).send();
      // The one-time code leaves the address bar once used: a reload shows the page as it stands.
      if (back.code !== undefined && payment?.kind === 'jsapi')
        return reply.code(303).header('location', pagePath(nonce)).send();
      return reply.send(
        await renderCheckoutPage(
          viewOf(opened.visit, nonce, browser, checkoutRedirect(opened.visit, browser), lang, payment),
        ),
      );
    },
  });

  app.get('/v2/checkout/:nonce/status', {
    errorHandler: pageErrorHandler,
    handler: async (request, reply) => {
      const { nonce, valid, token } = paramsOf(request);
      reply.header('cache-control', 'no-store');
      const lang = pageLang(request, reply);
      const tr = checkoutTranslator(lang);
      if (!valid)
        return reply
          .code(404)
          .send({ status: 'invalid', reason: 'unknown', message: visitProblemMessage('unknown', tr) });
      const wait = (request.query as { wait?: string }).wait === '1';
      // A long poll whose page went away stops waiting.
      const abort = wait ? new ClientGone(reply.raw) : undefined;
      const browser = browserOf(request.headers['user-agent']);
      const s = await checkoutStatus(ctx, { nonce, token, browser, wait }, abort);
      if (!s.ok)
        return reply
          .code(STATUS_CODES[s.reason])
          .send({ status: 'invalid', reason: s.reason, message: visitProblemMessage(s.reason, tr) });
      const t = s.visit.transaction;
      if (isPending(t)) return { status: 'pending' };
      return {
        status: t.status,
        html: resultPanel(viewOf(s.visit, nonce, browser, s.redirect_url, lang)).text,
        redirect_url: s.redirect_url,
      };
    },
  });

  // A provider's page sending the customer back with a POST (UnionPay's front notification, a form
  // of its own): the body proves nothing and is not read; the order is asked about, then shown.
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: RETURN_BODY_LIMIT }, (_request, body, done) =>
      done(null, body),
    );
    scope.post('/v2/checkout/:nonce', {
      errorHandler: pageErrorHandler,
      handler: async (request, reply) => {
        const { nonce, valid } = paramsOf(request);
        pageHeaders(reply);
        const lang = pageLang(request, reply);
        const tr = checkoutTranslator(lang);
        if (!valid || !(await providerReturnByNonce(ctx, nonce, request.log)))
          return reply.code(404).send(visitErrorPage('unknown', tr, lang));
        return reply.code(303).header('location', pagePath(nonce)).send();
      },
    });
  });

  app.post('/v2/checkout/:nonce/cancel', {
    errorHandler: pageErrorHandler,
    handler: async (request, reply) => {
      const { nonce, valid, token } = paramsOf(request);
      pageHeaders(reply);
      const lang = pageLang(request, reply);
      const tr = checkoutTranslator(lang);
      if (!valid) return reply.code(404).send(visitErrorPage('unknown', tr, lang));
      const left = await leaveCheckout(ctx, nonce, token);
      if (!left.ok) return reply.code(STATUS_CODES[left.reason]).send(visitErrorPage(left.reason, tr, lang));
      if (left.to === 'back') {
        request.log.info({ canceled: left.canceled }, 'customer left the hosted page by the back link');
        return reply.code(303).header('location', left.backPage_url).send();
      }
      return reply.code(303).header('location', pagePath(nonce)).send();
    },
  });
}
