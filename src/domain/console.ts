// Who may do what in the console. Two audiences: operators (the payment provider's staff) see every
// organisation; merchants' users see their own organisation only. Within each, one role may change
// money or configuration and the other may only look (support may also resend a notification).
// Every route asks `permits` and `canSee` on the server, whatever the page showed.

export type ConsoleKind = 'operator' | 'merchant';
export type ConsoleRole = 'admin' | 'support' | 'owner' | 'staff';
export type ConsoleUserStatus = 'active' | 'disabled';

export interface ConsoleUser {
  console_user_id: string;
  /** Lower case; the sign-in name. */
  email: string;
  kind: ConsoleKind;
  role: ConsoleRole;
  /** A merchant user's organisation; null for an operator. */
  organisation_id: number | null;
  /** `scrypt$...` (domain/password.ts); null until the user has set one through their link. */
  password_hash: string | null;
  /** The TOTP secret sealed under the master key; null without two-factor. */
  totp_sealed: string | null;
  /** The 30-second step of the last TOTP code accepted: a code is never accepted twice. */
  totp_last_step: number | null;
  status: ConsoleUserStatus;
  created_at: number;
  updated_at: number;
}

export type ConsoleAction =
  /** Orders, refunds, notifications, reports of what the user may see. */
  | 'view'
  /** Resend a merchant notification. */
  | 'resend'
  /** Refund or cancel: moves money. */
  | 'refund'
  /** Reveal or rotate a wallet's API key. */
  | 'see_keys'
  /** Organisations, users, wallets, channel accounts, rates. */
  | 'configure'
  /** Invite, disable and enable the users of an organisation (owners: their own). */
  | 'manage_users'
  /** The audit log and the notification outbox across merchants. */
  | 'operate';

const ALLOWED: Readonly<Record<ConsoleRole, ReadonlySet<ConsoleAction>>> = {
  admin: new Set(['view', 'resend', 'refund', 'see_keys', 'configure', 'manage_users', 'operate']),
  support: new Set(['view', 'resend', 'operate']),
  owner: new Set(['view', 'resend', 'refund', 'see_keys', 'manage_users']),
  staff: new Set(['view']),
};

export const ROLES_OF: Readonly<Record<ConsoleKind, readonly ConsoleRole[]>> = {
  operator: ['admin', 'support'],
  merchant: ['owner', 'staff'],
};

export function permits(user: Pick<ConsoleUser, 'role' | 'status'>, action: ConsoleAction): boolean {
  return user.status === 'active' && ALLOWED[user.role].has(action);
}

/** Whether the user may see (and, with the right role, act on) what belongs to this organisation. */
export function canSee(
  user: Pick<ConsoleUser, 'kind' | 'organisation_id' | 'status'>,
  organisation_id: number,
): boolean {
  if (user.status !== 'active') return false;
  return user.kind === 'operator' || user.organisation_id === organisation_id;
}

/** An email address as the console keeps it (trimmed, lower case), or undefined when it is not one. */
export function normaliseEmail(text: string): string | undefined {
  const e = text.trim().toLowerCase();
  return e.length <= 254 && /^[^\s@"<>]+@[^\s@"<>]+\.[^\s@"<>]+$/.test(e) ? e : undefined;
}

/** What is wrong with a new password, or undefined (NIST SP 800-63B: length, not composition rules). */
export function passwordProblem(password: string, email: string): 'too_short' | 'too_long' | 'is_email' | undefined {
  if ([...password].length < 12) return 'too_short';
  if (password.length > 256) return 'too_long';
  if (password.trim().toLowerCase() === email) return 'is_email';
  return undefined;
}

/**
 * Every action the audit log records, in the order the console's filter offers them. The console's
 * catalogues name each one (`audit.action.<action>`); an entry written by an older version with an
 * action not listed here is shown as written.
 */
export const AUDIT_ACTIONS = [
  'console.sign_in',
  'console.sign_in_failed',
  'console.sign_in_code_failed',
  'console.sign_in_throttled',
  'console.password_failed',
  'console.sign_out',
  'console.sign_out_everywhere',
  'console.end_session',
  'user.invite',
  'user.password_link',
  'user.set_password',
  'user.enable',
  'user.disable',
  'user.totp_enable',
  'user.totp_disable',
  'user.totp_reset',
  'user.recovery_codes',
  'settings.two_factor',
  'transaction.refund',
  'transaction.cancel',
  'transaction.resend',
  'transaction.ask_provider',
  'notifications.retry_host',
  'transactions.export',
  'organisation.create',
  'organisation.rename',
  'organisation.enable',
  'organisation.disable',
  'organisation.close',
  'api_user.enable',
  'api_user.disable',
  'wallet.create',
  'wallet.update',
  'wallet.enable',
  'wallet.disable',
  'wallet.reveal_key',
  'wallet.rotate_key',
  'wallet.test_notification',
  'channel.set',
  'channel.remove',
  'channel.test',
  'rate.set',
  'settlement.set',
  'fees.set',
  'limits.set',
  'ledger.adjust',
  'bank_account.add',
  'bank_account.verify',
  'payout.request',
  'payout.batch',
  'payout.file',
  'payout.auto',
  'payout.approved',
  'payout.paid',
  'payout.canceled',
  'payout.returned',
  'exception.resolve',
  'exception.refund',
  'exception.settle',
  'exception.adjust',
  'cli.merchant.create',
  'cli.wallet.create',
  'cli.wallet.update',
  'cli.wallet.enable',
  'cli.wallet.disable',
  'cli.user.enable',
  'cli.user.disable',
  'cli.key.rotate',
  'cli.channel.set',
  'cli.channel.remove',
  'cli.rates.set',
  'cli.settlement.set',
  'cli.fees.set',
  'cli.limits.set',
  'cli.ledger.adjust',
  'cli.bank_account.add',
  'cli.bank_account.verify',
  'cli.payout.request',
  'cli.payout.batch',
  'cli.payout.auto',
  'cli.payout.approved',
  'cli.payout.paid',
  'cli.payout.canceled',
  'cli.payout.returned',
  'cli.statements.import',
  'cli.exceptions.resolve',
  'cli.notifications.resend',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];
