import { createHash, randomBytes } from 'node:crypto';
import {
  ROLES_OF,
  normaliseEmail,
  passwordProblem,
  type ConsoleKind,
  type ConsoleRole,
  type ConsoleUser,
} from '../domain/console.js';
import { decoyHash, hashPassword, needsRehash, verifyPassword } from '../domain/password.js';
import type { NewAuditEntry } from '../ports/console.js';
import type { AuditAction } from '../domain/console.js';
import type { Store } from '../ports/store.js';
import { KeyedQueue } from './keyed-queue.js';

// Console users: invitations (a one-time link to set a password; there is no default password
// anywhere), setting the password, signing in with the throttle, and the audit log's entries.

/** How long an invitation's link can be used. */
export const INVITE_TTL_MS = 72 * 3600_000;

/** Failed sign-ins: per account and per address, counted in a window; reaching the limit locks for a while. */
export const THROTTLE = {
  account: { windowMs: 15 * 60_000, limit: 5, lockMs: 15 * 60_000 },
  address: { windowMs: 15 * 60_000, limit: 20, lockMs: 15 * 60_000 },
} as const;

/** What these use cases need: the gateway's context has it, and so does the CLI without a server. */
export interface ConsoleDeps {
  store: Store;
  now(): number;
  config: { publicUrl: string };
}

/** Who did something, for the audit log: a console user, the CLI (with the OS user), or nobody signed in. */
export type Actor =
  | { kind: 'user'; user: ConsoleUser; ip: string | null }
  | { kind: 'cli'; name: string }
  | { kind: 'anonymous'; ip: string | null };

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

export async function audit(
  ctx: Pick<ConsoleDeps, 'store' | 'now'>,
  actor: Actor,
  entry: { action: AuditAction } & Partial<Omit<NewAuditEntry, 'action'>>,
): Promise<void> {
  const who =
    actor.kind === 'user'
      ? { actor: `${actor.user.console_user_id} <${actor.user.email}>`, actor_kind: actor.user.kind, ip: actor.ip }
      : actor.kind === 'cli'
        ? { actor: `cli:${actor.name}`, actor_kind: 'cli' as const, ip: null }
        : { actor: 'anonymous', actor_kind: 'anonymous' as const, ip: actor.ip };
  await ctx.store.console.audit({
    at: ctx.now(),
    organisation_id: null,
    object: null,
    before: null,
    after: null,
    ...who,
    ...entry,
  });
}

export class ConsoleError extends Error {
  constructor(
    /** The catalogue key of the message shown (pages/console/messages). */
    readonly key: string,
    readonly params: Record<string, string | number> = {},
  ) {
    super(key);
  }
}

export interface Invitation {
  email: string;
  kind: ConsoleKind;
  role: ConsoleRole;
  organisation_id: number | null;
}

/** Makes a console user without a password, and the one-time link with which they set it. */
export async function inviteUser(
  ctx: ConsoleDeps,
  actor: Actor,
  inv: Invitation,
): Promise<{ user: ConsoleUser; link: string; expires_at: number }> {
  const email = normaliseEmail(inv.email);
  if (!email) throw new ConsoleError('error.email_invalid');
  if (!ROLES_OF[inv.kind].includes(inv.role)) throw new ConsoleError('error.role_invalid', { role: inv.role });
  if (inv.kind === 'merchant') {
    if (inv.organisation_id === null) throw new ConsoleError('error.organisation_missing');
    if (!(await ctx.store.accounts.findOrganisation(inv.organisation_id)))
      throw new ConsoleError('error.organisation_unknown', { organisation_id: inv.organisation_id });
  }
  const now = ctx.now();
  const user: ConsoleUser = {
    console_user_id: `cu_${randomBytes(9).toString('base64url')}`,
    email,
    kind: inv.kind,
    role: inv.role,
    organisation_id: inv.kind === 'merchant' ? inv.organisation_id : null,
    password_hash: null,
    totp_sealed: null,
    totp_last_step: null,
    status: 'active',
    created_at: now,
    updated_at: now,
  };
  if (!(await ctx.store.console.addUser(user))) throw new ConsoleError('error.email_taken', { email });
  const { link, expires_at } = await passwordLink(ctx, user);
  await audit(ctx, actor, {
    action: 'user.invite',
    object: email,
    organisation_id: user.organisation_id,
    after: JSON.stringify({ kind: user.kind, role: user.role, organisation_id: user.organisation_id }),
  });
  return { user, link, expires_at };
}

/** A fresh one-time link for a user to set their password (an invitation, or a reset an operator makes). */
export async function passwordLink(ctx: ConsoleDeps, user: ConsoleUser): Promise<{ link: string; expires_at: number }> {
  const token = newToken();
  const now = ctx.now();
  const expires_at = now + INVITE_TTL_MS;
  // Only the newest link works: one given out before (perhaps to someone else) is void now.
  await ctx.store.console.voidTokens(user.console_user_id, 'set_password', now);
  await ctx.store.console.addToken({
    token_hash: hashToken(token),
    console_user_id: user.console_user_id,
    purpose: 'set_password',
    expires_at,
    used_at: null,
    created_at: now,
  });
  return { link: `${ctx.config.publicUrl}/console/welcome/${token}`, expires_at };
}

/** The active user a set-password link is for, while the link is usable (unused, not expired). */
export async function linkHolder(ctx: ConsoleDeps, token: string): Promise<ConsoleUser | undefined> {
  const pending = await ctx.store.console.findToken(hashToken(token), 'set_password', ctx.now());
  const user = pending && (await ctx.store.console.findUser(pending.console_user_id));
  return user?.status === 'active' ? user : undefined;
}

/** Sets the password a link was made for; the link is used up, and the user's other sessions end. */
export async function setPasswordWithToken(
  ctx: ConsoleDeps,
  token: string,
  password: string,
  ip: string | null,
): Promise<ConsoleUser> {
  const holder = await linkHolder(ctx, token);
  if (!holder) throw new ConsoleError('error.link_invalid');
  const problem = passwordProblem(password, holder.email);
  if (problem) throw new ConsoleError(`error.password_${problem}`);
  const hash = await hashPassword(password);
  const user = await ctx.store.console.useToken(hashToken(token), 'set_password', ctx.now());
  if (!user) throw new ConsoleError('error.link_invalid');
  await ctx.store.console.voidTokens(user.console_user_id, 'set_password', ctx.now());
  await ctx.store.console.setPassword(user.console_user_id, hash, ctx.now());
  await ctx.store.console.deleteUserSessions(user.console_user_id);
  await audit(
    ctx,
    { kind: 'user', user, ip },
    { action: 'user.set_password', object: user.email, organisation_id: user.organisation_id },
  );
  return { ...user, password_hash: hash };
}

/**
 * Removes what the console no longer needs: sessions past their idle or absolute end (a session
 * is refused then anyway; this keeps the table small), and throttle counts whose window and lock
 * are over. Run now and then (server.ts).
 */
export async function expireConsoleState(
  ctx: Pick<ConsoleDeps, 'store' | 'now'>,
  sessions: { idleMs: number; absoluteMs: number },
): Promise<{ sessions: number; throttle: number }> {
  const now = ctx.now();
  const longestWindow = Math.max(THROTTLE.account.windowMs, THROTTLE.address.windowMs);
  return {
    sessions: await ctx.store.console.deleteExpiredSessions(now - sessions.idleMs, now - sessions.absoluteMs),
    throttle: await ctx.store.console.pruneThrottle(now - longestWindow, now),
  };
}

/**
 * Attempts at a password or a code, one at a time per account and per address in this process:
 * parallel guesses would otherwise all pass the throttle's check before any failure is counted
 * (the password's check takes a while). Several instances let through at most one each at a time.
 */
const ATTEMPTS = new KeyedQueue();

export type SignIn =
  { kind: 'ok'; user: ConsoleUser } | { kind: 'refused'; key: string; params?: Record<string, number> };

/**
 * Checks an email and password. Refused the same way whether the email is unknown, the password
 * wrong or the user disabled (and in about the same time); refused without looking while the
 * account or the address is locked by the throttle.
 */
export async function signIn(ctx: ConsoleDeps, emailText: string, password: string, ip: string): Promise<SignIn> {
  const email = normaliseEmail(emailText) ?? emailText.trim().toLowerCase().slice(0, 254);
  const keys = { account: `account:${email}`, address: `address:${ip}` };
  return ATTEMPTS.run([keys.account, keys.address], () => signInNow(ctx, email, password, ip, keys));
}

async function signInNow(
  ctx: ConsoleDeps,
  email: string,
  password: string,
  ip: string,
  keys: { account: string; address: string },
): Promise<SignIn> {
  const now = ctx.now();
  const locks = await ctx.store.console.throttle([keys.account, keys.address]);
  const lockedUntil = Math.max(0, ...locks.map((l) => l.locked_until));
  if (lockedUntil > now) {
    await audit(ctx, { kind: 'anonymous', ip }, { action: 'console.sign_in_throttled', object: email });
    return { kind: 'refused', key: 'error.throttled', params: { minutes: Math.ceil((lockedUntil - now) / 60_000) } };
  }
  const user = await ctx.store.console.findUserByEmail(email);
  const good = user?.password_hash
    ? await verifyPassword(password, user.password_hash)
    : (await verifyPassword(password, await decoyHash()), false);
  if (!user || !good || user.status !== 'active') {
    await ctx.store.console.recordFailure(keys.account, now, THROTTLE.account);
    await ctx.store.console.recordFailure(keys.address, now, THROTTLE.address);
    await audit(
      ctx,
      { kind: 'anonymous', ip },
      { action: 'console.sign_in_failed', object: email, organisation_id: user?.organisation_id ?? null },
    );
    return { kind: 'refused', key: 'error.sign_in' };
  }
  // With two-factor, the account's failures are forgiven only once the code is right too: a
  // password alone must not reset the count of wrong codes.
  if (!user.totp_sealed) await ctx.store.console.clearThrottle(keys.account);
  if (needsRehash(user.password_hash!))
    await ctx.store.console.setPassword(user.console_user_id, await hashPassword(password), ctx.now());
  return { kind: 'ok', user };
}

/**
 * Asks a signed-in user for their password again before something sensitive (revealing or
 * rotating a key, turning two-factor off). A wrong password counts against the account's
 * throttle as a failed sign-in would: the form cannot be used to guess it.
 */
export async function confirmPassword(
  ctx: ConsoleDeps,
  user: ConsoleUser,
  password: string,
  ip: string,
): Promise<void> {
  const key = `account:${user.email}`;
  return ATTEMPTS.run([key], () => confirmPasswordNow(ctx, user, password, ip, key));
}

async function confirmPasswordNow(
  ctx: ConsoleDeps,
  user: ConsoleUser,
  password: string,
  ip: string,
  key: string,
): Promise<void> {
  const now = ctx.now();
  const [lock] = await ctx.store.console.throttle([key]);
  if (lock && lock.locked_until > now)
    throw new ConsoleError('error.throttled', { minutes: Math.ceil((lock.locked_until - now) / 60_000) });
  const fresh = await ctx.store.console.findUser(user.console_user_id);
  if (fresh?.password_hash && (await verifyPassword(password, fresh.password_hash))) return;
  await ctx.store.console.recordFailure(key, now, THROTTLE.account);
  await audit(
    ctx,
    { kind: 'user', user, ip },
    { action: 'console.password_failed', object: user.email, organisation_id: user.organisation_id },
  );
  throw new ConsoleError('error.password_wrong');
}

/**
 * The second step of a sign-in with two-factor: the code from the user's authenticator. Wrong
 * codes count against the same throttle as wrong passwords (per account and per address).
 */
export async function signInCode(
  ctx: ConsoleDeps,
  console_user_id: string,
  code: string,
  ip: string,
  check: (user: ConsoleUser, code: string) => Promise<boolean>,
): Promise<SignIn> {
  const user = await ctx.store.console.findUser(console_user_id);
  if (!user || user.status !== 'active' || !user.totp_sealed) return { kind: 'refused', key: 'error.sign_in' };
  const keys = { account: `account:${user.email}`, address: `address:${ip}` };
  return ATTEMPTS.run([keys.account, keys.address], () => signInCodeNow(ctx, user, code, ip, keys, check));
}

async function signInCodeNow(
  ctx: ConsoleDeps,
  user: ConsoleUser,
  code: string,
  ip: string,
  keys: { account: string; address: string },
  check: (user: ConsoleUser, code: string) => Promise<boolean>,
): Promise<SignIn> {
  const now = ctx.now();
  const locks = await ctx.store.console.throttle([keys.account, keys.address]);
  const lockedUntil = Math.max(0, ...locks.map((l) => l.locked_until));
  if (lockedUntil > now)
    return { kind: 'refused', key: 'error.throttled', params: { minutes: Math.ceil((lockedUntil - now) / 60_000) } };
  if (!(await check(user, code))) {
    await ctx.store.console.recordFailure(keys.account, now, THROTTLE.account);
    await ctx.store.console.recordFailure(keys.address, now, THROTTLE.address);
    await audit(
      ctx,
      { kind: 'anonymous', ip },
      { action: 'console.sign_in_code_failed', object: user.email, organisation_id: user.organisation_id },
    );
    return { kind: 'refused', key: 'error.totp_wrong' };
  }
  await ctx.store.console.clearThrottle(keys.account);
  return { kind: 'ok', user };
}
