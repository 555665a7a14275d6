import type { Store } from '../ports/store.js';

// Whether this instance should be sent traffic (/readyz): the database answers, the schema is the
// one this code expects, and notifications are being delivered. Liveness (/healthz) asks nothing.

export type NotificationsState = 'running' | 'stopped' | 'off';

export interface Readiness {
  ready: boolean;
  /** Why not, when not ready: the first failing check, in words. */
  reason?: string;
  checks: { database: string; migrations: string; notifications: NotificationsState };
}

export interface ReadinessDeps {
  store: Pick<Store, 'pendingMigrations'>;
  /** 'off' when delivery is turned off on this instance (NOTIFY_ENABLED=false): another one delivers. */
  notifications(): NotificationsState;
  /** A database that does not answer within this is not ready (a hung server, not only a refused connection). */
  timeoutMs: number;
}

export async function readiness(deps: ReadinessDeps): Promise<Readiness> {
  let database = 'ok';
  let migrations = 'ok';
  try {
    const pending = await withTimeout(deps.store.pendingMigrations(), deps.timeoutMs);
    if (pending.length > 0) migrations = `pending: ${pending.join(', ')}`;
  } catch (e) {
    database = `not answering: ${e instanceof Error ? e.message : String(e)}`;
    migrations = 'unknown';
  }
  const notifications = deps.notifications();
  const reason =
    database !== 'ok'
      ? `database ${database}`
      : migrations !== 'ok'
        ? `migrations ${migrations}`
        : notifications === 'stopped'
          ? 'the notification worker is not running'
          : undefined;
  return {
    ready: reason === undefined,
    ...(reason !== undefined && { reason }),
    checks: { database, migrations, notifications },
  };
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  // A late answer after the timeout must not become an unhandled rejection.
  work.catch(() => {});
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
