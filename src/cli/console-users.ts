import { userInfo } from 'node:os';
import type { ConsoleKind, ConsoleRole } from '../domain/console.js';
import type { NewAuditEntry } from '../ports/console.js';
import type { Store } from '../ports/store.js';
import type { SqlStore } from '../store/sql-store.js';
import { audit, ConsoleError, inviteUser } from '../usecases/console-auth.js';
import { translator } from '../pages/console/i18n.js';
import { DATABASE_OPTION, UsageError, parse, required } from './args.js';

// Console users from the command line: the first operator (there is no default one), and any
// console user an operator wants to make without the console. Each prints a one-time link to set
// the password. And the audit entry every administrative command of the CLI leaves.

type WithStore = <T>(values: Record<string, unknown>, fn: (store: SqlStore) => Promise<T>) => Promise<T>;

function osUser(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}

/** Records a CLI command in the audit log. */
export function auditCli(
  store: Store,
  entry: Pick<NewAuditEntry, 'action'> & Partial<Omit<NewAuditEntry, 'action'>>,
): Promise<void> {
  return audit({ store, now: Date.now }, { kind: 'cli', name: osUser() }, entry);
}

export async function consoleUserCommand(
  kind: ConsoleKind,
  sub: string | undefined,
  rest: string[],
  withStore: WithStore,
): Promise<number> {
  const usage =
    kind === 'operator'
      ? 'usage: gateway operator create --email EMAIL [--role admin|support]'
      : 'usage: gateway merchant-user create --organisation-id N --email EMAIL [--role owner|staff]';
  if (sub !== 'create') throw new UsageError(usage);
  const v = parse(rest, {
    ...DATABASE_OPTION,
    email: { type: 'string' },
    role: { type: 'string' },
    'organisation-id': { type: 'string' },
    'public-url': { type: 'string' },
    json: { type: 'boolean' },
  });
  const email = required(v, 'email');
  const role = ((v.role as string | undefined) ?? (kind === 'operator' ? 'admin' : 'owner')) as ConsoleRole;
  let organisation_id: number | null = null;
  if (kind === 'merchant') {
    const text = required(v, 'organisation-id');
    organisation_id = Number(text);
    if (!Number.isSafeInteger(organisation_id) || organisation_id <= 0)
      throw new UsageError(`--organisation-id must be an organisation's number, not ${text}`);
  }
  const publicUrl = (
    (v['public-url'] as string | undefined) ??
    process.env.PUBLIC_URL ??
    `http://localhost:${process.env.PORT ?? 8080}`
  ).replace(/\/+$/, '');
  try {
    const made = await withStore(v, (store) =>
      inviteUser(
        { store, now: Date.now, config: { publicUrl } },
        { kind: 'cli', name: osUser() },
        { email, kind, role, organisation_id },
      ),
    );
    const out = {
      console_user_id: made.user.console_user_id,
      email: made.user.email,
      kind,
      role,
      organisation_id,
      link: made.link,
      link_expires_at: new Date(made.expires_at).toISOString(),
    };
    if (v.json) console.log(JSON.stringify(out, null, 2));
    else {
      for (const [k, val] of Object.entries(out)) console.log(`${k.padEnd(18)} ${String(val)}`);
      console.log('\nGive the link to its owner (it works once); they choose their password there.');
    }
    return 0;
  } catch (e) {
    if (e instanceof ConsoleError) throw new UsageError(translator('en')(e.key, e.params));
    throw e;
  }
}
