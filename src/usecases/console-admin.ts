import type { User, UserStatus, Wallet, WalletStatus } from '../domain/account.js';
import { isPaymentMethod } from '../domain/transaction.js';
import {
  canSee,
  normaliseEmail,
  permits,
  type ConsoleAction,
  type ConsoleKind,
  type ConsoleRole,
  type ConsoleUser,
} from '../domain/console.js';
import type { MasterKey } from '../domain/sealed.js';
import type { Organisation } from '../ports/accounts.js';
import type { ProbeOutcome } from '../ports/connector.js';
import type { AuditEntry } from '../ports/console.js';
import { AdminError, createMerchant, createWallet, setRate, updateWallet, type RateSet } from './administration.js';
import { AccountInputError, type AccountInput } from '../ports/provider.js';
import {
  accountFromInput,
  describeAccount,
  openAccount,
  providerNamed,
  storeChannelAccount,
} from './channel-accounts.js';
import { audit, ConsoleError, INVITE_TTL_MS, inviteUser, passwordLink, type Actor } from './console-auth.js';
import type { MailLang } from '../ports/mailer.js';
import type { GatewayContext } from './context.js';

// What operators (and, for their own organisation's console users, owners) configure from the
// console: organisations, their API users and wallets, console users, exchange rates. Each is
// authorised here and written to the audit log with the configuration before and after.

const actorOf = (user: ConsoleUser, ip: string): Actor => ({ kind: 'user', user, ip });

function allow(user: ConsoleUser, action: ConsoleAction): void {
  if (!permits(user, action)) throw new ConsoleError('error.forbidden');
}

/** Runs an administration step; its refusal (bad input) becomes a console error with its message. */
async function admin<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (e) {
    if (e instanceof AdminError) throw new ConsoleError('error.admin', { message: e.message });
    throw e;
  }
}

/** The organisation, if the user may see it; otherwise not found. */
export async function organisationFor(
  ctx: GatewayContext,
  user: ConsoleUser,
  organisation_id: number,
): Promise<Organisation> {
  const organisation = canSee(user, organisation_id)
    ? await ctx.store.accounts.findOrganisation(organisation_id)
    : undefined;
  if (!organisation) throw new ConsoleError('error.not_found');
  return organisation;
}

/** The organisation, if the user may see and configure it (what a confirmation of its disabling names). */
export async function organisationToConfigure(
  ctx: GatewayContext,
  user: ConsoleUser,
  organisation_id: number,
): Promise<Organisation> {
  allow(user, 'configure');
  return organisationFor(ctx, user, organisation_id);
}

/** The wallet with its organisation, if the user may see and configure it; otherwise not found (or forbidden). */
export async function walletToConfigure(
  ctx: GatewayContext,
  user: ConsoleUser,
  wallet_id: string,
): Promise<{ wallet: Wallet; organisation_id: number }> {
  allow(user, 'configure');
  const wallet = await ctx.store.accounts.findWallet(wallet_id);
  const owner = wallet && (await ctx.store.accounts.findUser(wallet.user_id));
  if (!wallet || !owner || !canSee(user, owner.organisation_id)) throw new ConsoleError('error.not_found');
  return { wallet, organisation_id: owner.organisation_id };
}

export async function createOrganisation(
  ctx: GatewayContext,
  user: ConsoleUser,
  ip: string,
  input: { name: string; currency: string },
): Promise<number> {
  allow(user, 'configure');
  const name = input.name.trim();
  if (name === '' || name.length > 200) throw new ConsoleError('error.name_length');
  // Operators tell merchants apart by name: a second organisation of one name is refused.
  const key = (n: string) => n.trim().toLowerCase();
  if ((await ctx.store.accounts.listOrganisations()).some((o) => key(o.organisation_name) === key(name)))
    throw new ConsoleError('error.name_taken', { name });
  const made = await admin(() => createMerchant(ctx.store, { name, currency: input.currency }));
  await audit(ctx, actorOf(user, ip), {
    action: 'organisation.create',
    object: made.user_id,
    organisation_id: made.organisation_id,
    after: JSON.stringify({
      organisation_name: name,
      user_id: made.user_id,
      wallet_id: made.wallet_id,
      currency: made.currency,
    }),
  });
  return made.organisation_id;
}

export async function renameOrganisation(
  ctx: GatewayContext,
  user: ConsoleUser,
  ip: string,
  organisation_id: number,
  name: string,
): Promise<void> {
  allow(user, 'configure');
  const before = await organisationFor(ctx, user, organisation_id);
  const trimmed = name.trim();
  if (trimmed === '' || trimmed.length > 200) throw new ConsoleError('error.name_length');
  await ctx.store.accounts.renameOrganisation(organisation_id, trimmed);
  await audit(ctx, actorOf(user, ip), {
    action: 'organisation.rename',
    object: String(organisation_id),
    organisation_id,
    before: JSON.stringify({ organisation_name: before.organisation_name }),
    after: JSON.stringify({ organisation_name: trimmed }),
  });
}

/** The API user, if the signed-in user may see and configure it (what a confirmation of its disabling names). */
export async function apiUserToConfigure(ctx: GatewayContext, user: ConsoleUser, user_id: string): Promise<User> {
  allow(user, 'configure');
  const target = await ctx.store.accounts.findUser(user_id);
  if (!target || !canSee(user, target.organisation_id)) throw new ConsoleError('error.not_found');
  return target;
}

/** Disables or enables one of the organisation's API users: a disabled user's requests are refused (205). */
export async function setApiUserStatus(
  ctx: GatewayContext,
  user: ConsoleUser,
  ip: string,
  user_id: string,
  status: UserStatus,
): Promise<number> {
  const target = await apiUserToConfigure(ctx, user, user_id);
  if (status === 'active') await notClosed(ctx, target.organisation_id);
  await ctx.store.accounts.setUserStatus(user_id, status);
  await audit(ctx, actorOf(user, ip), {
    action: `api_user.${status === 'active' ? 'enable' : 'disable'}`,
    object: user_id,
    organisation_id: target.organisation_id,
    before: JSON.stringify({ user_status: target.user_status }),
    after: JSON.stringify({ user_status: status }),
  });
  return target.organisation_id;
}

/**
 * Disables (or enables) an organisation in one step: every API user (its requests are refused,
 * 205) and every console user (their sessions end). The statuses stay on the users, so one
 * place says whether a request or a sign-in is let in.
 */
export async function setOrganisationStatus(
  ctx: GatewayContext,
  user: ConsoleUser,
  ip: string,
  organisation_id: number,
  status: UserStatus,
): Promise<void> {
  allow(user, 'configure');
  const organisation = await organisationFor(ctx, user, organisation_id);
  if (organisation.closed_at !== null) throw new ConsoleError('error.organisation_closed');
  const apiUsers = await ctx.store.accounts.listOrganisationUsers(organisation_id);
  const consoleUsers = await ctx.store.console.listUsers({ kind: 'merchant', organisation_id });
  for (const u of apiUsers) if (u.user_status !== status) await ctx.store.accounts.setUserStatus(u.user_id, status);
  for (const u of consoleUsers) {
    if (u.status !== status) await ctx.store.console.setUserStatus(u.console_user_id, status, ctx.now());
    if (status === 'disabled') await ctx.store.console.deleteUserSessions(u.console_user_id);
  }
  const statuses = (api: Record<string, string>, people: Record<string, string>) =>
    JSON.stringify({ api_users: api, console_users: people });
  await audit(ctx, actorOf(user, ip), {
    action: `organisation.${status === 'active' ? 'enable' : 'disable'}`,
    object: String(organisation_id),
    organisation_id,
    before: statuses(
      Object.fromEntries(apiUsers.map((u) => [u.user_id, u.user_status])),
      Object.fromEntries(consoleUsers.map((u) => [u.email, u.status])),
    ),
    after: statuses(
      Object.fromEntries(apiUsers.map((u) => [u.user_id, status])),
      Object.fromEntries(consoleUsers.map((u) => [u.email, status])),
    ),
  });
}

/** A closed organisation's users and wallets stay disabled. */
async function notClosed(ctx: GatewayContext, organisation_id: number): Promise<void> {
  if ((await ctx.store.accounts.findOrganisation(organisation_id))?.closed_at != null)
    throw new ConsoleError('error.organisation_closed');
}

/**
 * Closes an organisation for good: its API users, wallets and console users are disabled (their
 * sessions ended) and it cannot be enabled again; its orders stay readable. Only once nothing of
 * it can still move money: no pending order (a customer could still pay it), and every wallet's
 * pending, available and reserved balances at zero (paid out, refunds and payouts finished). The
 * name is typed to confirm. Refused with what is left otherwise.
 */
export async function closeOrganisation(
  ctx: GatewayContext,
  user: ConsoleUser,
  ip: string,
  organisation_id: number,
  typedName: string,
): Promise<void> {
  allow(user, 'configure');
  const organisation = await organisationFor(ctx, user, organisation_id);
  if (organisation.closed_at !== null) throw new ConsoleError('error.organisation_closed');
  if (typedName.trim().toLowerCase() !== organisation.organisation_name.trim().toLowerCase())
    throw new ConsoleError('error.close_name', { name: organisation.organisation_name });
  const pending = await ctx.store.transactions.search({ organisation_id, status: 'pending', limit: 1 });
  if (pending.rows.length > 0) throw new ConsoleError('error.close_pending', { order_id: pending.rows[0].order_id });
  const wallets = await ctx.store.accounts.listOrganisationWallets(organisation_id);
  const balances = wallets.length > 0 ? await ctx.store.ledger.walletsBalances(wallets.map((w) => w.wallet_id)) : [];
  const holding = balances.find((b) => b.pending !== 0 || b.available !== 0 || b.reserved !== 0);
  if (holding) throw new ConsoleError('error.close_balance', { wallet_id: holding.wallet_id });
  if (!(await ctx.store.accounts.closeOrganisation(organisation_id, ctx.now())))
    throw new ConsoleError('error.organisation_closed');
  for (const w of wallets)
    if (w.wallet_status !== 'disabled') await ctx.store.accounts.setWalletStatus(w.wallet_id, 'disabled');
  for (const u of await ctx.store.accounts.listOrganisationUsers(organisation_id))
    if (u.user_status !== 'disabled') await ctx.store.accounts.setUserStatus(u.user_id, 'disabled');
  for (const u of await ctx.store.console.listUsers({ kind: 'merchant', organisation_id })) {
    if (u.status !== 'disabled') await ctx.store.console.setUserStatus(u.console_user_id, 'disabled', ctx.now());
    await ctx.store.console.deleteUserSessions(u.console_user_id);
  }
  await audit(ctx, actorOf(user, ip), {
    action: 'organisation.close',
    object: String(organisation_id),
    organisation_id,
    before: JSON.stringify({ organisation_name: organisation.organisation_name }),
    after: JSON.stringify({ closed: true, wallets: wallets.map((w) => w.wallet_id) }),
  });
}

export async function addWallet(
  ctx: GatewayContext,
  user: ConsoleUser,
  ip: string,
  organisation_id: number,
  input: { user_id: string; currency: string; name: string; methods: string },
): Promise<string> {
  allow(user, 'configure');
  if ((await organisationFor(ctx, user, organisation_id)).closed_at !== null)
    throw new ConsoleError('error.organisation_closed');
  const owner = await ctx.store.accounts.findUser(input.user_id);
  if (!owner || owner.organisation_id !== organisation_id) throw new ConsoleError('error.not_found');
  const made = await admin(() =>
    createWallet(ctx.store, {
      user_id: input.user_id,
      currency: input.currency,
      ...(input.name.trim() && { name: input.name.trim() }),
      ...(input.methods && { methods: input.methods }),
    }),
  );
  await audit(ctx, actorOf(user, ip), {
    action: 'wallet.create',
    object: made.wallet_id,
    organisation_id,
    after: JSON.stringify({ user_id: made.user_id, currency: made.currency, payment_methods: input.methods || 'all' }),
  });
  return made.wallet_id;
}

/** A wallet's name, methods and legacy-signature setting. */
export async function editWallet(
  ctx: GatewayContext,
  user: ConsoleUser,
  ip: string,
  wallet_id: string,
  input: { name: string; methods: string; legacy_signatures: 0 | 1 },
): Promise<void> {
  const { wallet, organisation_id } = await walletToConfigure(ctx, user, wallet_id);
  if (input.methods === '') throw new ConsoleError('error.wallet_no_methods');
  const after = await admin(() =>
    updateWallet(ctx.store, wallet_id, {
      name: input.name,
      methods: input.methods,
      legacy_signatures: input.legacy_signatures,
    }),
  );
  const before = {
    wallet_name: wallet.wallet_name,
    payment_methods: wallet.payment_methods,
    legacy_signatures: wallet.legacy_signatures === 1 ? 'on' : 'off',
  };
  await audit(ctx, actorOf(user, ip), {
    action: 'wallet.update',
    object: wallet_id,
    organisation_id,
    before: JSON.stringify(before),
    after: JSON.stringify({
      wallet_name: after.wallet_name,
      payment_methods: after.payment_methods,
      legacy_signatures: after.legacy_signatures,
    }),
  });
}

/** Disables (no new orders: 301) or enables a wallet. */
export async function setWalletStatus(
  ctx: GatewayContext,
  user: ConsoleUser,
  ip: string,
  wallet_id: string,
  status: WalletStatus,
): Promise<void> {
  const { wallet, organisation_id } = await walletToConfigure(ctx, user, wallet_id);
  if (status === 'active') await notClosed(ctx, organisation_id);
  await ctx.store.accounts.setWalletStatus(wallet_id, status);
  await audit(ctx, actorOf(user, ip), {
    action: `wallet.${status === 'active' ? 'enable' : 'disable'}`,
    object: wallet_id,
    organisation_id,
    before: JSON.stringify({ wallet_status: wallet.wallet_status }),
    after: JSON.stringify({ wallet_status: status }),
  });
}

export const RATE_ACTIONS = ['rate.set', 'cli.rates.set'] as const;

export async function setExchangeRate(
  ctx: GatewayContext,
  user: ConsoleUser,
  ip: string,
  from: string,
  to: string,
  rate: string,
  confirmed = false,
): Promise<RateSet> {
  allow(user, 'configure');
  const set = await admin(() => setRate(ctx.store, from, to, rate, { confirmed }));
  if (set.kind === 'confirm') return set;
  await audit(ctx, actorOf(user, ip), {
    action: 'rate.set',
    object: `${from.toUpperCase()}/${to.toUpperCase()}`,
    before: set.before === undefined ? null : JSON.stringify({ rate_micros: set.before }),
    after: JSON.stringify({ rate_micros: set.micros }),
  });
  return set;
}

export function rateHistory(ctx: GatewayContext, user: ConsoleUser): Promise<AuditEntry[]> {
  allow(user, 'operate');
  return ctx.store.console.listAudit({ actions: RATE_ACTIONS, limit: 100 });
}

/** Which console users a user may manage: operators any; an owner their organisation's. */
function mayManage(user: ConsoleUser, target: { kind: ConsoleKind; organisation_id: number | null }): boolean {
  if (!permits(user, 'manage_users')) return false;
  if (user.kind === 'operator') return true;
  return target.kind === 'merchant' && target.organisation_id === user.organisation_id;
}

/**
 * What an invitation or a password link came to: mailed to the address (SMTP_URL), or the one-time
 * link for the console to show once (no email configured, or the email could not be sent: why).
 */
export interface LinkGiven {
  email: string;
  expires_at: number;
  mailed?: true;
  link?: string;
  /** The email was tried and not sent. */
  mail_failed?: true;
  /** Why, for an operator (the mail server's own words name the operator's hosts and logins: not a merchant's to read). */
  mail_error?: string;
}

/** A link whose email could not be sent: shown, and why only to an operator. */
function mailFailed(
  ctx: GatewayContext,
  user: ConsoleUser,
  err: unknown,
): Pick<LinkGiven, 'mail_failed' | 'mail_error'> {
  ctx.log.warn({ err }, 'the console email was not sent');
  return {
    mail_failed: true,
    ...(user.kind === 'operator' && { mail_error: err instanceof Error ? err.message : String(err) }),
  };
}

/**
 * Invites a console user. With email, the answer is the same whether the address is new or has an
 * account already (here or in another organisation): the invitation goes to a new address, a note
 * to an address that has an account, and the inviter learns nothing about whose address it is.
 * Without email the link is shown, and an address that has an account is refused (said in docs).
 */
export async function inviteConsoleUser(
  ctx: GatewayContext,
  user: ConsoleUser,
  ip: string,
  input: { email: string; kind: ConsoleKind; role: ConsoleRole; organisation_id: number | null; lang?: MailLang },
): Promise<LinkGiven> {
  // Another organisation is not found (whether it exists is not told), before the role is looked at.
  const organisation =
    input.kind === 'merchant' && input.organisation_id !== null
      ? await organisationFor(ctx, user, input.organisation_id)
      : undefined;
  if (!mayManage(user, input)) throw new ConsoleError('error.forbidden');
  if (organisation?.closed_at != null) throw new ConsoleError('error.organisation_closed');
  const { lang = 'en', ...invitation } = input;
  const mailer = ctx.mailer;
  const to = normaliseEmail(input.email) ?? input.email;
  const about = {
    to,
    lang,
    inviter: user.email,
    ...(organisation && { organisation_name: organisation.organisation_name }),
  };
  let made;
  try {
    made = await inviteUser(ctx, actorOf(user, ip), invitation);
  } catch (e) {
    if (!mailer || !(e instanceof ConsoleError) || e.key !== 'error.email_taken') throw e;
    await audit(ctx, actorOf(user, ip), {
      action: 'user.invite',
      object: to,
      organisation_id: input.organisation_id,
      after: JSON.stringify({ refused: 'the address has a console account', told: 'the address, by email' }),
    });
    // What went wrong sending it is logged, not answered: the answer is the one a new address gets.
    await mailer
      .alreadyHasAccount(about)
      .catch((err: unknown) => ctx.log.warn({ err }, 'the console email was not sent'));
    return { email: to, expires_at: ctx.now() + INVITE_TTL_MS, mailed: true };
  }
  const given = { email: made.user.email, expires_at: made.expires_at };
  if (!mailer) return { ...given, link: made.link };
  try {
    await mailer.invitation({ ...about, link: made.link, expires_at: made.expires_at });
    return { ...given, mailed: true };
  } catch (err) {
    return { ...given, link: made.link, ...mailFailed(ctx, user, err) };
  }
}

async function managed(ctx: GatewayContext, user: ConsoleUser, console_user_id: string): Promise<ConsoleUser> {
  const target = await ctx.store.console.findUser(console_user_id);
  if (
    !target ||
    (target.kind === 'merchant' && !canSee(user, target.organisation_id!)) ||
    (target.kind === 'operator' && user.kind !== 'operator')
  )
    throw new ConsoleError('error.not_found');
  if (!mayManage(user, target)) throw new ConsoleError('error.forbidden');
  return target;
}

/**
 * A reset is for someone else: one's own password and two-factor change on one's account page,
 * which asks for the password first. Else a session left open would be enough to take the account.
 */
function notMyself(user: ConsoleUser, target: ConsoleUser): void {
  if (target.console_user_id === user.console_user_id) throw new ConsoleError('error.own_account_page');
}

/** The console user, if the signed-in user may disable them or turn their two-factor off (what a confirmation names). */
export async function consoleUserToChange(
  ctx: GatewayContext,
  user: ConsoleUser,
  console_user_id: string,
  what: 'disable' | 'reset_totp',
): Promise<ConsoleUser> {
  const target = await managed(ctx, user, console_user_id);
  if (what === 'reset_totp') notMyself(user, target);
  else if (target.console_user_id === user.console_user_id) throw new ConsoleError('error.not_yourself');
  return target;
}

/** Disables (their sessions end) or enables a console user; nobody disables themselves. */
export async function setConsoleUserStatus(
  ctx: GatewayContext,
  user: ConsoleUser,
  ip: string,
  console_user_id: string,
  status: 'active' | 'disabled',
): Promise<void> {
  const target = await consoleUserToChange(ctx, user, console_user_id, 'disable');
  if (status === 'active' && target.organisation_id !== null) await notClosed(ctx, target.organisation_id);
  await ctx.store.console.setUserStatus(console_user_id, status, ctx.now());
  if (status === 'disabled') {
    await ctx.store.console.deleteUserSessions(console_user_id);
    // A link given out before stays void when the user is enabled again.
    await ctx.store.console.voidTokens(console_user_id, 'set_password', ctx.now());
  }
  await audit(ctx, actorOf(user, ip), {
    action: `user.${status === 'active' ? 'enable' : 'disable'}`,
    object: target.email,
    organisation_id: target.organisation_id,
    before: JSON.stringify({ status: target.status }),
    after: JSON.stringify({ status }),
  });
}

/** A new one-time link to set the password (a forgotten one); the user's sessions end. */
/**
 * `shownAt`: when the page with the button was made; a link made since (this form sent twice, a
 * reload of its result) is not replaced, since a new link voids the one just handed out.
 */
export async function resetConsolePassword(
  ctx: GatewayContext,
  user: ConsoleUser,
  ip: string,
  console_user_id: string,
  shownAt?: number,
  lang: MailLang = 'en',
): Promise<LinkGiven> {
  const target = await managed(ctx, user, console_user_id);
  notMyself(user, target);
  if (shownAt !== undefined && (await ctx.store.console.newestTokenAt(console_user_id, 'set_password')) > shownAt)
    throw new ConsoleError('error.link_made_already');
  const link = await passwordLink(ctx, target);
  await ctx.store.console.deleteUserSessions(console_user_id);
  await audit(ctx, actorOf(user, ip), {
    action: 'user.password_link',
    object: target.email,
    organisation_id: target.organisation_id,
  });
  const given = { email: target.email, expires_at: link.expires_at };
  if (!ctx.mailer) return { ...given, link: link.link };
  try {
    await ctx.mailer.passwordLink({ to: target.email, lang, link: link.link, expires_at: link.expires_at });
    return { ...given, mailed: true };
  } catch (err) {
    return { ...given, link: link.link, ...mailFailed(ctx, user, err) };
  }
}

/** Turns a user's two-factor off (a lost phone); they sign in with the password and may enrol again. */
export async function resetConsoleTotp(
  ctx: GatewayContext,
  user: ConsoleUser,
  ip: string,
  console_user_id: string,
): Promise<void> {
  const target = await consoleUserToChange(ctx, user, console_user_id, 'reset_totp');
  await ctx.store.console.setTotp(console_user_id, null, ctx.now());
  await ctx.store.console.setRecoveryCodes(target.console_user_id, [], ctx.now());
  await audit(ctx, actorOf(user, ip), {
    action: 'user.totp_reset',
    object: target.email,
    organisation_id: target.organisation_id,
  });
}

/** The master key that seals provider secrets: without it, no account can be set or opened here. */
function masterKeyOf(ctx: GatewayContext): MasterKey {
  if (!ctx.masterKey)
    throw new ConsoleError('error.admin', {
      message: 'provider secrets are sealed with the master key: set GATEWAY_MASTER_KEY and restart',
    });
  return ctx.masterKey;
}

/**
 * Sets (or replaces) a wallet's account with a provider for a method, from the console's form:
 * made as the CLI makes it, checked by its connector, its secrets sealed with the master key;
 * audited with fingerprints only. The secrets are write-only: the page never shows them back.
 */
export async function setChannel(
  ctx: GatewayContext,
  user: ConsoleUser,
  ip: string,
  wallet_id: string,
  payment_method: string,
  provider: string,
  given: AccountInput,
): Promise<void> {
  const { wallet, organisation_id } = await walletToConfigure(ctx, user, wallet_id);
  const master = masterKeyOf(ctx);
  if (!isPaymentMethod(payment_method))
    throw new ConsoleError('error.admin', { message: `no payment method ${payment_method}` });
  const descriptor = providerNamed(ctx.connectors, provider);
  if (!descriptor) throw new ConsoleError('error.admin', { message: `no provider ${provider}` });
  // The fields given change; the rest of the wallet's account with this provider is kept.
  const stored = await ctx.store.accounts.findChannelAccount(wallet_id, payment_method);
  let account;
  try {
    account = accountFromInput(descriptor, wallet, payment_method, given, stored && openAccount(master, stored));
  } catch (e) {
    if (e instanceof AccountInputError) throw new ConsoleError('error.admin', { message: `${e.field} ${e.message}` });
    throw e;
  }
  const result = await storeChannelAccount(ctx.store.accounts, descriptor, master, account, ctx.now());
  if (!result.ok) throw new ConsoleError('error.admin', { message: result.problems.join('; ') });
  await audit(ctx, actorOf(user, ip), {
    action: 'channel.set',
    object: `${wallet_id} ${payment_method}`,
    organisation_id,
    after: JSON.stringify(describeAccount(account)),
  });
}

/** Makes a provider account's signed test call, as `gateway channel test` does: what the provider's answer proves, or why it failed. */
export async function testChannel(
  ctx: GatewayContext,
  user: ConsoleUser,
  ip: string,
  wallet_id: string,
  payment_method: string,
): Promise<ProbeOutcome> {
  const { organisation_id } = await walletToConfigure(ctx, user, wallet_id);
  if (!isPaymentMethod(payment_method)) throw new ConsoleError('error.not_found');
  const stored = await ctx.store.accounts.findChannelAccount(wallet_id, payment_method);
  if (!stored) throw new ConsoleError('error.not_found');
  const master = masterKeyOf(ctx);
  // An account whose secrets no longer open (another master key), or a connector that throws, is a failed test, said so.
  const outcome: ProbeOutcome = await Promise.resolve()
    .then(() => ctx.connectors[stored.provider].probe(openAccount(master, stored)))
    .catch((e: unknown) => ({ ok: false, reason: (e as Error).message }));
  await audit(ctx, actorOf(user, ip), {
    action: 'channel.test',
    object: `${wallet_id} ${payment_method}`,
    organisation_id,
    after: JSON.stringify({ ok: outcome.ok }),
  });
  return outcome;
}

export async function removeChannel(
  ctx: GatewayContext,
  user: ConsoleUser,
  ip: string,
  wallet_id: string,
  payment_method: string,
): Promise<void> {
  const { organisation_id } = await walletToConfigure(ctx, user, wallet_id);
  if (!isPaymentMethod(payment_method)) throw new ConsoleError('error.not_found');
  if (await ctx.store.accounts.removeChannelAccount(wallet_id, payment_method)) {
    await audit(ctx, actorOf(user, ip), {
      action: 'channel.remove',
      object: `${wallet_id} ${payment_method}`,
      organisation_id,
    });
  }
}
