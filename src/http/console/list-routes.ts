import type { FastifyInstance } from 'fastify';
import type { RefundStatus } from '../../domain/refund.js';
import {
  notificationsPage,
  refundsPage,
  type NotificationFilterView,
  type RefundFilterView,
} from '../../pages/console/list-pages.js';
import { permits } from '../../domain/console.js';
import { isPaymentMethod } from '../../domain/transaction.js';
import { messagePage } from '../../pages/console/auth-pages.js';
import { chartsPage } from '../../pages/console/chart-pages.js';
import { charts } from '../../usecases/console-charts.js';
import type { OutboxSearch } from '../../ports/outbox.js';
import {
  listNotifications,
  reportedStatus,
  resendNotification,
  retryHostNow,
} from '../../usecases/console-notifications.js';
import type { Body } from './forms.js';
import type { RefundSearch } from '../../ports/refunds.js';
import type { GatewayContext } from '../../usecases/context.js';
import { listRefunds } from '../../usecases/console-reads.js';
import { commonFilter } from './list-filter.js';
import { withConsoleErrors } from './page-routes.js';
import { guards, page } from './route-helpers.js';

// The lists beside the transactions: every refund. A merchant's user sees their organisation's
// only (console-reads.ts); an operator may choose one organisation.

const REFUND_STATUSES: readonly RefundStatus[] = ['pending', 'succeeded', 'failed'];
const CURSOR = /^(\d{1,15})_([\w-]{1,64})$/;

/** The refunds list's filter from the query; a value that is no value of its field is refused. */
export function parseRefundFilter(q: Record<string, unknown>): {
  filter: RefundFilterView;
  search: Omit<RefundSearch, 'limit'>;
  problem?: string;
} {
  const common = commonFilter(q);
  const { s, problems } = common;
  const filter: RefundFilterView = { ...common.filter };
  const search: Omit<RefundSearch, 'limit'> = { ...common.search };
  const status = s('refund_status');
  if (status) {
    filter.refund_status = status;
    if ((REFUND_STATUSES as readonly string[]).includes(status)) search.refund_status = status as RefundStatus;
    else problems.push(`refund_status ${status}`);
  }
  const after = s('after');
  if (after) {
    const m = CURSOR.exec(after);
    if (m) search.after = { created_at: Number(m[1]), refund_id: m[2] };
    else problems.push('after');
  }
  return { filter, search, ...(problems.length > 0 && { problem: problems.join(', ') }) };
}

/** The notification log's filter from the query; a value that is no value of its field is refused. */
export function parseNotificationFilter(q: Record<string, unknown>): {
  filter: NotificationFilterView;
  search: Omit<OutboxSearch, 'limit'>;
  problem?: string;
} {
  const common = commonFilter(q);
  const { s, problems } = common;
  const filter: NotificationFilterView = { ...common.filter };
  const search: Omit<OutboxSearch, 'limit'> = { ...common.search };
  const state = s('state');
  if (state) {
    filter.state = state;
    if (state === 'failing' || state === 'waiting' || state === 'delivered') search.state = state;
    else problems.push(`state ${state}`);
  }
  const host = s('callback_host').toLowerCase();
  if (host) {
    filter.callback_host = host;
    // host[:port], as outbox.callback_host holds it.
    if (/^[a-z0-9.[\]:_-]{1,300}$/.test(host)) search.callback_host = host;
    else problems.push(`callback_host ${host}`);
  }
  const after = s('after');
  if (after) {
    const m = /^(\d{1,15})_(evt_[0-9a-f]{1,64})$/.exec(after);
    if (m) search.after = { created_at: Number(m[1]), event_id: m[2] };
    else problems.push('after');
  }
  return { filter, search, ...(problems.length > 0 && { problem: problems.join(', ') }) };
}

/** Where a form sends the browser back to: the notification log it was sent from (a path of it only). */
function backTo(v: unknown): string {
  return typeof v === 'string' && /^\/console\/notifications(\?[^\s]*)?$/.test(v) && v.length < 2000
    ? v
    : '/console/notifications';
}

/** The organisation of each API user among the rows, as the lists show it. */
async function organisationNames(ctx: GatewayContext, user_ids: Iterable<string>): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  for (const id of new Set(user_ids)) {
    const u = await ctx.store.accounts.findUser(id);
    if (u) names.set(id, `${u.organisation_name} (${u.organisation_id})`);
  }
  return names;
}

export async function listRoutes(app: FastifyInstance, ctx: GatewayContext): Promise<void> {
  const { signedIn, csrfAndUser } = guards(app, ctx);

  app.get('/refunds', signedIn, async (request, reply) => {
    const user = request.consoleUser!;
    const pc = page(request, reply);
    const { filter, search, problem } = parseRefundFilter(request.query as Record<string, unknown>);
    const operator = user.kind === 'operator';
    if (!operator) delete filter.organisation_id;
    const organisations = operator ? await ctx.store.accounts.listOrganisations() : undefined;
    const shown = { filter, statuses: REFUND_STATUSES, ...(organisations && { organisations }) };
    if (problem)
      return reply
        .code(400)
        .send(
          refundsPage(pc, { ...shown, rows: [], first: true, error: pc.t('error.bad_filter', { detail: problem }) }),
        );
    const { rows, next } = await listRefunds(ctx, user, search);
    const names = operator
      ? await organisationNames(
          ctx,
          rows.map((r) => r.user_id),
        )
      : new Map<string, string>();
    return reply.send(
      refundsPage(pc, {
        ...shown,
        rows: rows.map((r) => ({ ...r, ...(operator && { organisation: names.get(r.user_id) ?? '' }) })),
        first: search.after === undefined,
        ...(next && { next: `${next.created_at}_${next.refund_id}` }),
      }),
    );
  });

  app.get('/notifications', signedIn, async (request, reply) => {
    const user = request.consoleUser!;
    const pc = page(request, reply);
    const query = request.query as Record<string, unknown>;
    const { filter, search, problem } = parseNotificationFilter(query);
    const operator = user.kind === 'operator';
    if (!operator) delete filter.organisation_id;
    const organisations = operator ? await ctx.store.accounts.listOrganisations() : undefined;
    const notice =
      query.notice === 'retried'
        ? pc.t('notice.retried', { count: Number(query.count) || 0 })
        : query.notice === 'resent'
          ? pc.t('notice.resent_one')
          : undefined;
    const shown = {
      filter,
      canResend: permits(user, 'resend'),
      ...(organisations && { organisations }),
      ...(notice && { notice }),
    };
    if (problem)
      return reply.code(400).send(
        notificationsPage(pc, {
          ...shown,
          rows: [],
          first: true,
          error: pc.t('error.bad_filter', { detail: problem }),
        }),
      );
    const { rows, next } = await listNotifications(ctx, user, search);
    const names = operator
      ? await organisationNames(
          ctx,
          rows.flatMap((r) => (r.user_id === null ? [] : [r.user_id])),
        )
      : new Map<string, string>();
    return reply.send(
      notificationsPage(pc, {
        ...shown,
        rows: rows.map((r) => ({
          ...r,
          status: reportedStatus(r),
          ...(operator && { organisation: (r.user_id !== null && names.get(r.user_id)) || '' }),
        })),
        first: search.after === undefined,
        ...(next && { next: `${next.created_at}_${next.event_id}` }),
      }),
    );
  });

  app.post('/notifications/:event_id/resend', csrfAndUser, async (request, reply) => {
    const { event_id } = request.params as { event_id: string };
    const back = backTo((request.body as Body)?.back);
    return withConsoleErrors(request, reply, async () => {
      await resendNotification(ctx, request.consoleUser!, request.ip, event_id);
      return reply.redirect(`${back}${back.includes('?') ? '&' : '?'}notice=resent`, 303);
    });
  });

  app.post('/notifications/retry-host', csrfAndUser, async (request, reply) => {
    const body = (request.body ?? {}) as Body;
    const host = typeof body.callback_host === 'string' ? body.callback_host.trim().toLowerCase() : '';
    const back = backTo(body.back);
    return withConsoleErrors(request, reply, async () => {
      const count = host ? await retryHostNow(ctx, request.consoleUser!, request.ip, host) : 0;
      return reply.redirect(`${back}${back.includes('?') ? '&' : '?'}notice=retried&count=${count}`, 303);
    });
  });

  app.get('/charts', signedIn, async (request, reply) => {
    const user = request.consoleUser!;
    const pc = page(request, reply);
    const q = request.query as Record<string, unknown>;
    const s = (k: string) => (typeof q[k] === 'string' ? q[k].trim() : '');
    const method = s('payment_method');
    const organisation = user.kind === 'operator' ? s('organisation_id') : '';
    const problems = [
      ...(method && !isPaymentMethod(method) ? [`payment_method ${method}`] : []),
      ...(organisation && !/^\d{1,15}$/.test(organisation) ? [`organisation_id ${organisation}`] : []),
    ];
    const organisations = user.kind === 'operator' ? await ctx.store.accounts.listOrganisations() : undefined;
    if (problems.length > 0)
      return reply
        .code(400)
        .send(messagePage(pc, pc.t('error.title'), pc.t('error.bad_filter', { detail: problems.join(', ') })));
    const c = await charts(ctx, user, {
      ...(s('currency') && { currency: s('currency') }),
      ...(method && isPaymentMethod(method) && { payment_method: method }),
      ...(organisation && { organisation_id: Number(organisation) }),
    });
    return reply.send(
      chartsPage(pc, {
        ...c,
        ...(method && { payment_method: method }),
        ...(organisation && { organisation_id: organisation }),
        ...(organisations && { organisations }),
      }),
    );
  });
}
