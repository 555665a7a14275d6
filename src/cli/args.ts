import { parseArgs, type ParseArgsConfig } from 'node:util';

/** A CLI mistake: printed as one line, exit code 2. */
export class UsageError extends Error {}

export type Options = ParseArgsConfig['options'];

export function parse(argv: string[], options: Options): Record<string, string | boolean | undefined> {
  try {
    return parseArgs({ args: argv, options, allowPositionals: false, strict: true }).values;
  } catch (e) {
    throw new UsageError((e as Error).message.split('\n')[0] ?? 'bad arguments');
  }
}

export function required(values: Record<string, unknown>, name: string): string {
  const v = values[name];
  if (typeof v !== 'string' || v === '') throw new UsageError(`--${name} is required`);
  return v;
}

export function databaseOf(values: Record<string, unknown>): string {
  const v = values.database;
  return typeof v === 'string' && v !== '' ? v : process.env.DATABASE_URL || './data/gateway.db';
}

export const DATABASE_OPTION = { database: { type: 'string' } } as const;
