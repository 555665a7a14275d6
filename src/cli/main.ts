import {
  keyRotate,
  merchantCreate,
  migrate,
  ratesSet,
  userDisable,
  userEnable,
  walletCreate,
  walletDisable,
  walletEnable,
  walletUpdate,
} from './admin-commands.js';
import { AdminError } from './admin.js';
import { UsageError } from './args.js';
import { backup } from './backup.js';
import { balance, ledgerAdjust, limitsList, limitsSet, settlementRun, settlementSet, statement } from './books.js';
import { channelList, channelRemove, channelSet, channelTest } from './channels.js';
import { asksForHelp, closest, helpText, parseFlags, type Command } from './command.js';
import { merchantUserCreate, operatorCreate } from './console-users.js';
import { feesList, feesSet, ledgerCheck } from './ledger.js';
import { notificationsList, notificationsResend } from './notifications.js';
import {
  bankAccountAdd,
  bankAccountList,
  bankAccountVerify,
  payoutApprove,
  payoutBatch,
  payoutCancel,
  payoutFile,
  payoutList,
  payoutAuto,
  payoutPaid,
  payoutRequest,
  payoutReturned,
} from './payouts.js';
import { exceptionsList, exceptionsResolve, statementsImport } from './reconciliation.js';
import { serve } from './serve.js';

/** Every command of `gateway`, in the order the usage lists them. */
export const COMMANDS: readonly Command[] = [
  serve,
  migrate,
  backup,
  merchantCreate,
  walletCreate,
  walletUpdate,
  walletDisable,
  walletEnable,
  keyRotate,
  userDisable,
  userEnable,
  ratesSet,
  channelSet,
  channelList,
  channelRemove,
  channelTest,
  notificationsList,
  notificationsResend,
  ledgerCheck,
  ledgerAdjust,
  feesSet,
  feesList,
  limitsSet,
  limitsList,
  settlementSet,
  settlementRun,
  balance,
  statement,
  bankAccountAdd,
  bankAccountVerify,
  bankAccountList,
  payoutRequest,
  payoutApprove,
  payoutCancel,
  payoutBatch,
  payoutFile,
  payoutPaid,
  payoutReturned,
  payoutList,
  payoutAuto,
  statementsImport,
  exceptionsList,
  exceptionsResolve,
  operatorCreate,
  merchantUserCreate,
];

function usage(commands: readonly Command[] = COMMANDS): string {
  const width = Math.max(...commands.map((c) => c.name.length)) + 2;
  return [
    'Usage: gateway <command> [options]',
    '',
    'Commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}${c.summary}`),
    '',
    'Every command takes --database (or DATABASE_URL) and answers --help with its flags, their defaults and',
    'environment variables, and an example: gateway channel set --help, or gateway help channel set.',
  ].join('\n');
}

/** The command the words name, the group they name (`wallet`), or nothing. */
function lookup(words: readonly string[]): { command?: Command; group?: Command[]; used: number } {
  const two = COMMANDS.find((c) => c.name === `${words[0]} ${words[1]}`);
  if (two) return { command: two, used: 2 };
  const one = COMMANDS.find((c) => c.name === words[0]);
  if (one) return { command: one, used: 1 };
  const group = COMMANDS.filter((c) => c.name.startsWith(`${words[0]} `));
  return group.length > 0 ? { group, used: 1 } : { used: 0 };
}

function unknownCommand(words: readonly string[]): UsageError {
  const { group } = lookup(words);
  if (group) {
    const subs = group.map((c) => c.name.split(' ')[1] ?? '');
    const sub = words[1];
    if (sub === undefined || sub.startsWith('-'))
      return new UsageError(`${words[0]} needs a subcommand: ${subs.join(', ')} (gateway help ${words[0]})`);
    const near = closest(sub, subs);
    return new UsageError(
      `unknown command ${words[0]} ${sub}${near ? `; did you mean ${words[0]} ${near}?` : `; ${words[0]} has ${subs.join(', ')}`} (gateway help ${words[0]})`,
    );
  }
  const names = [...new Set(COMMANDS.map((c) => c.name.split(' ')[0] ?? ''))];
  const near = closest(words[0] ?? '', names);
  return new UsageError(`unknown command ${words[0]}${near ? `; did you mean ${near}?` : ''} (gateway help)`);
}

/** `gateway help [command]`: the usage, a group's commands, or one command's help. */
function help(words: readonly string[]): number {
  if (words.length === 0) {
    console.log(usage());
    return 0;
  }
  const found = lookup(words);
  if (found.command && found.used === words.length) console.log(helpText(found.command));
  else if (found.group && words.length === 1) console.log(usage(found.group));
  else throw unknownCommand(words);
  return 0;
}

/** Runs one CLI command; returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  try {
    const [first] = argv;
    if (first === undefined) {
      console.log(usage());
      return 2;
    }
    if (first === 'help') return help(argv.slice(1));
    if (first === '--help' || first === '-h') return help([]);
    const found = lookup(argv);
    if (!found.command) {
      // `gateway wallet --help`: the group's commands.
      if (found.group && asksForHelp(argv.slice(1, 2))) return help([first]);
      throw unknownCommand(argv);
    }
    const args = argv.slice(found.used);
    if (asksForHelp(args)) {
      console.log(helpText(found.command));
      return 0;
    }
    return await found.command.run(parseFlags(found.command, args));
  } catch (e) {
    if (e instanceof UsageError || e instanceof AdminError) {
      console.error(`gateway: ${e.message}`);
      return 2;
    }
    console.error(`gateway: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  }
}
