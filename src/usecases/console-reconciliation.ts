import { permits, type ConsoleUser } from '../domain/console.js';
import { EXCEPTION_KIND_NAMES, type ExceptionKind } from '../domain/reconciliation.js';
import type {
  ExceptionStatus,
  MoneyException,
  ProviderStatement,
  StatementDay,
  StoredStatementLine,
} from '../ports/reconciliation.js';
import { audit, ConsoleError } from './console-auth.js';
import { asInputError } from './console-books.js';
import type { GatewayContext } from './context.js';
import {
  adjustForException,
  refundExceptionPayment,
  settleExceptionPayment,
  type ExceptionActionResult,
} from './exception-actions.js';
import { resolveWithNote } from './money-exceptions.js';

// Reconciliation in the console, for operators only: the queue of money exceptions (filters,
// counts, one exception with its evidence, resolving it with a note) and the statements imported
// (per account and day, with their lines and what each matched). A merchant's user gets "not
// found", as for any operator's page; every change is audited.

/** Lines on one page of a statement. */
export const STATEMENT_LINES_PAGE = 200;

const operatorOnly = (user: ConsoleUser, action: 'view' | 'configure') => {
  if (user.kind !== 'operator') throw new ConsoleError('error.not_found');
  if (!permits(user, action)) throw new ConsoleError('error.forbidden');
};

export interface ExceptionQueue {
  exceptions: MoneyException[];
  counts: Array<{ kind: ExceptionKind; count: number }>;
  status: ExceptionStatus | 'all';
  kind: ExceptionKind | 'all';
}

export async function exceptionQueue(
  ctx: GatewayContext,
  user: ConsoleUser,
  filter: { status?: string; kind?: string },
): Promise<ExceptionQueue> {
  operatorOnly(user, 'view');
  const status = filter.status === 'resolved' || filter.status === 'all' ? filter.status : 'open';
  const kind = (EXCEPTION_KIND_NAMES as string[]).includes(filter.kind ?? '') ? (filter.kind as ExceptionKind) : 'all';
  const [exceptions, counts] = await Promise.all([
    ctx.store.reconciliation.listExceptions({
      ...(status !== 'all' && { status }),
      ...(kind !== 'all' && { kind }),
      limit: 500,
    }),
    ctx.store.reconciliation.openCounts(),
  ]);
  return { exceptions, counts, status, kind };
}

/** Open exceptions, and how many of them are urgent: the dashboard's card (operators). */
export async function exceptionCounts(ctx: GatewayContext, user: ConsoleUser) {
  if (user.kind !== 'operator') return undefined;
  const counts = await ctx.store.reconciliation.openCounts();
  const urgent = counts
    .filter((c) => c.kind === 'refund_status_mismatch' || c.kind === 'unknown_refund')
    .reduce((n, c) => n + c.count, 0);
  return { open: counts.reduce((n, c) => n + c.count, 0), urgent };
}

export async function exceptionDetail(ctx: GatewayContext, user: ConsoleUser, exception_id: string) {
  operatorOnly(user, 'view');
  const exception = await ctx.store.reconciliation.findException(exception_id);
  if (!exception) throw new ConsoleError('error.not_found');
  return { exception, canResolve: permits(user, 'configure') };
}

export async function consoleResolveException(
  ctx: GatewayContext,
  { user, ip }: { user: ConsoleUser; ip: string },
  exception_id: string,
  note: string,
): Promise<MoneyException> {
  operatorOnly(user, 'configure');
  const done = await asInputError(() =>
    resolveWithNote(ctx.store, { exception_id, note, by: `console:${user.email}`, now: ctx.now() }),
  );
  await audit(
    ctx,
    { kind: 'user', user, ip },
    { action: 'exception.resolve', object: exception_id, after: JSON.stringify({ note: done.note }) },
  );
  return done;
}

/** An action on an exception (usecases/exception-actions.ts): refund its payment, settle it, or adjust a wallet. */
export async function consoleExceptionAction(
  ctx: GatewayContext,
  { user, ip }: { user: ConsoleUser; ip: string },
  exception_id: string,
  action: 'refund' | 'settle' | 'adjust',
  form: { wallet_id?: string; amount?: string; reason?: string },
): Promise<ExceptionActionResult> {
  operatorOnly(user, 'configure');
  const by = `console:${user.email}`;
  const result = await asInputError(async (): Promise<ExceptionActionResult> =>
    action === 'refund'
      ? refundExceptionPayment(ctx, exception_id, by)
      : action === 'settle'
        ? settleExceptionPayment(ctx, exception_id, by)
        : {
            done: true,
            exception: await adjustForException(ctx, {
              exception_id,
              wallet_id: form.wallet_id ?? '',
              amount: form.amount ?? '',
              reason: form.reason ?? '',
              by,
            }),
          },
  );
  await audit(
    ctx,
    { kind: 'user', user, ip },
    {
      action: `exception.${action}`,
      object: exception_id,
      after: JSON.stringify(result.done ? { note: result.exception.note } : { pending: result.reason }),
    },
  );
  return result;
}

export async function statementsOverview(
  ctx: GatewayContext,
  user: ConsoleUser,
): Promise<{ statements: ProviderStatement[]; waiting: StatementDay[] }> {
  operatorOnly(user, 'view');
  const [statements, waiting] = await Promise.all([
    ctx.store.reconciliation.listStatements({ limit: 200 }),
    ctx.store.reconciliation.listDays({ imported: false, limit: 200 }),
  ]);
  return { statements, waiting };
}

export async function statementDetail(
  ctx: GatewayContext,
  user: ConsoleUser,
  statement_id: string,
  after = 0,
): Promise<{ statement: ProviderStatement; lines: StoredStatementLine[]; next?: number }> {
  operatorOnly(user, 'view');
  const found = await ctx.store.reconciliation.statementById(statement_id);
  if (!found) throw new ConsoleError('error.not_found');
  const lines = await ctx.store.reconciliation.statementLines(statement_id, STATEMENT_LINES_PAGE + 1, after);
  const more = lines.length > STATEMENT_LINES_PAGE;
  const shown = lines.slice(0, STATEMENT_LINES_PAGE);
  return { statement: found, lines: shown, ...(more && { next: shown[shown.length - 1].line_no }) };
}
