// What the commands share about their arguments: the error of a mistake, a required value, the database.

/** A CLI mistake: printed as one line, exit code 2. */
export class UsageError extends Error {}

export function required(values: Readonly<Record<string, unknown>>, name: string): string {
  const v = values[name];
  if (typeof v !== 'string' || v === '') throw new UsageError(`--${name} is required`);
  return v;
}

export function databaseOf(values: Readonly<Record<string, unknown>>): string {
  const v = values.database;
  return typeof v === 'string' && v !== '' ? v : process.env.DATABASE_URL || './data/gateway.db';
}

/** A variable that must be a positive whole number; undefined when unset. */
export function positiveEnv(name: string): number | undefined {
  const text = process.env[name];
  if (text === undefined || text === '') return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`${name} must be a positive whole number, not ${text}`);
  return n;
}
