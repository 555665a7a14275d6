import { userInfo } from 'node:os';
import type { AuditAction, ConsoleKind, ConsoleRole } from '../domain/console.js';
import type { NewAuditEntry } from '../ports/console.js';
import type { Store } from '../ports/store.js';
import { audit, ConsoleError, inviteUser } from '../usecases/console-auth.js';
import { translator } from '../pages/console/i18n.js';
import { UsageError, required } from './args.js';
import type { Command, Flag, Values } from './command.js';
import { DATABASE_FLAG, JSON_FLAG, PUBLIC_URL_FLAG, withStore } from './shared.js';

// Console users from the command line: the first operator (there is no default one), and any
// console user an operator wants to make without the console. Each prints a one-time link to set
// the password. And the audit entry every administrative command of the CLI leaves.

export function osUser(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}

/** Records a CLI command in the audit log. */
export function auditCli(
  store: Store,
  entry: { action: AuditAction } & Partial<Omit<NewAuditEntry, 'action'>>,
): Promise<void> {
  return audit({ store, now: Date.now }, { kind: 'cli', name: osUser() }, entry);
}

async function createConsoleUser(kind: ConsoleKind, v: Values): Promise<number> {
  const email = required(v, 'email');
  const role = ((v.role as string | undefined) ?? (kind === 'operator' ? 'admin' : 'owner')) as ConsoleRole;
  let organisation_id: number | null = null;
  if (kind === 'merchant') {
    const text = required(v, 'organisation-id');
    organisation_id = Number(text);
    if (!Number.isSafeInteger(organisation_id) || organisation_id <= 0)
      throw new UsageError(`--organisation-id must be an organisation's number, not ${text}`);
  }
  const publicUrl = ((v['public-url'] as string | undefined) ?? `http://localhost:${process.env.PORT ?? 8080}`).replace(
    /\/+$/,
    '',
  );
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

const LINK_URL_FLAG: Flag = { ...PUBLIC_URL_FLAG, default: 'http://localhost:PORT' };

export const operatorCreate: Command = {
  name: 'operator create',
  summary: 'a console operator (the first one is made here); prints a one-time link to set the password',
  description:
    'The link works once and for 72 hours. An admin may do everything; support may look, resend notifications\nand see the outbox and the audit log, but not move money or change configuration.',
  flags: [
    { name: 'email', type: 'string', value: 'EMAIL', help: "the operator's email, used to sign in", required: true },
    { name: 'role', type: 'string', value: 'admin|support', help: 'what the operator may do', default: 'admin' },
    LINK_URL_FLAG,
    DATABASE_FLAG,
    JSON_FLAG,
  ],
  examples: ['gateway operator create --email ops@psp.example --public-url https://pay.psp.example'],
  run: (v) => createConsoleUser('operator', v),
};

export const merchantUserCreate: Command = {
  name: 'merchant-user create',
  summary: "a merchant's console user; prints a one-time link to set the password",
  description:
    "The link works once and for 72 hours. An owner may refund, cancel, see the wallets' keys and manage the\norganisation's users; staff may only look.",
  flags: [
    { name: 'organisation-id', type: 'string', value: 'N', help: "the merchant's organisation", required: true },
    { name: 'email', type: 'string', value: 'EMAIL', help: "the user's email, used to sign in", required: true },
    { name: 'role', type: 'string', value: 'owner|staff', help: 'what the user may do', default: 'owner' },
    LINK_URL_FLAG,
    DATABASE_FLAG,
    JSON_FLAG,
  ],
  examples: ['gateway merchant-user create --organisation-id 1 --email owner@otago-wines.example'],
  run: (v) => createConsoleUser('merchant', v),
};
