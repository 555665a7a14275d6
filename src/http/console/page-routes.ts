import { balanceCard } from '../../usecases/console-books.js';
import { exceptionCounts } from '../../usecases/console-reconciliation.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AUDIT_ACTIONS, permits } from '../../domain/console.js';
import type { ConsoleRepo } from '../../ports/console.js';
import type { ErrorCode } from '../../domain/errors.js';
import { PAYMENT_METHODS, STATUSES, type Transaction } from '../../domain/transaction.js';
import { API_CODES_ZH } from '../../pages/console/api-codes-zh.js';
import { messagePage } from '../../pages/console/auth-pages.js';
import { translator } from '../../pages/console/i18n.js';
import {
  auditPage,
  type AuditFilterView,
  cancelConfirmPage,
  dashboardPage,
  refundConfirmPage,
  transactionPage,
  transactionsPage,
  listQuery,
  type ListFilter,
} from '../../pages/console/views.js';
import type { TransactionSearch } from '../../ports/transactions.js';
import {
  consoleAskProvider,
  consoleCancel,
  consoleRefund,
  consoleResend,
  orderFor,
  refundAmountProblem,
} from '../../usecases/console-actions.js';
import { ConsoleError } from '../../usecases/console-auth.js';
import { dashboard, listTransactions, PAGE_SIZE, transactionDetail } from '../../usecases/console-reads.js';
import type { GatewayContext } from '../../usecases/context.js';
import { commonFilter, dayStart } from './list-filter.js';
import { guards, page } from './route-helpers.js';

// The signed-in pages. Each asks the use case, which holds a merchant's user to their organisation.

const CURSOR = /^(\d{1,15})_([\w-]{1,64})$/;

export { dayStart };

/** The list's filter from the query; a value that is no value of its field is refused (not ignored). */
export function parseFilter(q: Record<string, unknown>): {
  filter: ListFilter;
  search: Omit<TransactionSearch, 'limit'>;
  problem?: string;
} {
  const common = commonFilter(q);
  const { s, problems } = common;
  const filter: ListFilter = { ...common.filter };
  const search: Omit<TransactionSearch, 'limit'> = { ...common.search };
  const status = s('status');
  if (status) {
    filter.status = status;
    if ((STATUSES as readonly string[]).includes(status)) search.status = status as Transaction['status'];
    else problems.push(`status ${status}`);
  }
  const method = s('payment_method');
  if (method) {
    filter.payment_method = method;
    if ((PAYMENT_METHODS as readonly string[]).includes(method))
      search.payment_method = method as Transaction['payment_method'];
    else problems.push(`payment_method ${method}`);
  }
  const wallet = s('wallet_id');
  if (wallet) {
    filter.wallet_id = wallet;
    search.wallet_id = wallet;
  }
  const text = s('q');
  if (text) {
    filter.q = text;
    search.text = text.slice(0, 200);
  }
  const after = s('after');
  if (after) {
    const m = CURSOR.exec(after);
    if (m) search.after = { created_at: Number(m[1]), order_id: m[2] };
    else problems.push('after');
  }
  return { filter, search, ...(problems.length > 0 && { problem: problems.join(', ') }) };
}

/** The list an order was opened from (its query string), read again as a filter: only a list's own parameters go back into a link. */
function backQuery(v: unknown): string | undefined {
  if (typeof v !== 'string' || v.length > 2000) return undefined;
  const params = Object.fromEntries(new URLSearchParams(v));
  const { filter, problem } = parseFilter(params);
  if (problem) return undefined;
  return (
    listQuery({ ...filter, ...(params.after && CURSOR.test(params.after) && { after: params.after }) }) || undefined
  );
}

/** The organisation of each API user among the rows (a page holds a few of them). */
async function organisationsOfUsers(
  ctx: GatewayContext,
  rows: readonly Transaction[],
): Promise<Map<string, { organisation_id: number; organisation_name: string }>> {
  const ids = [...new Set(rows.map((r) => r.user_id))];
  const users = await Promise.all(ids.map((id) => ctx.store.accounts.findUser(id)));
  return new Map(users.flatMap((u) => (u ? [[u.user_id, u] as const] : [])));
}

export async function pageRoutes(app: FastifyInstance, ctx: GatewayContext): Promise<void> {
  const { signedIn, csrfAndUser } = guards(app, ctx);

  app.get('/', signedIn, async (request, reply) => {
    const [d, balances, exceptions] = await Promise.all([
      dashboard(ctx, request.consoleUser!),
      balanceCard(ctx, request.consoleUser!),
      exceptionCounts(ctx, request.consoleUser!),
    ]);
    const failingHref = permits(request.consoleUser!, 'operate') ? '/console/outbox' : undefined;
    return reply.send(
      dashboardPage(page(request, reply), {
        ...d,
        balances,
        ...(exceptions && { exceptions }),
        ...(failingHref && { failingHref }),
      }),
    );
  });

  app.get('/transactions', signedIn, async (request, reply) => {
    const user = request.consoleUser!;
    const pc = page(request, reply);
    const { filter, search, problem } = parseFilter(request.query as Record<string, unknown>);
    const operator = user.kind === 'operator';
    if (!operator) delete filter.organisation_id;
    const organisations = operator ? await ctx.store.accounts.listOrganisations() : undefined;
    const walletsOf = operator ? search.organisation_id : user.organisation_id!;
    const wallets =
      walletsOf === undefined
        ? []
        : (await ctx.store.accounts.listOrganisationWallets(walletsOf)).map((w) => w.wallet_id);
    const shown = { filter, wallets, ...(organisations && { organisations }) };
    if (problem)
      return reply.code(400).send(
        transactionsPage(pc, {
          ...shown,
          rows: [],
          first: true,
          error: pc.t('error.bad_filter', { detail: problem }),
        }),
      );
    const { rows, next } = await listTransactions(ctx, user, search);
    // A page filtered by method or wallet may end short of PAGE_SIZE and still go on (SEARCH_WINDOW).
    const partial = next !== undefined && rows.length < PAGE_SIZE;
    return reply.send(
      transactionsPage(pc, {
        ...shown,
        rows,
        ...(operator && { organisationOf: await organisationsOfUsers(ctx, rows) }),
        first: search.after === undefined,
        partial,
        ...(next && { next: `${next.created_at}_${next.order_id}` }),
      }),
    );
  });

  const NOTICES = { refunded: 'notice.refunded', resent: 'notice.resent', canceled: 'notice.canceled' } as const;

  /** A transaction's page, for a user who may see it (else ConsoleError: the not-found page), with a notice or an error. */
  const detailPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    order_id: string,
    message: {
      notice?: string;
      error?: string;
      typed?: { refund_amount: string; reference: string };
      back?: string;
    } = {},
  ) => {
    const user = request.consoleUser!;
    const d = await transactionDetail(ctx, user, order_id);
    const organisation =
      user.kind === 'operator' ? await ctx.store.accounts.findOrganisation(d.organisation_id) : undefined;
    return transactionPage(page(request, reply), {
      order: d.order,
      refunds: d.refunds,
      payments: d.payments,
      opened: d.opened,
      notifications: d.notifications.map((n) => ({
        event_id: n.row.event_id,
        created_at: n.row.created_at,
        delivery_status: n.row.delivery_status,
        attempts: n.attempts,
        attempts_pruned: n.row.attempts_pruned,
        attempts_pruned_until: n.row.attempts_pruned_until,
      })),
      can: { refund: permits(user, 'refund'), cancel: permits(user, 'refund'), resend: permits(user, 'resend') },
      ...message,
      ...(organisation && {
        organisation_name: `${organisation.organisation_name} (${organisation.organisation_id})`,
        organisation_id: organisation.organisation_id,
      }),
      ...(message.back && { back: message.back }),
    });
  };
  /** A refused refund's or cancel's code and the API's message, with what the code means in the reader's language. */
  const refusal = (request: FastifyRequest, r: { code: ErrorCode; message: string }) => ({
    code: r.code,
    message: request.consoleLang === 'zh' ? `${API_CODES_ZH[r.code]}（${r.message}）` : r.message,
  });
  const orderPath = (order_id: string) => `/console/transactions/${encodeURIComponent(order_id)}`;

  app.get('/transactions/:order_id', signedIn, async (request, reply) => {
    const { order_id } = request.params as { order_id: string };
    const query = request.query as { notice?: string; back?: unknown };
    const key = NOTICES[query.notice as keyof typeof NOTICES];
    const back = backQuery(query.back);
    return withConsoleErrors(request, reply, () =>
      detailPage(request, reply, order_id, {
        ...(key && { notice: translator(request.consoleLang)(key) }),
        ...(back && { back }),
      }),
    );
  });

  const text = (v: unknown) => (typeof v === 'string' ? v.trim() : '');

  // A refund takes two steps: the page's form shows what will be refunded; its button (confirmed=yes) makes it.
  app.post('/transactions/:order_id/refund', csrfAndUser, async (request, reply) => {
    const { order_id } = request.params as { order_id: string };
    const body = (request.body ?? {}) as Record<string, unknown>;
    const refund_amount = text(body.refund_amount);
    const reference = text(body.reference).slice(0, 200);
    const user = request.consoleUser!;
    return withConsoleErrors(request, reply, async () => {
      if (body.confirmed !== 'yes') {
        const { order } = await orderFor(ctx, user, order_id, 'refund');
        // An amount that cannot be refunded is said so now, not repeated back for confirmation.
        const problem = refundAmountProblem(order, refund_amount);
        if (problem) {
          reply.code(400);
          return detailPage(request, reply, order_id, {
            error: translator(request.consoleLang)('error.refund_amount', problem),
            typed: { refund_amount, reference },
          });
        }
        return refundConfirmPage(page(request, reply), order, refund_amount.trim(), reference);
      }
      const result = await consoleRefund(ctx, user, request.ip, order_id, refund_amount, reference);
      if (result.kind === 'done') return reply.redirect(`${orderPath(order_id)}?notice=refunded`, 303);
      reply.code(422);
      return detailPage(request, reply, order_id, {
        error: translator(request.consoleLang)('error.refund_refused', refusal(request, result)),
        typed: { refund_amount, reference },
      });
    });
  });

  // A cancel takes two steps too: it cannot be taken back.
  app.post('/transactions/:order_id/cancel', csrfAndUser, async (request, reply) => {
    const { order_id } = request.params as { order_id: string };
    const body = (request.body ?? {}) as Record<string, unknown>;
    const user = request.consoleUser!;
    return withConsoleErrors(request, reply, async () => {
      if (body.confirmed !== 'yes')
        return cancelConfirmPage(page(request, reply), (await orderFor(ctx, user, order_id, 'refund')).order);
      const result = await consoleCancel(ctx, user, request.ip, order_id);
      if (result.kind === 'done') return reply.redirect(`${orderPath(order_id)}?notice=canceled`, 303);
      reply.code(422);
      return detailPage(request, reply, order_id, {
        error: translator(request.consoleLang)('error.cancel_refused', refusal(request, result)),
      });
    });
  });

  app.post('/transactions/:order_id/resend', csrfAndUser, async (request, reply) => {
    const { order_id } = request.params as { order_id: string };
    return withConsoleErrors(request, reply, async () => {
      await consoleResend(ctx, request.consoleUser!, request.ip, order_id);
      return reply.redirect(`${orderPath(order_id)}?notice=resent`, 303);
    });
  });

  // A pending order's provider asked now (a customer says they paid): what it said, on the order's page.
  app.post('/transactions/:order_id/ask-provider', csrfAndUser, async (request, reply) => {
    const { order_id } = request.params as { order_id: string };
    return withConsoleErrors(request, reply, async () => {
      const t = translator(request.consoleLang);
      let answers;
      try {
        answers = await consoleAskProvider(ctx, request.consoleUser!, request.ip, order_id);
      } catch (e) {
        // Nothing to ask, nobody to ask, or asked a moment ago: said on the order's page.
        if (
          !(e instanceof ConsoleError) ||
          !['error.nothing_to_ask', 'error.cannot_ask', 'error.asked_just_now'].includes(e.key)
        )
          throw e;
        reply.code(409);
        return detailPage(request, reply, order_id, { error: t(e.key, e.params) });
      }
      const said = answers
        .map((a) => `${a.out_trade_no}: ${t(`tx.provider_said_${a.state}`)}${a.reason ? ` (${a.reason})` : ''}`)
        .join('; ');
      return detailPage(request, reply, order_id, { notice: t('notice.asked_provider', { answers: said }) });
    });
  });

  app.get('/audit', signedIn, async (request, reply) => {
    const user = request.consoleUser!;
    const pc = page(request, reply);
    if (!permits(user, 'operate'))
      return reply.code(403).send(messagePage(pc, pc.t('error.title_forbidden'), pc.t('error.forbidden')));
    const { filter, search, problem } = parseAuditFilter(request.query as Record<string, unknown>);
    const [users, organisations] = await Promise.all([
      ctx.store.console.listUsers({}),
      ctx.store.accounts.listOrganisations(),
    ]);
    const shown = { filter, actions: AUDIT_ACTIONS, users, organisations };
    if (problem)
      return reply
        .code(400)
        .send(auditPage(pc, { ...shown, rows: [], error: pc.t('error.bad_filter', { detail: problem }) }));
    const rows = await ctx.store.console.listAudit({ ...search, limit: PAGE_SIZE });
    return reply.send(
      auditPage(pc, { ...shown, rows, ...(rows.length === PAGE_SIZE && { older: rows[rows.length - 1].audit_id }) }),
    );
  });
}

/** The audit log's filter from the query; a value that is no value of its field is refused. */
export function parseAuditFilter(q: Record<string, unknown>): {
  filter: AuditFilterView;
  search: Omit<Parameters<ConsoleRepo['listAudit']>[0], 'limit'>;
  problem?: string;
} {
  const common = commonFilter(q);
  const { s, problems } = common;
  const filter: AuditFilterView = { ...common.filter };
  const search: Omit<Parameters<ConsoleRepo['listAudit']>[0], 'limit'> = { ...common.search };
  const actor = s('actor');
  if (actor) {
    filter.actor = actor;
    if (actor === 'anonymous' || actor === 'cli:' || /^cu_[\w-]{1,40}$/.test(actor)) search.actor = actor;
    else problems.push(`actor ${actor}`);
  }
  const action = s('action');
  if (action) {
    filter.action = action;
    // An action of an older version is still found by its code.
    if (/^[a-z_.]{1,80}$/.test(action)) search.actions = [action];
    else problems.push(`action ${action}`);
  }
  const before = s('before');
  if (before) {
    if (/^\d{1,15}$/.test(before)) search.before = Number(before);
    else problems.push('before');
  }
  return { filter, search, ...(problems.length > 0 && { problem: problems.join(', ') }) };
}

/** Sends what `run` makes (a page, or a reply it sent itself); a ConsoleError becomes its page: refused (403) or not found (404). */
export async function withConsoleErrors(
  request: FastifyRequest,
  reply: FastifyReply,
  run: () => Promise<string | FastifyReply>,
): Promise<FastifyReply> {
  try {
    const out = await run();
    return typeof out === 'string' ? reply.send(out) : out;
  } catch (e) {
    if (!(e instanceof ConsoleError)) throw e;
    const pc = page(request, reply);
    const title =
      e.key === 'error.forbidden'
        ? 'error.title_forbidden'
        : e.key === 'error.not_found'
          ? 'error.title_not_found'
          : 'error.title';
    return reply
      .code(e.key === 'error.forbidden' ? 403 : e.key === 'error.not_found' ? 404 : 409)
      .send(messagePage(pc, pc.t(title), pc.t(e.key, e.params)));
  }
}
