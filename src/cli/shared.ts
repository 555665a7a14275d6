import { openStore } from '../store/open.js';
import type { SqlStore } from '../store/sql-store.js';
import { databaseOf } from './args.js';
import type { Flag, Values } from './command.js';

// What every command of the CLI shares: the database flag, the --json switch, the store it opens
// for one command, and how a record is printed.

export const DATABASE_FLAG: Flag = {
  name: 'database',
  type: 'string',
  value: 'PATH|URL',
  help: 'the SQLite file, or a postgres:// URL',
  env: 'DATABASE_URL',
  default: './data/gateway.db',
};

export const JSON_FLAG: Flag = { name: 'json', type: 'boolean', help: 'print the result as JSON' };

export const PUBLIC_URL_FLAG: Flag = {
  name: 'public-url',
  type: 'string',
  value: 'URL',
  help: "the gateway's public base URL, for the links it prints",
  env: 'PUBLIC_URL',
};

/** Opens the command's database, runs `fn` on it, and closes it. */
export async function withStore<T>(values: Values, fn: (store: SqlStore) => Promise<T>): Promise<T> {
  const store = await openStore(databaseOf(values));
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

/** A record as `name value` lines, or as JSON with --json. */
export function print(values: Values, data: Readonly<Record<string, unknown>>): void {
  if (values.json) {
    console.log(JSON.stringify(data, null, 2));
    return;
  }
  for (const [k, v] of Object.entries(data)) console.log(`${k.padEnd(18)} ${String(v)}`);
}
