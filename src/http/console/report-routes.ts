import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { ConsoleUser } from '../../domain/console.js';
import { settlementPage } from '../../pages/console/report-pages.js';
import { audit } from '../../usecases/console-auth.js';
import { exportCsv, settlementCsv, settlementReport } from '../../usecases/console-reports.js';
import type { GatewayContext } from '../../usecases/context.js';
import { dayStart, parseFilter } from './page-routes.js';
import { page, requireUser } from './route-helpers.js';

// The CSV export of the transactions list (its filter, every page, with refunds), streamed; and
// the settlement report, as a page and as CSV.

const DAY_MS = 86_400_000;
/** The longest settlement report, in days. */
const MAX_REPORT_DAYS = 366;

const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The wallets and organisations the settlement report's filter offers: a merchant's own wallets; an operator's, every organisation and its wallets (of the one chosen, or all). */
async function settlementChoices(ctx: GatewayContext, user: ConsoleUser, organisation_id: number | undefined) {
  if (user.kind === 'merchant') {
    const wallets = await ctx.store.accounts.listOrganisationWallets(user.organisation_id!);
    return { wallets: wallets.map((w) => ({ wallet_id: w.wallet_id })) };
  }
  const organisations = await ctx.store.accounts.listOrganisations();
  const shown = organisations.filter((o) => organisation_id === undefined || o.organisation_id === organisation_id);
  const wallets = (
    await Promise.all(
      shown.map(async (o) =>
        (await ctx.store.accounts.listOrganisationWallets(o.organisation_id)).map((w) => ({
          wallet_id: w.wallet_id,
          organisation: `${o.organisation_name} (${o.organisation_id})`,
        })),
      ),
    )
  ).flat();
  return { wallets, organisations };
}

export async function reportRoutes(app: FastifyInstance, ctx: GatewayContext): Promise<void> {
  const signedIn = { preHandler: requireUser(ctx) };

  app.get('/transactions/export.csv', signedIn, async (request, reply) => {
    const user = request.consoleUser!;
    const { search, problem, filter } = parseFilter(request.query as Record<string, unknown>);
    if (problem) {
      const pc = page(request, reply);
      return reply
        .code(400)
        .type('text/plain; charset=utf-8')
        .send(pc.t('error.bad_filter', { detail: problem }));
    }
    const { after: _after, ...whole } = search;
    await audit(
      ctx,
      { kind: 'user', user, ip: request.ip },
      { action: 'transactions.export', organisation_id: user.organisation_id, after: JSON.stringify(filter) },
    );
    const stream = Readable.from(exportCsv(ctx, user, whole), { objectMode: false });
    stream.on('error', (err) => request.log.error({ err }, 'the CSV export stopped'));
    return reply
      .type('text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="transactions-${isoDay(ctx.now())}.csv"`)
      .send(stream);
  });

  app.get('/reports/settlement', signedIn, async (request, reply) => {
    const user = request.consoleUser!;
    const q = request.query as Record<string, unknown>;
    const pc = page(request, reply);
    const today = ctx.now() - (ctx.now() % DAY_MS);
    const fromText = typeof q.from === 'string' && q.from ? q.from : isoDay(today - 29 * DAY_MS);
    const toText = typeof q.to === 'string' && q.to ? q.to : isoDay(today);
    const from = dayStart(fromText);
    const to = dayStart(toText);
    let error: string | undefined;
    if (from === undefined || to === undefined)
      error = pc.t('error.bad_filter', { detail: from === undefined ? `from ${fromText}` : `to ${toText}` });
    else if (to < from || (to - from) / DAY_MS >= MAX_REPORT_DAYS)
      error = pc.t('error.report_range', { days: MAX_REPORT_DAYS });
    const operator = user.kind === 'operator';
    const organisationText = operator && typeof q.organisation_id === 'string' ? q.organisation_id.trim() : '';
    const walletText = typeof q.wallet_id === 'string' ? q.wallet_id.trim().slice(0, 64) : '';
    if (error === undefined && organisationText && !/^\d{1,15}$/.test(organisationText))
      error = pc.t('error.bad_filter', { detail: `organisation_id ${organisationText}` });
    const organisation_id = organisationText && error === undefined ? Number(organisationText) : undefined;
    const filter = {
      from: fromText,
      to: toText,
      ...(organisationText && { organisation_id: organisationText }),
      ...(walletText && { wallet_id: walletText }),
    };
    const shown = { filter, ...(await settlementChoices(ctx, user, organisation_id)) };
    if (error !== undefined) {
      if (q.format === 'csv') return reply.code(400).type('text/plain; charset=utf-8').send(error);
      return reply.code(400).send(settlementPage(pc, { ...shown, lines: [], error }));
    }
    // The day named by `to` is included.
    const lines = await settlementReport(ctx, user, {
      from: from!,
      to: to! + DAY_MS,
      ...(organisation_id !== undefined && { organisation_id }),
      ...(walletText && { wallet_id: walletText }),
    });
    if (q.format === 'csv') {
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="settlement-${fromText}-${toText}.csv"`)
        .send(settlementCsv(lines));
    }
    return reply.send(settlementPage(pc, { ...shown, lines }));
  });
}
