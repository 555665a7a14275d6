import { parseArgs } from 'node:util';
import { UsageError } from './args.js';

// A CLI command is one table: its flags (name, value, meaning, default, environment variable),
// its environment, its examples, and what it runs. The table is both the parser's options and the
// command's `--help`, so the two cannot disagree.

export interface Flag {
  /** The flag without its dashes: `wallet-id`. */
  name: string;
  /** A switch (`--json`) or a flag with a value (`--wallet-id W`). */
  type: 'boolean' | 'string';
  /** What the value looks like in the help: `ID`, `FILE`, `on|off`. */
  value?: string;
  help: string;
  required?: boolean;
  /** Read from this environment variable when the flag is not given. */
  env?: string;
  /** The value used when neither the flag nor its variable is given, as the help shows it. */
  default?: string;
  /** A heading the help lists the flag under (a provider's flags, say). */
  group?: string;
}

/** An environment variable a command reads that has no flag. */
export interface EnvSetting {
  name: string;
  help: string;
  default?: string;
}

export type Values = Readonly<Record<string, string | boolean | undefined>>;

export interface Command {
  /** The words that name it: `channel set`. */
  name: string;
  /** One line for the list of commands. */
  summary: string;
  /** What it does, a few lines, for its own help. */
  description?: string;
  flags: readonly Flag[];
  environment?: readonly EnvSetting[];
  examples: readonly string[];
  run(values: Values): Promise<number>;
}

const HELP_FLAG: Flag = { name: 'help', type: 'boolean', help: 'print this help and exit' };

/**
 * The values of `args` by the command's flags: an unknown flag is refused with the closest known
 * one, a missing required flag by name; a flag not given takes its environment variable.
 */
export function parseFlags(command: Command, args: readonly string[], env: NodeJS.ProcessEnv = process.env): Values {
  const options = Object.fromEntries(command.flags.map((f) => [f.name, { type: f.type }]));
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({ args: [...args], options, allowPositionals: false, strict: true }).values;
  } catch (e) {
    throw new UsageError(argumentError(command, e as Error & { code?: string }));
  }
  for (const f of command.flags) {
    if (values[f.name] === undefined && f.env && env[f.env]) values[f.name] = env[f.env];
  }
  const missing = command.flags.filter((f) => f.required && (values[f.name] === undefined || values[f.name] === ''));
  if (missing.length > 0)
    throw new UsageError(
      `${missing.map((f) => `--${f.name}`).join(', ')} ${missing.length === 1 ? 'is' : 'are'} required (gateway ${command.name} --help)`,
    );
  return values;
}

function argumentError(command: Command, e: Error & { code?: string }): string {
  const hint = `(gateway ${command.name} --help)`;
  const unknown = /^Unknown option '(-{1,2}[^']*)'/.exec(e.message)?.[1];
  if (e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && unknown !== undefined) {
    const name = unknown.replace(/^-+/, '').split('=')[0] ?? '';
    const near = closest(
      name,
      command.flags.map((f) => f.name),
    );
    return `unknown option ${unknown} for ${command.name}${near ? `; did you mean --${near}?` : ''} ${hint}`;
  }
  if (e.code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') {
    const word = /'([^']*)'/.exec(e.message)?.[1];
    return `unexpected argument ${word ?? ''} for ${command.name}: every value follows its --flag ${hint}`;
  }
  return `${e.message.split('\n')[0] ?? 'bad arguments'} ${hint}`;
}

/** Whether the arguments ask for the command's help. */
export function asksForHelp(args: readonly string[]): boolean {
  return args.includes('--help') || args.includes('-h');
}

/** The known word nearest to `word` (a typo of it), or undefined when none is near. */
export function closest(word: string, known: readonly string[]): string | undefined {
  let best: { word: string; distance: number } | undefined;
  for (const k of known) {
    const d = k.startsWith(word) || word.startsWith(k) ? Math.abs(k.length - word.length) / 2 : distance(word, k);
    if (!best || d < best.distance) best = { word: k, distance: d };
  }
  if (!best) return undefined;
  return best.distance <= Math.max(2, Math.floor(word.length / 3)) ? best.word : undefined;
}

/** Levenshtein distance. */
function distance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      next[j] = Math.min(
        (row[j] ?? 0) + 1,
        (next[j - 1] ?? 0) + 1,
        (row[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    row = next;
  }
  return row[b.length] ?? 0;
}

/** A command's `--help`: what it does, its usage, its flags with defaults and variables, examples. */
export function helpText(command: Command): string {
  const lines = [`gateway ${command.name}: ${command.summary}`, '', `Usage: ${usageLine(command)}`];
  if (command.description) lines.push('', command.description);
  const flags = [...command.flags, HELP_FLAG];
  const groups = [...new Set(flags.map((f) => f.group ?? ''))];
  const width = Math.min(34, Math.max(...flags.map((f) => flagLabel(f).length)) + 2);
  for (const group of groups) {
    lines.push('', group ? `Options (${group}):` : 'Options:');
    for (const f of flags.filter((x) => (x.group ?? '') === group)) {
      const notes = [
        f.required && 'required',
        f.env && `env ${f.env}`,
        f.default !== undefined && `default ${f.default}`,
      ].filter(Boolean);
      const text = `${f.help}${notes.length ? ` (${notes.join('; ')})` : ''}`;
      const label = flagLabel(f);
      const body = wrap(text, HELP_WIDTH - width - 2).join(`\n${' '.repeat(width + 2)}`);
      lines.push(
        label.length + 2 > width ? `  ${label}\n${' '.repeat(width + 2)}${body}` : `  ${label.padEnd(width)}${body}`,
      );
    }
  }
  if (command.environment?.length) {
    lines.push('', 'Environment:');
    const w = Math.max(...command.environment.map((e) => e.name.length)) + 2;
    for (const e of command.environment) {
      const text = `${e.help}${e.default !== undefined ? ` (default ${e.default})` : ''}`;
      lines.push(`  ${e.name.padEnd(w)}${wrap(text, HELP_WIDTH - w - 2).join(`\n${' '.repeat(w + 2)}`)}`);
    }
  }
  lines.push('', command.examples.length === 1 ? 'Example:' : 'Examples:', ...command.examples.map((x) => `  ${x}`));
  return lines.join('\n');
}

/** The help's lines are wrapped to this many columns (an example is not: it is pasted whole). */
const HELP_WIDTH = 100;

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > Math.max(width, 30)) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return [...lines, line];
}

function flagLabel(f: Flag): string {
  return `${f.name === 'help' ? '-h, ' : ''}--${f.name}${f.type === 'string' ? ` ${f.value ?? 'VALUE'}` : ''}`;
}

function usageLine(command: Command): string {
  const required = command.flags.filter((f) => f.required).map((f) => `--${f.name} ${f.value ?? 'VALUE'}`);
  const more = command.flags.some((f) => !f.required) ? ' [options]' : '';
  return `gateway ${command.name}${required.length ? ` ${required.join(' ')}` : ''}${more}`;
}
