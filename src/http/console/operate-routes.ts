import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { permits } from '../../domain/console.js';
import { outboxPage, ratesPage } from '../../pages/console/operate-pages.js';
import { rateHistory, setExchangeRate } from '../../usecases/console-admin.js';
import { ConsoleError } from '../../usecases/console-auth.js';
import { refundsWaiting } from '../../usecases/console-reads.js';
import { callbackHealth } from '../../usecases/console-wallets.js';
import type { GatewayContext } from '../../usecases/context.js';
import { asMessage, noticeOf, text, type Body } from './forms.js';
import { withConsoleErrors } from './page-routes.js';
import { guards, page } from './route-helpers.js';

// Operators' pages for running the gateway: exchange rates (set, with their history), the
// notification outbox and the refunds waiting for their provider.

export async function operateRoutes(app: FastifyInstance, ctx: GatewayContext): Promise<void> {
  const { signedIn, csrfAndUser } = guards(app, ctx);

  // Exchange rates and their history.
  const rates = async (
    request: FastifyRequest,
    reply: FastifyReply,
    m: {
      notice?: string;
      error?: string;
      typed?: { from: string; to: string; rate: string };
      confirm?: { from: string; to: string; rate: string; before: number; change: number };
    } = {},
  ) => {
    const user = request.consoleUser!;
    const [list, history] = await Promise.all([ctx.store.accounts.listRates(), rateHistory(ctx, user)]);
    return ratesPage(page(request, reply), { rates: list, history, canConfigure: permits(user, 'configure'), ...m });
  };
  app.get('/rates', signedIn, async (request, reply) =>
    withConsoleErrors(request, reply, () => rates(request, reply, noticeOf(request))),
  );
  app.post('/rates', csrfAndUser, async (request, reply) => {
    const body = (request.body ?? {}) as Body;
    return withConsoleErrors(request, reply, async () => {
      try {
        const set = await setExchangeRate(
          ctx,
          request.consoleUser!,
          request.ip,
          text(body.from),
          text(body.to),
          text(body.rate),
          body.confirmed === 'yes',
        );
        if (set.kind === 'set') return reply.redirect('/console/rates?notice=saved', 303);
        // Far from the last rate: asked again, with the rate as typed, before anything changes.
        return rates(request, reply, {
          confirm: {
            from: text(body.from).toUpperCase(),
            to: text(body.to).toUpperCase(),
            rate: text(body.rate),
            before: set.before,
            change: set.change,
          },
        });
      } catch (e) {
        const m = asMessage(request, e);
        reply.code(400);
        // The form keeps what was typed, to be corrected rather than typed again.
        return rates(request, reply, {
          ...m,
          typed: {
            from: text(body.from).slice(0, 3),
            to: text(body.to).slice(0, 3),
            rate: text(body.rate).slice(0, 40),
          },
        });
      }
    });
  });

  // The notification outbox, and the refunds waiting for their provider's answer.
  app.get('/outbox', signedIn, async (request, reply) =>
    withConsoleErrors(request, reply, async () => {
      if (!permits(request.consoleUser!, 'operate')) throw new ConsoleError('error.forbidden');
      const [backlog, failing, hosts, refunds] = await Promise.all([
        ctx.store.outbox.backlog(),
        ctx.store.outbox.countFailing(),
        callbackHealth(ctx, {}, 20),
        refundsWaiting(ctx, 20),
      ]);
      return outboxPage(page(request, reply), { ...backlog, failing, hosts, refunds, now: ctx.now() });
    }),
  );
}
