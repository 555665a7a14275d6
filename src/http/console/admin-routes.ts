import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { permits, type ConsoleUser } from '../../domain/console.js';
import { isPaymentMethod } from '../../domain/transaction.js';
import {
  confirmPage,
  organisationPage,
  organisationsPage,
  operatorsPage,
  type Message,
} from '../../pages/console/admin-pages.js';
import { messagePage } from '../../pages/console/auth-pages.js';
import { isLang, type Lang } from '../../pages/console/i18n.js';
import {
  addWallet,
  closeOrganisation,
  apiUserToConfigure,
  consoleUserToChange,
  createOrganisation,
  inviteConsoleUser,
  organisationFor,
  organisationToConfigure,
  renameOrganisation,
  resetConsolePassword,
  resetConsoleTotp,
  setApiUserStatus,
  setConsoleUserStatus,
  setOrganisationStatus,
  type LinkGiven,
} from '../../usecases/console-admin.js';
import { ConsoleError } from '../../usecases/console-auth.js';
import { setTwoFactorRequired } from '../../usecases/console-totp.js';
import type { GatewayContext } from '../../usecases/context.js';
import { asMessage, noticeOf, text, type Body } from './forms.js';
import { withConsoleErrors } from './page-routes.js';
import { guards, page } from './route-helpers.js';

// Configuration from the console: organisations with their API users and wallets, and console
// users (operators; an owner manages their own organisation's console users), operators. A
// wallet's own settings: wallet-routes.ts; rates and the outbox: operate-routes.ts. Every route
// asks the use case, which authorises.

/** The language an invitation is written in: the form's choice, else the inviter's. */
function mailLang(request: FastifyRequest, body: Body): Lang {
  return isLang(body.lang) ? body.lang : request.consoleLang;
}

/** What the page says of a link given: mailed, or the link itself (and why it was not mailed). */
function linkShown(made: LinkGiven): NonNullable<Message['link']> {
  return {
    email: made.email,
    expires_at: made.expires_at,
    ...(made.mailed && { mailed: true }),
    ...(made.link !== undefined && { url: made.link }),
    ...(made.mail_failed && { mail_failed: true }),
    ...(made.mail_error !== undefined && { mail_error: made.mail_error }),
  };
}

export async function adminRoutes(app: FastifyInstance, ctx: GatewayContext): Promise<void> {
  const { signedIn, csrfAndUser } = guards(app, ctx);
  const operatorsOnly = (request: FastifyRequest, reply: FastifyReply): boolean => {
    if (request.consoleUser!.kind === 'operator') return true;
    const pc = page(request, reply);
    void reply.code(404).send(messagePage(pc, pc.t('error.title_not_found'), pc.t('error.not_found')));
    return false;
  };

  // Organisations (operators).
  const organisations = async (request: FastifyRequest, reply: FastifyReply, m: Message = {}) =>
    organisationsPage(page(request, reply), {
      organisations: await ctx.store.accounts.listOrganisations(),
      canConfigure: permits(request.consoleUser!, 'configure'),
      ...m,
    });

  app.get('/organisations', signedIn, async (request, reply) => {
    if (!operatorsOnly(request, reply)) return reply;
    return reply.send(await organisations(request, reply, noticeOf(request)));
  });

  app.post('/organisations', csrfAndUser, async (request, reply) => {
    const body = (request.body ?? {}) as Body;
    return withConsoleErrors(request, reply, async () => {
      try {
        const id = await createOrganisation(ctx, request.consoleUser!, request.ip, {
          name: text(body.name),
          currency: text(body.currency),
        });
        return reply.redirect(`/console/organisations/${id}?notice=saved`, 303);
      } catch (e) {
        const m = asMessage(request, e);
        reply.code(400);
        return organisations(request, reply, m);
      }
    });
  });

  // One organisation: operators any; a merchant's user their own (to manage its console users).
  const organisation = async (
    request: FastifyRequest,
    reply: FastifyReply,
    organisation_id: number,
    m: Message = {},
  ) => {
    const user = request.consoleUser!;
    const org = await organisationFor(ctx, user, organisation_id);
    const [apiUsers, wallets, consoleUsers, twoFactorRequired] = await Promise.all([
      ctx.store.accounts.listOrganisationUsers(organisation_id),
      ctx.store.accounts.listOrganisationWallets(organisation_id),
      ctx.store.console.listUsers({ kind: 'merchant', organisation_id }),
      ctx.store.console.twoFactorRequired(organisation_id),
    ]);
    return organisationPage(page(request, reply), {
      organisation: org,
      apiUsers,
      wallets,
      consoleUsers,
      twoFactorRequired,
      canConfigure: permits(user, 'configure'),
      canManage: permits(user, 'manage_users'),
      shownAt: ctx.now(),
      ...m,
    });
  };
  const orgId = (request: FastifyRequest) => {
    const id = Number((request.params as { organisation_id: string }).organisation_id);
    if (!Number.isSafeInteger(id) || id <= 0) throw new ConsoleError('error.not_found');
    return id;
  };
  /** Runs a change on an organisation's page: done, back to it with a notice; refused, the page with why. */
  const onOrganisation = (
    request: FastifyRequest,
    reply: FastifyReply,
    change: (id: number) => Promise<Message | void>,
    typed: Pick<Message, 'typed'> = {},
  ) =>
    withConsoleErrors(request, reply, async () => {
      const id = orgId(request);
      try {
        const shown = await change(id);
        return shown
          ? organisation(request, reply, id, shown)
          : reply.redirect(`/console/organisations/${id}?notice=saved`, 303);
      } catch (e) {
        const m = asMessage(request, e);
        reply.code(400);
        return organisation(request, reply, id, { ...m, ...typed });
      }
    });

  app.post('/organisations/:organisation_id/close', csrfAndUser, async (request, reply) =>
    onOrganisation(request, reply, async (id) => {
      await closeOrganisation(ctx, request.consoleUser!, request.ip, id, text(((request.body ?? {}) as Body).name));
      return { notice: page(request, reply).t('orgs.closed_now') };
    }),
  );
  app.post('/organisations/:organisation_id/two-factor', csrfAndUser, async (request, reply) =>
    onOrganisation(request, reply, async (id) => {
      const required = ((request.body ?? {}) as Body).required === 'on';
      await setTwoFactorRequired(ctx, request.consoleUser!, request.ip, id, required);
    }),
  );
  app.post('/operators/two-factor', csrfAndUser, async (request, reply) => {
    if (!operatorsOnly(request, reply)) return reply;
    return withConsoleErrors(request, reply, async () => {
      const required = ((request.body ?? {}) as Body).required === 'on';
      await setTwoFactorRequired(ctx, request.consoleUser!, request.ip, 'operators', required);
      return reply.redirect('/console/operators?notice=saved', 303);
    });
  });

  app.get('/organisations/:organisation_id', signedIn, async (request, reply) =>
    withConsoleErrors(request, reply, () => organisation(request, reply, orgId(request), noticeOf(request))),
  );
  app.get('/users', signedIn, async (request, reply) => {
    const user = request.consoleUser!;
    return reply.redirect(
      user.kind === 'operator' ? '/console/operators' : `/console/organisations/${user.organisation_id}`,
      303,
    );
  });

  app.post('/organisations/:organisation_id/rename', csrfAndUser, async (request, reply) =>
    onOrganisation(request, reply, (id) =>
      renameOrganisation(ctx, request.consoleUser!, request.ip, id, text(((request.body ?? {}) as Body).name)),
    ),
  );

  // Disabling a whole organisation or wallet stops a shop taking payments: the first post asks, the second (confirmed) does it.
  app.post('/organisations/:organisation_id/status', csrfAndUser, async (request, reply) => {
    const body = (request.body ?? {}) as Body;
    const status = text(body.status);
    if (status === 'disabled' && body.confirmed !== 'yes') {
      return withConsoleErrors(request, reply, async () => {
        const org = await organisationToConfigure(ctx, request.consoleUser!, orgId(request));
        const pc = page(request, reply);
        const path = `/console/organisations/${org.organisation_id}`;
        return confirmPage(pc, {
          title: pc.t('orgs.disable'),
          question: pc.t('orgs.disable_confirm', { name: org.organisation_name, organisation_id: org.organisation_id }),
          action: `${path}/status`,
          fields: { status: 'disabled' },
          button: pc.t('orgs.disable'),
          back: path,
        });
      });
    }
    return onOrganisation(request, reply, async (id) => {
      if (status !== 'active' && status !== 'disabled') throw new ConsoleError('error.not_found');
      await setOrganisationStatus(ctx, request.consoleUser!, request.ip, id, status);
    });
  });

  app.post('/organisations/:organisation_id/wallets', csrfAndUser, async (request, reply) => {
    const body = (request.body ?? {}) as Body;
    const methods = ([] as unknown[])
      .concat(body.methods ?? [])
      .filter((m): m is string => typeof m === 'string' && isPaymentMethod(m))
      .join(',');
    return onOrganisation(
      request,
      reply,
      async (id) => {
        if (methods === '') throw new ConsoleError('error.wallet_no_methods');
        await addWallet(ctx, request.consoleUser!, request.ip, id, {
          user_id: text(body.user_id),
          currency: text(body.currency),
          name: text(body.name),
          methods,
        });
      },
      {
        typed: {
          wallet: {
            user_id: text(body.user_id),
            currency: text(body.currency),
            name: text(body.name),
            methods: methods.split(','),
          },
        },
      },
    );
  });

  app.post('/organisations/:organisation_id/invite', csrfAndUser, async (request, reply) => {
    const body = (request.body ?? {}) as Body;
    return onOrganisation(
      request,
      reply,
      async (id) => {
        const made = await inviteConsoleUser(ctx, request.consoleUser!, request.ip, {
          email: text(body.email),
          kind: 'merchant',
          role: text(body.role) as ConsoleUser['role'],
          organisation_id: id,
          lang: mailLang(request, body),
        });
        return { link: linkShown(made) };
      },
      { typed: { invite: { email: text(body.email), role: text(body.role) } } },
    );
  });

  app.post('/api-users/:user_id/status', csrfAndUser, async (request, reply) => {
    const { user_id } = request.params as { user_id: string };
    const body = (request.body ?? {}) as Body;
    const status = text(body.status);
    return withConsoleErrors(request, reply, async () => {
      if (status !== 'active' && status !== 'disabled') throw new ConsoleError('error.not_found');
      if (status === 'disabled' && body.confirmed !== 'yes') {
        const target = await apiUserToConfigure(ctx, request.consoleUser!, user_id);
        const pc = page(request, reply);
        const action = `/console/api-users/${encodeURIComponent(user_id)}/status`;
        return confirmPage(pc, {
          title: pc.t('admin.disable'),
          question: pc.t('orgs.api_user_disable_confirm', { user_id, name: target.user_name }),
          action,
          fields: { status: 'disabled' },
          button: pc.t('admin.disable'),
          back: `/console/organisations/${target.organisation_id}`,
        });
      }
      const id = await setApiUserStatus(ctx, request.consoleUser!, request.ip, user_id, status);
      return reply.redirect(`/console/organisations/${id}?notice=saved`, 303);
    });
  });

  // Console users: the page they are managed from is their organisation's, or the operators'.
  const backTo = async (request: FastifyRequest, reply: FastifyReply, target: ConsoleUser | undefined, m: Message) =>
    target?.kind === 'merchant'
      ? organisation(request, reply, target.organisation_id!, m)
      : operators(request, reply, m);
  const onConsoleUser = (
    request: FastifyRequest,
    reply: FastifyReply,
    change: (id: string) => Promise<Message | { page: string } | void>,
  ) =>
    withConsoleErrors(request, reply, async () => {
      const { console_user_id } = request.params as { console_user_id: string };
      const target = await ctx.store.console.findUser(console_user_id);
      try {
        const shown = (await change(console_user_id)) ?? { notice: page(request, reply).t('admin.saved') };
        if ('page' in shown) return shown.page;
        return backTo(request, reply, target, shown);
      } catch (e) {
        const m = asMessage(request, e);
        reply.code(400);
        return backTo(request, reply, target, m);
      }
    });

  /** The page that asks before a user is disabled or their two-factor turned off (both end something the user cannot get back alone). */
  const askFirst = async (request: FastifyRequest, reply: FastifyReply, what: 'disable' | 'reset_totp') => {
    const { console_user_id } = request.params as { console_user_id: string };
    const target = await consoleUserToChange(ctx, request.consoleUser!, console_user_id, what);
    const pc = page(request, reply);
    const back = target.kind === 'operator' ? '/console/operators' : `/console/organisations/${target.organisation_id}`;
    const action = `/console/console-users/${encodeURIComponent(console_user_id)}/${what === 'disable' ? 'status' : 'reset-two-factor'}`;
    const [title, question] =
      what === 'disable'
        ? (['admin.disable', 'users.disable_confirm'] as const)
        : (['users.reset_totp', 'users.reset_totp_confirm'] as const);
    return confirmPage(pc, {
      title: pc.t(title),
      question: pc.t(question, { email: target.email }),
      action,
      ...(what === 'disable' && { fields: { status: 'disabled' } }),
      button: pc.t(title),
      back,
    });
  };

  app.post('/console-users/:console_user_id/status', csrfAndUser, async (request, reply) => {
    const body = (request.body ?? {}) as Body;
    const status = text(body.status);
    if (status === 'disabled' && body.confirmed !== 'yes')
      return onConsoleUser(request, reply, async () => ({ page: await askFirst(request, reply, 'disable') }));
    return onConsoleUser(request, reply, async (id) => {
      if (status !== 'active' && status !== 'disabled') throw new ConsoleError('error.not_found');
      await setConsoleUserStatus(ctx, request.consoleUser!, request.ip, id, status);
    });
  });
  app.post('/console-users/:console_user_id/password-link', csrfAndUser, async (request, reply) =>
    onConsoleUser(request, reply, async (id) => {
      const shownAt = text(((request.body ?? {}) as Body).shown_at);
      const made = await resetConsolePassword(
        ctx,
        request.consoleUser!,
        request.ip,
        id,
        /^\d{1,16}$/.test(shownAt) ? Number(shownAt) : undefined,
        request.consoleLang,
      );
      return { link: linkShown(made) };
    }),
  );
  app.post('/console-users/:console_user_id/reset-two-factor', csrfAndUser, async (request, reply) => {
    if (((request.body ?? {}) as Body).confirmed !== 'yes')
      return onConsoleUser(request, reply, async () => ({ page: await askFirst(request, reply, 'reset_totp') }));
    return onConsoleUser(request, reply, (id) => resetConsoleTotp(ctx, request.consoleUser!, request.ip, id));
  });

  // Operators.
  const operators = async (request: FastifyRequest, reply: FastifyReply, m: Message = {}) =>
    operatorsPage(page(request, reply), {
      users: await ctx.store.console.listUsers({ kind: 'operator' }),
      canManage: permits(request.consoleUser!, 'manage_users'),
      twoFactorRequired: await ctx.store.console.twoFactorRequired('operators'),
      shownAt: ctx.now(),
      ...m,
    });
  app.get('/operators', signedIn, async (request, reply) => {
    if (!operatorsOnly(request, reply)) return reply;
    return reply.send(await operators(request, reply, noticeOf(request)));
  });
  app.post('/operators/invite', csrfAndUser, async (request, reply) => {
    const body = (request.body ?? {}) as Body;
    return withConsoleErrors(request, reply, async () => {
      try {
        const made = await inviteConsoleUser(ctx, request.consoleUser!, request.ip, {
          email: text(body.email),
          kind: 'operator',
          role: text(body.role) as ConsoleUser['role'],
          organisation_id: null,
          lang: mailLang(request, body),
        });
        return operators(request, reply, { link: linkShown(made) });
      } catch (e) {
        const m = asMessage(request, e);
        reply.code(400);
        return operators(request, reply, {
          ...m,
          typed: { invite: { email: text(body.email), role: text(body.role) } },
        });
      }
    });
  });
}
