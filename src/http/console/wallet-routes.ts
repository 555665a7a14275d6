import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { permits } from '../../domain/console.js';
import { isPaymentMethod } from '../../domain/transaction.js';
import { confirmPage } from '../../pages/console/admin-pages.js';
import { translator } from '../../pages/console/i18n.js';
import { walletPage, walletsPage, type WalletPageView } from '../../pages/console/wallet-pages.js';
import {
  consoleRotateKey,
  DEFAULT_OVERLAP_HOURS,
  OVERLAP_CHOICES,
  revealKey,
  shown,
  walletIntegration,
} from '../../usecases/console-wallets.js';
import {
  editWallet,
  removeChannel,
  setChannel,
  setWalletStatus,
  testChannel,
  walletToConfigure,
} from '../../usecases/console-admin.js';
import { accountProviders, providerNamed } from '../../usecases/channel-accounts.js';
import { ConsoleError } from '../../usecases/console-auth.js';
import { sendTestNotification } from '../../usecases/console-notifications.js';
import type { GatewayContext } from '../../usecases/context.js';
import { guards, page } from './route-helpers.js';
import type { Body } from './forms.js';
import { withConsoleErrors } from './page-routes.js';

// A merchant's wallets and a wallet's integration parameters (operators reach them from an
// organisation's page). Revealing and rotating a key ask for the password again. An operator's
// changes to a wallet: its settings, its status (disabling asks first), its provider accounts.

const text = (v: unknown) => (typeof v === 'string' ? v : '');
/** A field other than a password: trimmed. */
const field = (v: unknown) => text(v).trim();
const walletPath = (wallet_id: string) => `/console/wallets/${encodeURIComponent(wallet_id)}`;

type WalletPageExtra = Pick<WalletPageView, 'revealed' | 'notice' | 'error' | 'channelForm' | 'tested'>;

/** A wallet's page for the signed-in user (its access checked by walletIntegration), with what an action adds. */
export async function renderWalletPage(
  ctx: GatewayContext,
  request: FastifyRequest,
  reply: FastifyReply,
  wallet_id: string,
  extra: WalletPageExtra = {},
): Promise<string> {
  const user = request.consoleUser!;
  const v = await walletIntegration(ctx, user, wallet_id);
  return walletPage(page(request, reply), {
    ...v,
    canSeeKeys: permits(user, 'see_keys'),
    canConfigure: permits(user, 'configure'),
    canTest: permits(user, 'resend'),
    canSetChannels: ctx.masterKey !== undefined,
    providers: accountProviders(ctx.connectors),
    overlapChoices: OVERLAP_CHOICES,
    overlapDefault: DEFAULT_OVERLAP_HOURS,
    ...extra,
  });
}

export async function walletRoutes(app: FastifyInstance, ctx: GatewayContext): Promise<void> {
  const { signedIn, csrfAndUser } = guards(app, ctx);

  app.get('/wallets', signedIn, async (request, reply) => {
    const user = request.consoleUser!;
    if (user.kind === 'operator') return reply.redirect('/console/organisations', 303);
    const organisation = (await ctx.store.accounts.findOrganisation(user.organisation_id!))!;
    const wallets = await ctx.store.accounts.listOrganisationWallets(user.organisation_id!);
    return reply.send(walletsPage(page(request, reply), { organisation, wallets: wallets.map(shown) }));
  });

  const render = (request: FastifyRequest, reply: FastifyReply, wallet_id: string, extra: WalletPageExtra = {}) =>
    renderWalletPage(ctx, request, reply, wallet_id, extra);

  app.get('/wallets/:wallet_id', signedIn, async (request, reply) => {
    const { wallet_id } = request.params as { wallet_id: string };
    const saved = (request.query as Record<string, unknown>).notice === 'saved';
    return withConsoleErrors(request, reply, () =>
      render(request, reply, wallet_id, saved ? { notice: translator(request.consoleLang)('admin.saved') } : {}),
    );
  });

  /** A wrong password (or a throttled account) shows the page again with the error; anything else is the error's page. */
  const withPassword = (
    request: FastifyRequest,
    reply: FastifyReply,
    wallet_id: string,
    run: () => Promise<{ api_key: string; rotated: boolean }>,
  ) =>
    withConsoleErrors(request, reply, async () => {
      try {
        return await render(request, reply, wallet_id, { revealed: await run() });
      } catch (e) {
        if (
          !(e instanceof ConsoleError) ||
          !['error.password_wrong', 'error.throttled', 'error.overlap_invalid', 'error.rotated_already'].includes(e.key)
        )
          throw e;
        reply.code(e.key === 'error.throttled' ? 429 : e.key === 'error.rotated_already' ? 409 : 400);
        return render(request, reply, wallet_id, { error: page(request, reply).t(e.key, e.params) });
      }
    });

  // A signed sample to the URL typed, and what came back, on the wallet's page.
  app.post('/wallets/:wallet_id/test-notification', csrfAndUser, async (request, reply) => {
    const { wallet_id } = request.params as { wallet_id: string };
    const url = field((request.body as Body)?.url).slice(0, 2001);
    return withConsoleErrors(request, reply, async () => {
      try {
        const tested = await sendTestNotification(ctx, request.consoleUser!, request.ip, wallet_id, url);
        return await renderWalletPage(ctx, request, reply, wallet_id, { tested });
      } catch (e) {
        if (!(e instanceof ConsoleError) || !['error.test_url', 'error.test_off'].includes(e.key)) throw e;
        reply.code(400);
        return renderWalletPage(ctx, request, reply, wallet_id, { error: translator(request.consoleLang)(e.key) });
      }
    });
  });

  app.post('/wallets/:wallet_id/reveal', csrfAndUser, async (request, reply) => {
    const { wallet_id } = request.params as { wallet_id: string };
    const body = (request.body ?? {}) as Record<string, unknown>;
    return withPassword(request, reply, wallet_id, async () => ({
      api_key: await revealKey(ctx, request.consoleUser!, request.ip, wallet_id, text(body.password)),
      rotated: false,
    }));
  });

  app.post('/wallets/:wallet_id/rotate', csrfAndUser, async (request, reply) => {
    const { wallet_id } = request.params as { wallet_id: string };
    const body = (request.body ?? {}) as Record<string, unknown>;
    const hours = /^\d{1,3}$/.test(text(body.overlap_hours)) ? Number(body.overlap_hours) : -1;
    return withPassword(request, reply, wallet_id, async () => ({
      api_key: (
        await consoleRotateKey(
          ctx,
          request.consoleUser!,
          request.ip,
          wallet_id,
          text(body.password),
          hours,
          text(body.from),
        )
      ).api_key,
      rotated: true,
    }));
  });

  app.post('/wallets/:wallet_id/settings', csrfAndUser, async (request, reply) => {
    const { wallet_id } = request.params as { wallet_id: string };
    const body = (request.body ?? {}) as Body;
    const methods = ([] as unknown[])
      .concat(body.methods ?? [])
      .filter((m): m is string => typeof m === 'string' && isPaymentMethod(m))
      .join(',');
    return withConsoleErrors(request, reply, async () => {
      await editWallet(ctx, request.consoleUser!, request.ip, wallet_id, {
        name: field(body.name),
        methods,
        legacy_signatures: body.legacy_signatures === 'on' ? 1 : 0,
      });
      return reply.redirect(`${walletPath(wallet_id)}?notice=saved`, 303);
    });
  });

  app.post('/wallets/:wallet_id/status', csrfAndUser, async (request, reply) => {
    const { wallet_id } = request.params as { wallet_id: string };
    const body = (request.body ?? {}) as Body;
    const status = field(body.status);
    return withConsoleErrors(request, reply, async () => {
      if (status !== 'active' && status !== 'disabled') throw new ConsoleError('error.not_found');
      if (status === 'disabled' && body.confirmed !== 'yes') {
        const { wallet } = await walletToConfigure(ctx, request.consoleUser!, wallet_id);
        const pc = page(request, reply);
        const path = walletPath(wallet_id);
        return confirmPage(pc, {
          title: pc.t('wallet.disable'),
          question: pc.t('wallet.disable_confirm', { wallet_id, name: wallet.wallet_name }),
          action: `${path}/status`,
          fields: { status: 'disabled' },
          button: pc.t('wallet.disable'),
          back: path,
        });
      }
      await setWalletStatus(ctx, request.consoleUser!, request.ip, wallet_id, status);
      return reply.redirect(`${walletPath(wallet_id)}?notice=saved`, 303);
    });
  });

  // A wallet's provider accounts: set from the form (secrets write-only), or removed.
  app.post('/wallets/:wallet_id/channels', csrfAndUser, async (request, reply) => {
    const { wallet_id } = request.params as { wallet_id: string };
    const body = (request.body ?? {}) as Body;
    const provider = field(body.provider);
    // The chosen provider's fields, those filled in: the rest of its stored account is kept.
    const fields: Record<string, string> = {};
    for (const f of providerNamed(ctx.connectors, provider)?.fields ?? []) {
      const value = field(body[f.id]);
      if (value !== '') fields[f.id] = value;
    }
    return withConsoleErrors(request, reply, async () => {
      try {
        await setChannel(
          ctx,
          request.consoleUser!,
          request.ip,
          wallet_id,
          field(body.payment_method),
          provider,
          fields,
        );
      } catch (e) {
        // A refused account is the form again, open, with what was typed: not a page that loses it.
        // The secrets are not written back into a page.
        if (!(e instanceof ConsoleError) || e.key !== 'error.admin') throw e;
        const secret = new Set(
          providerNamed(ctx.connectors, provider)
            ?.fields.filter((f) => f.secret)
            .map((f) => f.id),
        );
        const kept = Object.fromEntries(Object.entries(fields).filter(([id]) => !secret.has(id)));
        const values = { ...kept, payment_method: field(body.payment_method), provider };
        reply.code(400);
        return renderWalletPage(ctx, request, reply, wallet_id, {
          channelForm: { error: translator(request.consoleLang)('wallet.channel_again', e.params), values },
        });
      }
      return reply.redirect(`${walletPath(wallet_id)}?notice=saved`, 303);
    });
  });
  // Removing an account takes the method off the provider (live mode refuses it, 302; its orders' refunds answer 556): asked first.
  app.post('/wallets/:wallet_id/channels/remove', csrfAndUser, async (request, reply) => {
    const { wallet_id } = request.params as { wallet_id: string };
    const body = (request.body ?? {}) as Body;
    const payment_method = field(body.payment_method);
    return withConsoleErrors(request, reply, async () => {
      if (body.confirmed !== 'yes') {
        await walletToConfigure(ctx, request.consoleUser!, wallet_id);
        if (
          !isPaymentMethod(payment_method) ||
          !(await ctx.store.accounts.findChannelAccount(wallet_id, payment_method))
        )
          throw new ConsoleError('error.not_found');
        const pc = page(request, reply);
        const path = walletPath(wallet_id);
        return confirmPage(pc, {
          title: pc.t('wallet.channel_remove'),
          question: pc.t('wallet.channel_remove_confirm', { wallet_id, payment_method }),
          action: `${path}/channels/remove`,
          fields: { payment_method },
          button: pc.t('wallet.channel_remove'),
          back: path,
        });
      }
      await removeChannel(ctx, request.consoleUser!, request.ip, wallet_id, payment_method);
      return reply.redirect(`${walletPath(wallet_id)}?notice=saved`, 303);
    });
  });

  // The signed test call of `gateway channel test`, from the wallet's page: its result shown there.
  app.post('/wallets/:wallet_id/channels/test', csrfAndUser, async (request, reply) => {
    const { wallet_id } = request.params as { wallet_id: string };
    const payment_method = field(((request.body ?? {}) as Body).payment_method);
    return withConsoleErrors(request, reply, async () => {
      const outcome = await testChannel(ctx, request.consoleUser!, request.ip, wallet_id, payment_method);
      const t = translator(request.consoleLang);
      if (outcome.ok)
        return render(request, reply, wallet_id, {
          notice: t('wallet.channel_test_ok', { payment_method, detail: outcome.detail }),
        });
      reply.code(502);
      return render(request, reply, wallet_id, {
        error: t('wallet.channel_test_failed', { payment_method, reason: outcome.reason }),
      });
    });
  });
}
