import { createHash, randomBytes } from 'node:crypto';
import { providerFeeEntry, type JournalEntry } from '../domain/ledger.js';
import {
  dayIn,
  exceptionKey,
  matchPaymentLine,
  matchRefundLine,
  StatementFormatError,
  type LineVerdict,
  type StatementLine,
} from '../domain/reconciliation.js';
import { PAYMENT_METHODS, type PaymentMethod } from '../domain/transaction.js';
import type { ChannelAccount, StatementSource } from '../ports/connector.js';
import type { MoneyException, ProviderStatement, StoredStatementLine } from '../ports/reconciliation.js';
import { AdminError } from './administration.js';
import { queryAtProvider, servingFor, type Serving } from './channels.js';
import type { GatewayContext } from './context.js';
import { dayOf } from './fee-plans.js';
import { exceptionOf, raiseException } from './money-exceptions.js';
import { applyPaymentState } from './provider-payments.js';
import { askRefundOutcome, recordRefundOutcome, refundCall } from './refund-channel.js';

// Importing a provider's statement of a day: fetched from the provider (or an operator's
// download), read in the provider's format, each line matched against the gateway's records
// (domain/reconciliation.ts), and what the gateway paid or refunded that day but no statement
// names. The statement is begun (`importing`, its raw file kept), its lines matched and written a
// part at a time (each part one short transaction, with the exceptions it raises, so that a large
// statement neither holds the database nor fills memory, and requests are served between parts),
// then finished in one unit with its provider-fee entries: once per account and day. An import
// that stopped halfway is taken over by the next import of the day. Then what the gateway had
// pending is asked of the provider and finished the usual way.

export interface ImportInput {
  wallet_id: string;
  method: string;
  /** The provider's day, `YYYY-MM-DD`. */
  date: string;
  /** An operator's download of the statement; fetched from the provider when absent. */
  file?: Uint8Array;
  by: string;
}

export type ImportResult =
  | {
      kind: 'imported' | 'imported_before';
      statement: ProviderStatement;
      /** New exceptions (imported: raised by this import). */
      exceptions: MoneyException[];
      /** Pending payments and refunds the statement named, asked of the provider; settled: how many ended. */
      asked: number;
      settled: number;
    }
  | { kind: 'not_ready'; reason: string };

/** The wallet's method's provider account and its statements. */
async function statementsOf(ctx: GatewayContext, wallet_id: string, method: string) {
  if (!(PAYMENT_METHODS as readonly string[]).includes(method))
    throw new AdminError(`--method must be one of ${PAYMENT_METHODS.join(', ')}`);
  const wallet = await ctx.store.accounts.findWallet(wallet_id);
  if (!wallet) throw new AdminError(`no wallet ${wallet_id}`);
  const serving = await servingFor(ctx, wallet_id, method as PaymentMethod);
  if (!serving || serving.connector.local)
    throw new AdminError(`wallet ${wallet_id} has no provider account for ${method} (gateway channel list)`);
  const source = serving.connector.statements;
  if (!source) throw new AdminError(`${serving.connector.provider} has no statements the gateway reads`);
  return { serving, source };
}

/** The wallets whose method the same provider account (its merchant id) serves: one statement covers them all. */
async function walletsOfAccount(ctx: GatewayContext, serving: Serving, merchant_id: string): Promise<string[]> {
  const out: string[] = [];
  for (const stored of await ctx.store.accounts.listChannelAccounts({ provider: serving.connector.provider })) {
    const account = await ctx.credentials.channelAccount(stored.wallet_id, stored.payment_method);
    if (account && serving.connector.merchantId(account) === merchant_id) out.push(stored.wallet_id);
  }
  return [...new Set(out)];
}

/** Lines matched and written per part: a part is one short transaction, and all a part holds in memory. */
const PART = 200;
/** An import still `importing` after this has stopped (a crash): the next import of its day takes it over. */
export const IMPORT_STALE_MS = 15 * 60_000;
/** Waits as long as a part kept this process busy (its CPU time): an import takes at most half of it from the requests. */
const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.min(ms, 1000)));

export async function importStatement(ctx: GatewayContext, input: ImportInput): Promise<ImportResult> {
  dayOf('date', input.date); // refuses what is not a date
  const { serving, source } = await statementsOf(ctx, input.wallet_id, input.method);
  const provider = serving.connector.provider;
  const merchant_id = serving.connector.merchantId(serving.account);
  const before = await ctx.store.reconciliation.findStatement(provider, merchant_id, input.date);
  if (before?.status === 'imported')
    return { kind: 'imported_before', statement: before, exceptions: [], asked: 0, settled: 0 };

  let raw: Uint8Array;
  if (input.file) raw = input.file;
  else {
    const fetched = await source.fetch(serving.account, input.date);
    if (fetched.kind === 'not_ready' || fetched.kind === 'unknown')
      return { kind: 'not_ready', reason: fetched.reason };
    raw = fetched.kind === 'ready' ? fetched.raw : new Uint8Array();
  }
  const started = ctx.now();
  const statement: ProviderStatement = {
    statement_id: `S${randomBytes(6).toString('hex')}`,
    provider,
    merchant_id,
    statement_date: input.date,
    wallet_id: input.wallet_id,
    payment_method: input.method,
    format: source.format,
    raw_sha256: createHash('sha256').update(raw).digest('hex'),
    line_count: 0,
    matched_count: 0,
    exception_count: 0,
    fees: '{}',
    source: input.file ? 'file' : 'provider',
    status: 'importing',
    imported_at: started,
    imported_by: input.by,
  };
  const begun = await ctx.store.reconciliation.beginStatement(statement, raw, started - IMPORT_STALE_MS);
  if (begun.kind === 'imported')
    return { kind: 'imported_before', statement: begun.statement, exceptions: [], asked: 0, settled: 0 };
  if (begun.kind === 'busy')
    return {
      kind: 'not_ready',
      reason: `being imported since ${new Date(begun.statement.imported_at).toISOString()} (${begun.statement.statement_id})`,
    };

  // The lines, a part at a time, each part written before the next is matched.
  const exceptions: MoneyException[] = [];
  const asked: StoredStatementLine[] = [];
  const feesByWallet = new Map<string, number>();
  /** What earlier statements (or this one's day before) lacked and this one has: resolved as it finishes. */
  const found = new Set<string>();
  let finished: boolean;
  try {
    let since = process.cpuUsage();
    for await (const lines of partsOf(source, raw, serving.account)) {
      await importPart(lines);
      // The requests waiting meanwhile are served between parts, for as long as the part took of
      // this process (on PostgreSQL most of a part is the database's, elsewhere).
      const used = process.cpuUsage(since);
      await pause((used.user + used.system) / 1000);
      since = process.cpuUsage();
    }
    finished = await finishImport();
  } catch (e) {
    // Not the format after all (its totals, at the end), or the database failed: nothing of it
    // stays (a statement that finished is not `importing`, and is not discarded).
    await ctx.store.reconciliation.discardStatement(statement.statement_id);
    throw e;
  }
  if (!finished) {
    // Taken over meanwhile (this import was thought stopped): the other one's is the statement.
    const other = await ctx.store.reconciliation.findStatement(provider, merchant_id, input.date);
    return { kind: 'not_ready', reason: `imported meanwhile by another import (${other?.statement_id ?? '?'})` };
  }
  const after = await finishPending(ctx, serving, asked, statement);
  return { kind: 'imported', statement, exceptions, ...after };

  async function importPart(lines: StatementLine[]) {
    const part = await matchLines(ctx, lines, {
      statement_id: statement.statement_id,
      provider,
      wallet_id: input.wallet_id,
      now: started,
    });
    await ctx.store.reconciliation.saveStatementPart(statement.statement_id, part.lines, part.exceptions);
    for (const k of part.named) found.add(exceptionKey('missing_payment', k)).add(exceptionKey('missing_refund', k));
    statement.line_count += lines.length;
    statement.matched_count += part.lines.filter((l) => l.verdict !== 'exception').length;
    exceptions.push(...part.exceptions);
    asked.push(...part.asked);
    for (const [key, fee] of part.feesByWallet) feesByWallet.set(key, (feesByWallet.get(key) ?? 0) + fee);
  }

  /** The day's missing lines, the fees, and the statement whole, resolving what it found; false when taken over. */
  async function finishImport(): Promise<boolean> {
    // What the gateway paid or refunded in the provider's day that no statement names (this one's
    // lines are written: they name theirs).
    const { from, to } = dayIn(input.date, source.timeZone);
    const wallets = await walletsOfAccount(ctx, serving, merchant_id);
    const missing = (await ctx.store.reconciliation.unmatched(provider, wallets, from, to))
      // A refund is not missing from a statement that lists none.
      .filter((r) => source.listsRefunds || !r.refund_id)
      .map((r) =>
        exceptionOf({
          kind: r.refund_id ? 'missing_refund' : 'missing_payment',
          subject: r.refund_id ?? r.out_trade_no,
          source: 'statement',
          detail: `${r.refund_id ? `refund ${r.refund_id}` : `payment ${r.out_trade_no}`} of ${r.amount} ${r.currency} is not in ${provider}'s statement of ${input.date}`,
          evidence: { gateway: r, statement: { statement_id: statement.statement_id, statement_date: input.date } },
          provider,
          wallet_id: r.wallet_id,
          order_id: r.order_id,
          out_trade_no: r.out_trade_no,
          refund_id: r.refund_id,
          statement_id: statement.statement_id,
          now: started,
        }),
      );
    for (let i = 0; i < missing.length; i += PART)
      await ctx.store.reconciliation.saveStatementPart(statement.statement_id, [], missing.slice(i, i + PART));
    exceptions.push(...missing);

    const fees = new Map<string, number>();
    const entries: JournalEntry[] = [];
    for (const [key, fee] of feesByWallet) {
      if (fee === 0) continue;
      const [wallet_id, currency] = key.split('\u0000');
      fees.set(currency, (fees.get(currency) ?? 0) + fee);
      entries.push(
        providerFeeEntry({
          statement_id: statement.statement_id,
          provider,
          payment_method: input.method,
          wallet_id,
          currency,
          fee,
          created_at: started,
        }),
      );
    }
    statement.exception_count = exceptions.length;
    statement.fees = JSON.stringify(Object.fromEntries(fees));
    statement.status = 'imported';
    statement.imported_at = ctx.now();
    return ctx.store.reconciliation.finishStatement(statement, entries, {
      keys: found,
      by: 'reconciliation',
      note: `found in ${provider}'s statement of ${input.date} (${statement.statement_id})`,
    });
  }
}

/** The statement's lines a part at a time, as its reader gives them; a format error is the operator's. */
async function* partsOf(
  source: StatementSource,
  raw: Uint8Array,
  account: ChannelAccount,
): AsyncGenerator<StatementLine[]> {
  if (raw.length === 0) return;
  let part: StatementLine[] = [];
  try {
    for (const line of source.read(raw, account)) {
      part.push(line);
      if (part.length < PART) continue;
      yield part;
      part = [];
    }
  } catch (e) {
    if (e instanceof StatementFormatError) throw new AdminError(`not a ${source.format} statement: ${e.message}`);
    throw e;
  }
  if (part.length > 0) yield part;
}

interface Matched {
  lines: StoredStatementLine[];
  exceptions: MoneyException[];
  /** Lines whose gateway record was pending: asked of the provider once the statement is saved. */
  asked: StoredStatementLine[];
  /** Every payment's out_trade_no and refund's id a line names. */
  named: Set<string>;
  /** The lines' fees per wallet and currency (`wallet\0currency`). */
  feesByWallet: Map<string, number>;
}

async function matchLines(
  ctx: GatewayContext,
  lines: readonly StatementLine[],
  s: { statement_id: string; provider: string; wallet_id: string; now: number },
): Promise<Matched> {
  const payments = await ctx.store.reconciliation.knownPayments(
    lines.filter((l) => l.kind === 'payment').map((l) => l.out_trade_no),
  );
  const refunds = await ctx.store.reconciliation.knownRefunds(
    lines.flatMap((l) => (l.kind === 'refund' && l.refund_id ? [l.refund_id] : [])),
  );
  const out: Matched = { lines: [], exceptions: [], asked: [], named: new Set(), feesByWallet: new Map() };
  for (const line of lines) {
    const payment = line.kind === 'payment' ? payments.get(line.out_trade_no) : undefined;
    const refund = line.kind === 'refund' && line.refund_id ? refunds.get(line.refund_id) : undefined;
    const verdict: LineVerdict =
      line.kind === 'payment' ? matchPaymentLine(line, payment) : matchRefundLine(line, refund);
    const known = payment ?? refund;
    const wallet_id = known?.wallet_id ?? s.wallet_id;
    const stored: StoredStatementLine = {
      ...line,
      statement_id: s.statement_id,
      verdict: verdict.kind === 'ask' ? 'asked' : verdict.kind,
      order_id: known?.order_id ?? null,
      exception_id: null,
    };
    if (verdict.kind === 'exception') {
      const e = exceptionOf({
        kind: verdict.exception,
        subject:
          line.kind === 'refund' ? (line.refund_id ?? `${line.provider_ref}#${line.line_no}`) : line.out_trade_no,
        source: 'statement',
        detail: verdict.detail,
        evidence: { line, gateway: known ?? null },
        provider: s.provider,
        wallet_id: known?.wallet_id ?? null,
        order_id: known?.order_id ?? null,
        out_trade_no: line.out_trade_no,
        refund_id: line.refund_id,
        statement_id: s.statement_id,
        line_no: line.line_no,
        now: s.now,
      });
      out.exceptions.push(e);
      stored.exception_id = e.exception_id;
    }
    if (verdict.kind === 'ask') out.asked.push(stored);
    out.named.add(line.kind === 'refund' && line.refund_id ? line.refund_id : line.out_trade_no);
    const key = `${wallet_id}\u0000${line.currency}`;
    out.feesByWallet.set(key, (out.feesByWallet.get(key) ?? 0) + line.fee);
    out.lines.push(stored);
  }
  return out;
}

/**
 * The statement's lines the gateway had pending: a payment is asked of the provider and settled
 * the usual way (recorded as an exception resolved by the statement, or left open when the
 * provider does not confirm it); a refund is asked about and recorded as the recovery would.
 */
async function finishPending(
  ctx: GatewayContext,
  serving: Serving,
  asked: StoredStatementLine[],
  statement: ProviderStatement,
): Promise<{ asked: number; settled: number }> {
  let settled = 0;
  const where = `${statement.provider}'s statement of ${statement.statement_date} (${statement.statement_id}) line`;
  for (const line of asked) {
    if (line.kind === 'refund') {
      const order = line.order_id ? await ctx.store.transactions.find(line.order_id) : undefined;
      const refund =
        order && (await ctx.store.refunds.listByOrder(order.order_id)).find((r) => r.refund_id === line.refund_id);
      if (!refund || !order || refund.refund_status !== 'pending') continue;
      const call = await refundCall(ctx, order, refund);
      if (call.ok && (await recordRefundOutcome(ctx, refund.refund_id, await askRefundOutcome(call), ctx.log)))
        settled++;
      continue;
    }
    const found = await ctx.store.transactions.findPayment(line.out_trade_no, 'committed');
    if (!found) continue;
    const { payment } = found;
    const state = await queryAtProvider(serving, payment);
    const verdict = await applyPaymentState(ctx, payment, state, ctx.log);
    const paid = verdict === 'paid';
    if (paid) settled++;
    const raised = await raiseException(ctx.store, {
      kind: 'pending_payment',
      subject: line.out_trade_no,
      source: 'statement',
      detail: paid
        ? `pending in the gateway, paid in ${where} ${line.line_no}: settled after asking the provider`
        : `pending in the gateway, paid in ${where} ${line.line_no}; the provider, asked, said ${state.kind}`,
      evidence: { line, provider_answer: state },
      provider: statement.provider,
      wallet_id: found.order?.wallet_id ?? null,
      order_id: payment.order_id,
      out_trade_no: line.out_trade_no,
      statement_id: statement.statement_id,
      line_no: line.line_no,
      now: ctx.now(),
    });
    if (paid)
      await ctx.store.reconciliation.resolveException(
        raised.exception.exception_id,
        'auto',
        'reconciliation',
        `settled from ${where} ${line.line_no} after the provider confirmed it`,
        ctx.now(),
      );
  }
  return { asked: asked.length, settled };
}
