import type { ConsoleKind, ConsoleUser, ConsoleUserStatus } from '../domain/console.js';

// What the console stores: its users, their sessions and one-time links (by hash only: the
// database never holds what a cookie or a link carries), the sign-in throttle, its settings, and
// the audit log (append-only: the repository has no way to change or remove an entry, and the
// database refuses one).

export interface ConsoleSession {
  session_hash: string;
  console_user_id: string;
  /** The session's data as @fastify/session keeps it (JSON). */
  data: string;
  created_at: number;
  last_seen_at: number;
  ip: string | null;
}

export interface ConsoleToken {
  token_hash: string;
  console_user_id: string;
  purpose: 'set_password';
  expires_at: number;
  used_at: number | null;
  created_at: number;
}

export interface ThrottleRow {
  throttle_key: string;
  failures: number;
  window_start: number;
  locked_until: number;
}

export interface AuditEntry {
  audit_id: number;
  at: number;
  /** A console user's id and email (`cu_... <email>`), or `cli:<os user>`. */
  actor: string;
  actor_kind: 'operator' | 'merchant' | 'cli' | 'anonymous';
  /** The organisation the action touched, when it touched one. */
  organisation_id: number | null;
  /** e.g. `console.sign_in`, `transaction.refund`, `wallet.rotate_key`, `cli.merchant.create`. */
  action: string;
  /** What it acted on (an order_id, a wallet_id, a user's email). */
  object: string | null;
  ip: string | null;
  /** JSON of the configuration before and after, for a configuration change. */
  before: string | null;
  after: string | null;
}
export type NewAuditEntry = Omit<AuditEntry, 'audit_id'>;

export interface ConsoleRepo {
  /** False when the email is taken. */
  addUser(user: ConsoleUser): Promise<boolean>;
  findUser(console_user_id: string): Promise<ConsoleUser | undefined>;
  findUserByEmail(email: string): Promise<ConsoleUser | undefined>;
  listUsers(filter: { kind?: ConsoleKind; organisation_id?: number }): Promise<ConsoleUser[]>;
  countUsers(kind: ConsoleKind): Promise<number>;
  setPassword(console_user_id: string, password_hash: string, now: number): Promise<void>;
  setUserStatus(console_user_id: string, status: ConsoleUserStatus, now: number): Promise<boolean>;
  /** Turns two-factor on (a sealed secret, and the step of the code that confirmed it) or off (null). */
  setTotp(console_user_id: string, totp_sealed: string | null, now: number, totp_last_step?: number): Promise<void>;
  /** Records a TOTP step as used; false when it (or a later one) was used already: a code works once. */
  useTotpStep(console_user_id: string, step: number): Promise<boolean>;
  /** Replaces the user's recovery codes (their hashes) with these; none removes them. */
  setRecoveryCodes(console_user_id: string, code_hashes: readonly string[], now: number): Promise<void>;
  /** Uses up one of the user's unused recovery codes: false when none has this hash (or it was used). */
  useRecoveryCode(console_user_id: string, code_hash: string, now: number): Promise<boolean>;
  /** How many of the user's recovery codes are left. */
  countRecoveryCodes(console_user_id: string): Promise<number>;
  /** Whether two-factor is required of operators, or of one organisation's users. */
  twoFactorRequired(scope: 'operators' | number): Promise<boolean>;
  setTwoFactorRequired(scope: 'operators' | number, required: boolean): Promise<void>;

  addToken(token: ConsoleToken): Promise<void>;
  /** Uses a token up (once: a second use finds nothing) and returns its user. */
  useToken(token_hash: string, purpose: ConsoleToken['purpose'], now: number): Promise<ConsoleUser | undefined>;
  /** When the user's newest token for a purpose was made (0: none). */
  newestTokenAt(console_user_id: string, purpose: ConsoleToken['purpose']): Promise<number>;
  /** Uses up every usable token of a user for a purpose (a newer one replaces them, or the user is disabled). */
  voidTokens(console_user_id: string, purpose: ConsoleToken['purpose'], now: number): Promise<void>;
  /** A token that is still usable, without using it (to show its page). */
  findToken(token_hash: string, purpose: ConsoleToken['purpose'], now: number): Promise<ConsoleToken | undefined>;

  saveSession(session: ConsoleSession): Promise<void>;
  findSession(session_hash: string): Promise<ConsoleSession | undefined>;
  touchSession(session_hash: string, now: number): Promise<void>;
  deleteSession(session_hash: string): Promise<void>;
  /** A user's sessions, the last used first. */
  listUserSessions(console_user_id: string): Promise<ConsoleSession[]>;
  /** Ends one of the user's sessions (only theirs); false when it was not. */
  deleteUserSession(console_user_id: string, session_hash: string): Promise<boolean>;
  /** Signs a user out everywhere; the number of sessions ended. */
  deleteUserSessions(console_user_id: string): Promise<number>;
  /** Removes sessions idle since `idleBefore` or created before `createdBefore`. */
  deleteExpiredSessions(idleBefore: number, createdBefore: number): Promise<number>;

  throttle(keys: readonly string[]): Promise<ThrottleRow[]>;
  /** Counts a failure against a key: within its window, or a new window; locked once `limit` is reached. */
  recordFailure(
    key: string,
    now: number,
    policy: { windowMs: number; limit: number; lockMs: number },
  ): Promise<ThrottleRow>;
  clearThrottle(key: string): Promise<void>;
  /** Forgets failures whose window began before `windowBefore` and whose lock (if any) has ended by `now`. */
  pruneThrottle(windowBefore: number, now: number): Promise<number>;

  /** The setting's value, made from `make` (and stored) the first time it is asked for: the same on every instance. */
  setting(name: string, make: () => string): Promise<string>;

  audit(entry: NewAuditEntry): Promise<void>;
  /** Newest first; `before` is the audit_id of the last entry of the previous page. */
  listAudit(filter: {
    organisation_id?: number;
    actions?: readonly string[];
    object?: string;
    /** Any of these objects. */
    objects?: readonly string[];
    /** Entries by this actor: a console_user_id, or `cli:` (any command line) or `anonymous`. */
    actor?: string;
    /** at from (inclusive) and to (exclusive), epoch ms. */
    from?: number;
    to?: number;
    before?: number;
    limit: number;
  }): Promise<AuditEntry[]>;
}
