import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { permits } from '../../domain/console.js';
import { DAY_MS } from '../../domain/ledger-settlement.js';
import { allBalancesPage, marginPage, payoutQueuePage, walletBooksPage } from '../../pages/console/books-pages.js';
import { statementCsv } from '../../pages/statement-csv.js';
import { ConsoleError } from '../../usecases/console-auth.js';
import {
  allBalances,
  consoleAdjust,
  consoleAddBankAccount,
  consoleBatch,
  consoleBatchFile,
  consoleMovePayout,
  consoleRequestPayout,
  consoleSetAutoPayout,
  consoleSetFeePlan,
  consoleSetLimits,
  consoleSetSettlementDelay,
  consoleVerifyBankAccount,
  marginReport,
  payoutQueue,
  statementForCsv,
  walletBooks,
} from '../../usecases/console-books.js';
import type { GatewayContext } from '../../usecases/context.js';
import { dayStart, withConsoleErrors } from './page-routes.js';
import { guards, page } from './route-helpers.js';

// The books in the console (usecases/console-books.ts authorises each): a wallet's books page and
// its statement's CSV, its forms (bank account, payout, fee plan, limits, settlement delay), the
// operators' payout queue with its batches' files, every wallet's balances, the margin report.

const text = (v: unknown) => (typeof v === 'string' ? v.trim() : '');
/** A form's optional field: absent when empty. */
const optional = (v: unknown) => (text(v) === '' ? undefined : text(v));
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const booksPath = (wallet_id: string) => `/console/wallets/${encodeURIComponent(wallet_id)}/books`;

/** The statement's range from the query: [from, to] days (UTC), the last 30 by default; undefined when not dates. */
function rangeOf(ctx: GatewayContext, q: Record<string, unknown>) {
  const today = ctx.now() - (ctx.now() % DAY_MS);
  const from = typeof q.from === 'string' && q.from ? q.from : isoDay(today - 29 * DAY_MS);
  const to = typeof q.to === 'string' && q.to ? q.to : isoDay(today);
  const start = dayStart(from);
  const end = dayStart(to);
  if (start === undefined || end === undefined)
    throw new ConsoleError('error.bad_filter', { detail: `${from} .. ${to}` });
  return { from, to, range: { from: start, to: end + DAY_MS } };
}

export async function booksRoutes(app: FastifyInstance, ctx: GatewayContext): Promise<void> {
  const { signedIn, csrfAndUser } = guards(app, ctx);

  const render = async (
    request: FastifyRequest,
    reply: FastifyReply,
    wallet_id: string,
    extra: { notice?: string; error?: string } = {},
  ) => {
    const user = request.consoleUser!;
    const { from, to, range } = rangeOf(ctx, request.query as Record<string, unknown>);
    const books = await walletBooks(ctx, user, wallet_id, range);
    return walletBooksPage(page(request, reply), {
      ...books,
      from,
      to,
      canMoveMoney: permits(user, user.kind === 'operator' ? 'configure' : 'refund'),
      canConfigure: user.kind === 'operator' && permits(user, 'configure'),
      ...extra,
    });
  };

  app.get('/wallets/:wallet_id/books', signedIn, async (request, reply) => {
    const { wallet_id } = request.params as { wallet_id: string };
    const notice = (request.query as Record<string, unknown>).notice;
    return withConsoleErrors(request, reply, () =>
      render(request, reply, wallet_id, notice === 'saved' ? { notice: page(request, reply).t('admin.saved') } : {}),
    );
  });

  app.get('/wallets/:wallet_id/books/statement.csv', signedIn, async (request, reply) => {
    const { wallet_id } = request.params as { wallet_id: string };
    return withConsoleErrors(request, reply, async () => {
      const { from, to, range } = rangeOf(ctx, request.query as Record<string, unknown>);
      const statement = await statementForCsv(ctx, request.consoleUser!, wallet_id, range);
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="statement-${statement.wallet_id}-${from}-${to}.csv"`)
        .send(`${statementCsv(statement)}\n`);
    });
  });

  /** A wallet form's POST: done, back to the books page; its input refused, the page again with why. */
  const walletForm = (
    path: string,
    act: (request: FastifyRequest, wallet_id: string, body: Record<string, unknown>) => Promise<unknown>,
  ) =>
    app.post(path, csrfAndUser, async (request, reply) => {
      const { wallet_id } = request.params as { wallet_id: string };
      return withConsoleErrors(request, reply, async () => {
        try {
          await act(request, wallet_id, (request.body ?? {}) as Record<string, unknown>);
        } catch (e) {
          if (!(e instanceof ConsoleError) || e.key !== 'error.input') throw e;
          reply.code(400);
          return render(request, reply, wallet_id, { error: page(request, reply).t(e.key, e.params) });
        }
        return reply.redirect(`${booksPath(wallet_id)}?notice=saved`, 303);
      });
    });
  const actor = (request: FastifyRequest) => ({ user: request.consoleUser!, ip: request.ip });

  walletForm('/wallets/:wallet_id/books/bank-accounts', (request, wallet_id, b) =>
    consoleAddBankAccount(ctx, actor(request), wallet_id, {
      holder: text(b.holder),
      ...(optional(b.bsb) !== undefined && { bsb: optional(b.bsb) }),
      ...(optional(b.account_number) !== undefined && { account_number: optional(b.account_number) }),
      ...(optional(b.nz_account) !== undefined && { nz_account: optional(b.nz_account) }),
    }),
  );
  walletForm('/wallets/:wallet_id/books/payouts', (request, wallet_id, b) =>
    consoleRequestPayout(ctx, actor(request), wallet_id, text(b.amount)),
  );
  walletForm('/wallets/:wallet_id/books/auto-payout', (request, wallet_id, b) =>
    consoleSetAutoPayout(ctx, actor(request), wallet_id, {
      above: b.off !== undefined ? 'off' : text(b.above),
      ...(optional(b.keep) !== undefined && { keep: optional(b.keep) }),
    }),
  );
  walletForm('/wallets/:wallet_id/books/fee-plans', (request, wallet_id, b) =>
    consoleSetFeePlan(ctx, actor(request), wallet_id, {
      method: text(b.method),
      percent: text(b.percent),
      ...(optional(b.fixed) !== undefined && { fixed: optional(b.fixed) }),
      ...(optional(b.min) !== undefined && { min: optional(b.min) }),
      ...(optional(b.max) !== undefined && { max: optional(b.max) }),
      ...(optional(b.effective) !== undefined && { effective: optional(b.effective) }),
      ...(optional(b.refund_fee) !== undefined && { refund_fee: optional(b.refund_fee) }),
    }),
  );
  walletForm('/wallets/:wallet_id/books/limits', (request, wallet_id, b) =>
    consoleSetLimits(ctx, actor(request), wallet_id, {
      ...(optional(b.method) !== undefined && { method: optional(b.method) }),
      ...(optional(b.single_min) !== undefined && { single_min: optional(b.single_min) }),
      ...(optional(b.single_max) !== undefined && { single_max: optional(b.single_max) }),
      ...(optional(b.daily_max) !== undefined && { daily_max: optional(b.daily_max) }),
    }),
  );
  walletForm('/wallets/:wallet_id/books/adjust', (request, wallet_id, b) =>
    consoleAdjust(ctx, actor(request), wallet_id, { amount: text(b.amount), reason: text(b.reason) }),
  );
  walletForm('/wallets/:wallet_id/books/settlement', (request, wallet_id, b) =>
    consoleSetSettlementDelay(ctx, actor(request), wallet_id, text(b.delay_days)),
  );

  app.post('/bank-accounts/:bank_account_id/verify', csrfAndUser, async (request, reply) => {
    const { bank_account_id } = request.params as { bank_account_id: string };
    return withConsoleErrors(request, reply, async () => {
      const done = await consoleVerifyBankAccount(ctx, actor(request), bank_account_id);
      return reply.redirect(`${booksPath(done.wallet_id)}?notice=saved`, 303);
    });
  });

  const renderQueue = async (
    request: FastifyRequest,
    reply: FastifyReply,
    extra: { notice?: string; error?: string } = {},
  ) => {
    const user = request.consoleUser!;
    const queue = await payoutQueue(ctx, user);
    return payoutQueuePage(page(request, reply), { ...queue, canConfigure: permits(user, 'configure'), ...extra });
  };

  app.get('/payouts', signedIn, async (request, reply) => {
    const notice = (request.query as Record<string, unknown>).notice;
    return withConsoleErrors(request, reply, () =>
      renderQueue(request, reply, notice === 'saved' ? { notice: page(request, reply).t('admin.saved') } : {}),
    );
  });

  const MOVES = { approve: 'approved', cancel: 'canceled', paid: 'paid', returned: 'returned' } as const;
  app.post('/payouts/:payout_id/:move', csrfAndUser, async (request, reply) => {
    const { payout_id, move } = request.params as { payout_id: string; move: string };
    const to = MOVES[move as keyof typeof MOVES];
    if (!to) return reply.callNotFound();
    return withConsoleErrors(request, reply, async () => {
      const user = request.consoleUser!;
      try {
        const moved = await consoleMovePayout(
          ctx,
          actor(request),
          payout_id,
          to,
          optional((request.body as Record<string, unknown>)?.reason),
        );
        // A merchant cancels from its wallet's books; an operator works from the queue.
        return reply.redirect(
          user.kind === 'operator' ? '/console/payouts?notice=saved' : `${booksPath(moved.wallet_id)}?notice=saved`,
          303,
        );
      } catch (e) {
        if (!(e instanceof ConsoleError) || e.key !== 'error.input' || user.kind !== 'operator') throw e;
        reply.code(409);
        return renderQueue(request, reply, { error: page(request, reply).t(e.key, e.params) });
      }
    });
  });

  app.post('/payouts/batch', csrfAndUser, async (request, reply) =>
    withConsoleErrors(request, reply, async () => {
      try {
        const file = await consoleBatch(ctx, actor(request), text((request.body as Record<string, unknown>)?.currency));
        if (!file) return renderQueue(request, reply, { notice: page(request, reply).t('books.nothing_to_batch') });
        return reply.redirect('/console/payouts?notice=saved', 303);
      } catch (e) {
        if (!(e instanceof ConsoleError) || e.key !== 'error.input') throw e;
        reply.code(400);
        return renderQueue(request, reply, { error: page(request, reply).t(e.key, e.params) });
      }
    }),
  );

  app.get('/payouts/batches/:batch_id/file', signedIn, async (request, reply) => {
    const { batch_id } = request.params as { batch_id: string };
    return withConsoleErrors(request, reply, async () => {
      const file = await consoleBatchFile(ctx, actor(request), batch_id);
      const name = `${file.batch.batch_id}.${file.format === 'aba' ? 'aba' : 'csv'}`;
      return reply
        .type(file.format === 'aba' ? 'text/plain; charset=us-ascii' : 'text/csv; charset=us-ascii')
        .header('content-disposition', `attachment; filename="${name}"`)
        .send(file.content);
    });
  });

  app.get('/balances', signedIn, async (request, reply) =>
    withConsoleErrors(request, reply, async () =>
      allBalancesPage(page(request, reply), await allBalances(ctx, request.consoleUser!)),
    ),
  );

  app.get('/reports/margin', signedIn, async (request, reply) =>
    withConsoleErrors(request, reply, async () => {
      const { from, to, range } = rangeOf(ctx, request.query as Record<string, unknown>);
      const rows = await marginReport(ctx, request.consoleUser!, range);
      return marginPage(page(request, reply), { from, to, rows });
    }),
  );
}
