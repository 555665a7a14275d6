import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { permits } from '../../domain/console.js';
import { translator } from '../../pages/console/i18n.js';
import { walletPage, walletsPage, type WalletPageView } from '../../pages/console/wallet-pages.js';
import { consoleRotateKey, DEFAULT_OVERLAP_HOURS, OVERLAP_CHOICES, revealKey, shown, walletIntegration } from '../../usecases/console-wallets.js';
import { ConsoleError } from '../../usecases/console-auth.js';
import type { GatewayContext } from '../../usecases/context.js';
import { page, requireUser } from './plugin.js';
import { withConsoleErrors } from './page-routes.js';

// A merchant's wallets and a wallet's integration parameters (operators reach them from an
// organisation's page). Revealing and rotating a key ask for the password again.

const text = (v: unknown) => (typeof v === 'string' ? v : '');

type WalletPageExtra = Pick<WalletPageView, 'revealed' | 'notice' | 'error' | 'channelForm'>;

/** A wallet's page for the signed-in user (its access checked by walletIntegration), with what an action adds. */
export async function renderWalletPage(ctx: GatewayContext, request: FastifyRequest, reply: FastifyReply, wallet_id: string, extra: WalletPageExtra = {}): Promise<string> {
  const user = request.consoleUser!;
  const v = await walletIntegration(ctx, user, wallet_id);
  return walletPage(page(request, reply), {
    ...v,
    canSeeKeys: permits(user, 'see_keys'),
    canConfigure: permits(user, 'configure'),
    canSetChannels: ctx.masterKey !== undefined,
    overlapChoices: OVERLAP_CHOICES,
    overlapDefault: DEFAULT_OVERLAP_HOURS,
    ...extra,
  });
}

export async function walletRoutes(app: FastifyInstance, ctx: GatewayContext): Promise<void> {
  const signedIn = { preHandler: requireUser(ctx) };
  const csrfAndUser = { preHandler: [app.csrfProtection, requireUser(ctx)] };

  app.get('/wallets', signedIn, async (request, reply) => {
    const user = request.consoleUser!;
    if (user.kind === 'operator') return reply.redirect('/console/organisations', 303);
    const organisation = (await ctx.store.accounts.findOrganisation(user.organisation_id!))!;
    const wallets = await ctx.store.accounts.listOrganisationWallets(user.organisation_id!);
    return reply.send(walletsPage(page(request, reply), { organisation, wallets: wallets.map(shown) }));
  });

  const render = (request: FastifyRequest, reply: FastifyReply, wallet_id: string, extra: WalletPageExtra = {}) => renderWalletPage(ctx, request, reply, wallet_id, extra);

  app.get('/wallets/:wallet_id', signedIn, async (request, reply) => {
    const { wallet_id } = request.params as { wallet_id: string };
    const saved = (request.query as Record<string, unknown>).notice === 'saved';
    return withConsoleErrors(request, reply, () => render(request, reply, wallet_id, saved ? { notice: translator(request.consoleLang)('admin.saved') } : {}));
  });

  /** A wrong password (or a throttled account) shows the page again with the error; anything else is the error's page. */
  const withPassword = (request: FastifyRequest, reply: FastifyReply, wallet_id: string, run: () => Promise<{ api_key: string; rotated: boolean }>) =>
    withConsoleErrors(request, reply, async () => {
      try {
        return await render(request, reply, wallet_id, { revealed: await run() });
      } catch (e) {
        if (!(e instanceof ConsoleError) || !['error.password_wrong', 'error.throttled', 'error.overlap_invalid', 'error.rotated_already'].includes(e.key)) throw e;
        reply.code(e.key === 'error.throttled' ? 429 : e.key === 'error.rotated_already' ? 409 : 400);
        return render(request, reply, wallet_id, { error: page(request, reply).t(e.key, e.params) });
      }
    });

  app.post('/wallets/:wallet_id/reveal', csrfAndUser, async (request, reply) => {
    const { wallet_id } = request.params as { wallet_id: string };
    const body = (request.body ?? {}) as Record<string, unknown>;
    return withPassword(request, reply, wallet_id, async () => ({ api_key: await revealKey(ctx, request.consoleUser!, request.ip, wallet_id, text(body.password)), rotated: false }));
  });

  app.post('/wallets/:wallet_id/rotate', csrfAndUser, async (request, reply) => {
    const { wallet_id } = request.params as { wallet_id: string };
    const body = (request.body ?? {}) as Record<string, unknown>;
    const hours = /^\d{1,3}$/.test(text(body.overlap_hours)) ? Number(body.overlap_hours) : -1;
    return withPassword(request, reply, wallet_id, async () => ({ api_key: (await consoleRotateKey(ctx, request.consoleUser!, request.ip, wallet_id, text(body.password), hours, text(body.from))).api_key, rotated: true }));
  });
}
