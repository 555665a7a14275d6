import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  exceptionPage,
  exceptionsPage,
  statementPage,
  statementsPage,
} from '../../pages/console/reconciliation-pages.js';
import { ConsoleError } from '../../usecases/console-auth.js';
import {
  consoleExceptionAction,
  consoleResolveException,
  exceptionDetail,
  exceptionQueue,
  statementDetail,
  statementsOverview,
} from '../../usecases/console-reconciliation.js';
import type { GatewayContext } from '../../usecases/context.js';
import { withConsoleErrors } from './page-routes.js';
import { guards, page } from './route-helpers.js';

// Reconciliation in the console (usecases/console-reconciliation.ts authorises each, operators
// only): the exceptions' queue and one exception with its resolve form, the statements and one
// statement's lines, page by page.

const text = (v: unknown) => (typeof v === 'string' ? v : '');

export async function reconciliationRoutes(app: FastifyInstance, ctx: GatewayContext): Promise<void> {
  const { signedIn, csrfAndUser } = guards(app, ctx);

  app.get('/exceptions', signedIn, async (request, reply) => {
    const q = request.query as Record<string, unknown>;
    return withConsoleErrors(request, reply, async () =>
      exceptionsPage(page(request, reply), {
        ...(await exceptionQueue(ctx, request.consoleUser!, { status: text(q.status), kind: text(q.kind) })),
        ...(q.notice === 'saved' && { notice: page(request, reply).t('admin.saved') }),
      }),
    );
  });

  const renderException = async (
    request: FastifyRequest,
    reply: FastifyReply,
    exception_id: string,
    extra: { error?: string; notice?: string } = {},
  ) =>
    exceptionPage(page(request, reply), {
      ...(await exceptionDetail(ctx, request.consoleUser!, exception_id)),
      ...extra,
    });

  app.get('/exceptions/:exception_id', signedIn, async (request, reply) => {
    const { exception_id } = request.params as { exception_id: string };
    const notice = (request.query as Record<string, unknown>).notice;
    return withConsoleErrors(request, reply, () =>
      renderException(
        request,
        reply,
        exception_id,
        notice === 'saved' ? { notice: page(request, reply).t('admin.saved') } : {},
      ),
    );
  });

  app.post('/exceptions/:exception_id/resolve', csrfAndUser, async (request, reply) => {
    const { exception_id } = request.params as { exception_id: string };
    return withConsoleErrors(request, reply, async () => {
      try {
        await consoleResolveException(
          ctx,
          { user: request.consoleUser!, ip: request.ip },
          exception_id,
          text((request.body as Record<string, unknown> | undefined)?.note),
        );
      } catch (e) {
        if (!(e instanceof ConsoleError) || e.key !== 'error.input') throw e;
        reply.code(400);
        return renderException(request, reply, exception_id, { error: page(request, reply).t(e.key, e.params) });
      }
      return reply.redirect(`/console/exceptions/${encodeURIComponent(exception_id)}?notice=saved`, 303);
    });
  });

  const ACTIONS = ['refund', 'settle', 'adjust'] as const;
  app.post('/exceptions/:exception_id/:action', csrfAndUser, async (request, reply) => {
    const { exception_id, action } = request.params as { exception_id: string; action: string };
    const act = ACTIONS.find((a) => a === action);
    if (!act) return reply.callNotFound();
    const b = (request.body ?? {}) as Record<string, unknown>;
    return withConsoleErrors(request, reply, async () => {
      try {
        const result = await consoleExceptionAction(
          ctx,
          { user: request.consoleUser!, ip: request.ip },
          exception_id,
          act,
          { wallet_id: text(b.wallet_id).trim(), amount: text(b.amount).trim(), reason: text(b.reason) },
        );
        if (!result.done) {
          reply.code(409);
          return renderException(request, reply, exception_id, { error: result.reason });
        }
      } catch (e) {
        if (!(e instanceof ConsoleError) || e.key !== 'error.input') throw e;
        reply.code(400);
        return renderException(request, reply, exception_id, { error: page(request, reply).t(e.key, e.params) });
      }
      return reply.redirect(`/console/exceptions/${encodeURIComponent(exception_id)}?notice=saved`, 303);
    });
  });

  app.get('/statements', signedIn, async (request, reply) =>
    withConsoleErrors(request, reply, async () =>
      statementsPage(page(request, reply), await statementsOverview(ctx, request.consoleUser!)),
    ),
  );

  app.get('/statements/:statement_id', signedIn, async (request, reply) => {
    const { statement_id } = request.params as { statement_id: string };
    const after = Number(text((request.query as Record<string, unknown>).after) || '0');
    return withConsoleErrors(request, reply, async () =>
      statementPage(
        page(request, reply),
        await statementDetail(
          ctx,
          request.consoleUser!,
          statement_id,
          Number.isSafeInteger(after) && after > 0 ? after : 0,
        ),
      ),
    );
  });
}
