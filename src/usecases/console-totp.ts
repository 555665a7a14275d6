import { canSee, permits, type ConsoleUser } from '../domain/console.js';
import { seal, unseal } from '../domain/sealed.js';
import { newRecoveryCodes, newTotpSecret, recoveryCodeHash, totpStep, totpUri } from '../domain/totp.js';
import { audit, ConsoleError, confirmPassword } from './console-auth.js';
import type { GatewayContext } from './context.js';

// Optional two-factor sign-in per console user: TOTP (RFC 6238, as authenticator apps read it from
// the QR code), through the otpauth library. The secret is sealed with the master key at rest; a
// code is accepted once (the step of the last one is kept) and within one step of the clock.

function master(ctx: GatewayContext) {
  if (!ctx.masterKey) throw new ConsoleError('error.totp_needs_master_key');
  return ctx.masterKey;
}

export interface Enrolment {
  /** For the authenticator app: the otpauth:// URI (shown as a QR code) and the secret as text. */
  uri: string;
  secret: string;
  /** The secret sealed, bound to the user: carried by the confirmation form, useless to anyone else. */
  pending: string;
}

/** A new secret for the user to add to their authenticator; nothing is stored until a code confirms it. */
export function beginEnrolment(ctx: GatewayContext, user: ConsoleUser): Enrolment {
  return enrolment(ctx, user, newTotpSecret());
}

/** The enrolment of a secret (a new one, or the pending one again after a wrong code). */
export function enrolment(ctx: GatewayContext, user: ConsoleUser, secret: string): Enrolment {
  const pending = Buffer.from(
    seal(master(ctx), JSON.stringify({ u: user.console_user_id, s: secret, t: ctx.now() })),
  ).toString('base64url');
  return { uri: totpUri(secret, user.email), secret, pending };
}

/** How long a set-up form can be confirmed (each wrong code shows it anew). */
export const ENROLMENT_TTL_MS = 30 * 60_000;

/** The secret of a pending enrolment, if it was made for this user within ENROLMENT_TTL_MS. */
export function pendingSecret(ctx: GatewayContext, user: ConsoleUser, pending: string): string | undefined {
  try {
    const opened = JSON.parse(unseal(master(ctx), Buffer.from(pending, 'base64url').toString('utf8'))) as {
      u: string;
      s: string;
      t?: number;
    };
    const fresh = typeof opened.t === 'number' && ctx.now() - opened.t < ENROLMENT_TTL_MS;
    return opened.u === user.console_user_id && fresh ? opened.s : undefined;
  } catch (e) {
    if (e instanceof ConsoleError) throw e;
    return undefined;
  }
}

/** Turns two-factor on once a code from the new secret proves the authenticator has it; returns its recovery codes (shown once). */
export async function confirmEnrolment(
  ctx: GatewayContext,
  user: ConsoleUser,
  ip: string,
  pending: string,
  code: string,
): Promise<string[]> {
  // Replacing a factor that is on goes through turning it off, which asks for the password.
  if ((await ctx.store.console.findUser(user.console_user_id))?.totp_sealed)
    throw new ConsoleError('error.totp_already_on');
  const secret = pendingSecret(ctx, user, pending);
  if (!secret) throw new ConsoleError('error.totp_enrolment_invalid');
  const step = totpStep(secret, code.trim(), ctx.now());
  if (step === undefined) throw new ConsoleError('error.totp_wrong');
  await ctx.store.console.setTotp(user.console_user_id, seal(master(ctx), secret), ctx.now(), step);
  const codes = await giveRecoveryCodes(ctx, user);
  await audit(
    ctx,
    { kind: 'user', user, ip },
    { action: 'user.totp_enable', object: user.email, organisation_id: user.organisation_id },
  );
  return codes;
}

async function giveRecoveryCodes(ctx: GatewayContext, user: ConsoleUser): Promise<string[]> {
  const codes = newRecoveryCodes();
  await ctx.store.console.setRecoveryCodes(
    user.console_user_id,
    codes.map((c) => recoveryCodeHash(c)!),
    ctx.now(),
  );
  return codes;
}

/** A new set of recovery codes (the old ones stop working), after the password is entered again. */
export async function renewRecoveryCodes(
  ctx: GatewayContext,
  user: ConsoleUser,
  ip: string,
  password: string,
): Promise<string[]> {
  await confirmPassword(ctx, user, password, ip);
  if (!(await ctx.store.console.findUser(user.console_user_id))?.totp_sealed)
    throw new ConsoleError('error.totp_enrolment_invalid');
  const codes = await giveRecoveryCodes(ctx, user);
  await audit(
    ctx,
    { kind: 'user', user, ip },
    { action: 'user.recovery_codes', object: user.email, organisation_id: user.organisation_id },
  );
  return codes;
}

/** Whether two-factor is required of this user (operators, or their organisation's users). */
export function twoFactorRequiredOf(ctx: GatewayContext, user: ConsoleUser): Promise<boolean> {
  return ctx.store.console.twoFactorRequired(user.kind === 'operator' ? 'operators' : user.organisation_id!);
}

/** Requires two-factor of operators (an operators' admin) or of an organisation's users (its owner, or an operators' admin). */
export async function setTwoFactorRequired(
  ctx: GatewayContext,
  user: ConsoleUser,
  ip: string,
  scope: 'operators' | number,
  required: boolean,
): Promise<void> {
  const may =
    scope === 'operators'
      ? user.kind === 'operator' && permits(user, 'manage_users')
      : permits(user, 'manage_users') && canSee(user, scope);
  if (!may) throw new ConsoleError('error.forbidden');
  await ctx.store.console.setTwoFactorRequired(scope, required);
  await audit(
    ctx,
    { kind: 'user', user, ip },
    {
      action: 'settings.two_factor',
      object: scope === 'operators' ? 'operators' : `organisation ${scope}`,
      organisation_id: scope === 'operators' ? null : scope,
      after: JSON.stringify({ two_factor: required ? 'required' : 'optional' }),
    },
  );
}

/** Turns two-factor off, after the password is entered again. */
export async function disableTotp(ctx: GatewayContext, user: ConsoleUser, ip: string, password: string): Promise<void> {
  if (await twoFactorRequiredOf(ctx, user)) throw new ConsoleError('error.totp_required');
  await confirmPassword(ctx, user, password, ip);
  await ctx.store.console.setTotp(user.console_user_id, null, ctx.now());
  await ctx.store.console.setRecoveryCodes(user.console_user_id, [], ctx.now());
  await audit(
    ctx,
    { kind: 'user', user, ip },
    { action: 'user.totp_disable', object: user.email, organisation_id: user.organisation_id },
  );
}

/**
 * Whether the code is the user's current one, not used before, or one of their recovery codes not
 * used yet (either is used up now).
 */
export async function checkTotp(ctx: GatewayContext, user: ConsoleUser, code: string): Promise<boolean> {
  if (!user.totp_sealed) return false;
  const recovery = recoveryCodeHash(code);
  if (recovery !== undefined) return ctx.store.console.useRecoveryCode(user.console_user_id, recovery, ctx.now());
  const step = totpStep(unseal(master(ctx), user.totp_sealed), code.trim(), ctx.now());
  return step !== undefined && (await ctx.store.console.useTotpStep(user.console_user_id, step));
}
