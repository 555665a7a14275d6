import { createHash } from 'node:crypto';
import type { SessionStore } from '@fastify/session';
import type * as Fastify from 'fastify';
import type { ConsoleRepo } from '../../ports/console.js';

// @fastify/session's store, in the database: any instance serves any session. Rows are keyed by a
// hash of the session id (the cookie's value never reaches the database), hold the signed-in
// user, and end after `idleMs` without a request or `absoluteMs` after sign-in, whichever is first.

export interface SessionPolicy {
  idleMs: number;
  absoluteMs: number;
  /** A session's last request is written at most this often (not on every page). */
  touchEveryMs: number;
}

export const SESSION_POLICY: SessionPolicy = { idleMs: 30 * 60_000, absoluteMs: 12 * 3600_000, touchEveryMs: 60_000 };

/** What the console keeps in a session. */
export interface ConsoleSessionData {
  console_user_id?: string;
  signed_in_at?: number;
  /** The address it was signed in from. */
  ip?: string;
}

declare module 'fastify' {
  // Declaration merging is how @fastify/session's Session is given its fields.
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface Session extends ConsoleSessionData {}
}

type Callback = (err?: unknown) => void;
type GetCallback = (err: unknown, result?: Fastify.Session | null) => void;

export const sessionHash = (id: string): string => createHash('sha256').update(id).digest('hex');

export class DatabaseSessionStore implements SessionStore {
  constructor(
    private readonly repo: ConsoleRepo,
    private readonly now: () => number,
    private readonly policy: SessionPolicy = SESSION_POLICY,
  ) {}

  set(sessionId: string, session: Fastify.Session, callback: Callback): void {
    const data = session as unknown as ConsoleSessionData & { cookie?: unknown };
    // Nobody signed in: nothing to keep (the console saves a session only at sign-in).
    if (!data.console_user_id) return callback();
    const now = this.now();
    this.repo
      .saveSession({
        session_hash: sessionHash(sessionId),
        console_user_id: data.console_user_id,
        data: JSON.stringify({
          console_user_id: data.console_user_id,
          signed_in_at: data.signed_in_at ?? now,
          ip: data.ip,
          cookie: data.cookie,
        }),
        created_at: data.signed_in_at ?? now,
        last_seen_at: now,
        ip: data.ip ?? null,
      })
      .then(() => callback(), callback);
  }

  get(sessionId: string, callback: GetCallback): void {
    const hash = sessionHash(sessionId);
    const now = this.now();
    this.repo
      .findSession(hash)
      .then(async (row) => {
        if (!row) return callback(null, null);
        if (row.last_seen_at + this.policy.idleMs <= now || row.created_at + this.policy.absoluteMs <= now) {
          await this.repo.deleteSession(hash);
          return callback(null, null);
        }
        if (now - row.last_seen_at >= this.policy.touchEveryMs) await this.repo.touchSession(hash, now);
        callback(null, JSON.parse(row.data) as Fastify.Session);
      })
      .catch((e: unknown) => callback(e));
  }

  destroy(sessionId: string, callback: Callback): void {
    this.repo.deleteSession(sessionHash(sessionId)).then(() => callback(), callback);
  }
}
