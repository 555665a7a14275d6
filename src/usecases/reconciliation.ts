import { createHash, randomBytes } from 'node:crypto';
import { providerFeeEntry, type JournalEntry } from '../domain/ledger.js';
import {
  dayIn,
  exceptionKey,
  matchPaymentLine,
  matchRefundLine,
  StatementFormatError,
  type LineVerdict,
  type ParsedStatement,
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
// names; the statement, its lines, its exceptions and its provider-fee entries written in one unit,
// once per account and day. Then what the gateway had pending is asked of the provider and finished
// the usual way, and exceptions a later statement answers are resolved.

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

export async function importStatement(ctx: GatewayContext, input: ImportInput): Promise<ImportResult> {
  dayOf('date', input.date); // refuses what is not a date
  const { serving, source } = await statementsOf(ctx, input.wallet_id, input.method);
  const provider = serving.connector.provider;
  const merchant_id = serving.connector.merchantId(serving.account);
  const before = await ctx.store.reconciliation.findStatement(provider, merchant_id, input.date);
  if (before) return { kind: 'imported_before', statement: before, exceptions: [], asked: 0, settled: 0 };

  let raw: Uint8Array;
  if (input.file) raw = input.file;
  else {
    const fetched = await source.fetch(serving.account, input.date);
    if (fetched.kind === 'not_ready' || fetched.kind === 'unknown')
      return { kind: 'not_ready', reason: fetched.reason };
    raw = fetched.kind === 'ready' ? fetched.raw : new Uint8Array();
  }
  const parsed = readStatement(source, raw, serving.account);
  const now = ctx.now();
  const statement_id = `S${randomBytes(6).toString('hex')}`;
  const { from, to } = dayIn(input.date, source.timeZone);
  const wallets = await walletsOfAccount(ctx, serving, merchant_id);
  const matched = await matchLines(ctx, parsed, { statement_id, provider, wallet_id: input.wallet_id, now });
  const missing = (await ctx.store.reconciliation.unmatched(provider, wallets, from, to)).filter(
    // Named by this very statement: not missing; nor a refund when the provider's statement lists none.
    (r) => !matched.named.has(r.refund_id ?? r.out_trade_no) && (source.listsRefunds || !r.refund_id),
  );
  const exceptions = [
    ...matched.exceptions,
    ...missing.map((r) =>
      exceptionOf({
        kind: r.refund_id ? 'missing_refund' : 'missing_payment',
        subject: r.refund_id ?? r.out_trade_no,
        source: 'statement',
        detail: `${r.refund_id ? `refund ${r.refund_id}` : `payment ${r.out_trade_no}`} of ${r.amount} ${r.currency} is not in ${provider}'s statement of ${input.date}`,
        evidence: { gateway: r, statement: { statement_id, statement_date: input.date } },
        provider,
        wallet_id: r.wallet_id,
        order_id: r.order_id,
        out_trade_no: r.out_trade_no,
        refund_id: r.refund_id,
        statement_id,
        now,
      }),
    ),
  ];
  const fees = new Map<string, number>();
  const entries: JournalEntry[] = [];
  for (const [key, fee] of matched.feesByWallet) {
    if (fee === 0) continue;
    const [wallet_id, currency] = key.split('\u0000');
    fees.set(currency, (fees.get(currency) ?? 0) + fee);
    entries.push(
      providerFeeEntry({
        statement_id,
        provider,
        payment_method: input.method,
        wallet_id,
        currency,
        fee,
        created_at: now,
      }),
    );
  }
  const statement: ProviderStatement = {
    statement_id,
    provider,
    merchant_id,
    statement_date: input.date,
    wallet_id: input.wallet_id,
    payment_method: input.method,
    format: source.format,
    raw_sha256: createHash('sha256').update(raw).digest('hex'),
    line_count: parsed.lines.length,
    matched_count: matched.lines.filter((l) => l.verdict !== 'exception').length,
    exception_count: exceptions.length,
    fees: JSON.stringify(Object.fromEntries(fees)),
    source: input.file ? 'file' : 'provider',
    imported_at: now,
    imported_by: input.by,
  };
  const saved = await ctx.store.reconciliation.saveStatement(statement, raw, matched.lines, exceptions, entries);
  if (!saved.saved)
    return { kind: 'imported_before', statement: saved.statement, exceptions: [], asked: 0, settled: 0 };
  // What earlier statements (or this one's day before) lacked and this one has.
  await ctx.store.reconciliation.resolveKeys(
    [...matched.named].flatMap((s) => [exceptionKey('missing_payment', s), exceptionKey('missing_refund', s)]),
    'reconciliation',
    `found in ${provider}'s statement of ${input.date} (${statement_id})`,
    now,
  );
  const finished = await finishPending(ctx, serving, matched.asked, statement);
  return { kind: 'imported', statement, exceptions, ...finished };
}

function readStatement(source: StatementSource, raw: Uint8Array, account: ChannelAccount): ParsedStatement {
  if (raw.length === 0) return { lines: [], summary: null };
  try {
    return source.read(raw, account);
  } catch (e) {
    if (e instanceof StatementFormatError) throw new AdminError(`not a ${source.format} statement: ${e.message}`);
    throw e;
  }
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
  parsed: ParsedStatement,
  s: { statement_id: string; provider: string; wallet_id: string; now: number },
): Promise<Matched> {
  const payments = await ctx.store.reconciliation.knownPayments(
    parsed.lines.filter((l) => l.kind === 'payment').map((l) => l.out_trade_no),
  );
  const refunds = await ctx.store.reconciliation.knownRefunds(
    parsed.lines.flatMap((l) => (l.kind === 'refund' && l.refund_id ? [l.refund_id] : [])),
  );
  const out: Matched = { lines: [], exceptions: [], asked: [], named: new Set(), feesByWallet: new Map() };
  for (const line of parsed.lines) {
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
