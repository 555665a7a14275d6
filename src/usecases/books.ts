import { randomBytes } from 'node:crypto';
import { fail } from '../domain/errors.js';
import { DAY_MS, DEFAULT_SETTLEMENT_DELAY_DAYS } from '../domain/ledger-settlement.js';
import { adjustmentEntry, type WalletBalances } from '../domain/ledger.js';
import { exponentOf, formatAmount, parseAmount } from '../domain/money.js';
import { PAYMENT_METHODS, type PaymentMethod } from '../domain/transaction.js';
import type { Wallet } from '../domain/account.js';
import type { SettlementRun, Statement, WalletLimits } from '../ports/ledger.js';
import type { Log } from '../ports/log.js';
import type { Store } from '../ports/store.js';
import type { CredentialCache } from './credentials.js';
import { amountOfFlag, dayOf } from './fee-plans.js';
import { AdminError } from './administration.js';
import { runAutoPayouts } from './auto-payouts.js';

// A wallet's books as its operator runs them: the settlement delay and the run that makes due
// money available (domain/ledger-settlement.ts), limits on what a create may ask (454), and the
// balances and statement a merchant reads.

async function walletOf(store: Store, wallet_id: string): Promise<Wallet> {
  const wallet = await store.accounts.findWallet(wallet_id);
  if (!wallet) throw new AdminError(`no wallet ${wallet_id}`);
  return wallet;
}

export async function setSettlementDelay(
  store: Store,
  input: { wallet_id: string; delay_days: string; by: string; now: number },
): Promise<{ wallet_id: string; delay_days: number }> {
  const wallet = await walletOf(store, input.wallet_id);
  if (!/^\d{1,3}$/.test(input.delay_days) || Number(input.delay_days) > 365)
    throw new AdminError('--delay-days must be a whole number of days from 0 to 365');
  const delay_days = Number(input.delay_days);
  await store.ledger.setSettlementDelay(wallet.wallet_id, delay_days, input.by, input.now);
  return { wallet_id: wallet.wallet_id, delay_days };
}

/** The wallet's settlement delay in days: its own, or the default. */
export async function settlementDelayOf(store: Store, wallet_id: string): Promise<number> {
  return (await store.ledger.settlementDelay(wallet_id)) ?? DEFAULT_SETTLEMENT_DELAY_DAYS;
}

/** Makes everything due in every wallet available now: what the job does on its schedule. */
export function runSettlement(store: Store, now: number): Promise<SettlementRun> {
  return store.ledger.runSettlement(now, DEFAULT_SETTLEMENT_DELAY_DAYS);
}

/** How often every instance runs the settlement (a run with nothing due reads the pending balances only). */
export const SETTLEMENT_EVERY_MS = 60_000;

/**
 * The settlement on a timer, on every instance, then the day's automatic payouts (usecases/payouts.ts);
 * a run still going is not joined by another.
 */
export function startSettlement(
  ctx: { store: Store; now(): number },
  log: Log,
  everyMs = SETTLEMENT_EVERY_MS,
): () => Promise<void> {
  let running: Promise<unknown> | null = null;
  const round = () => {
    if (running) return;
    running = runSettlement(ctx.store, ctx.now())
      .then(async (run) => {
        for (const m of run.moves) log.info(m, 'settlement: pending funds now available');
        for (const o of await runAutoPayouts(ctx.store, ctx.now()))
          if ('payout' in o)
            log.info(
              { wallet_id: o.wallet_id, payout_id: o.payout.payout_id, amount: o.payout.amount, fee: o.payout.fee },
              'automatic payout requested: an operator approves it',
            );
          else log.warn({ wallet_id: o.wallet_id, reason: o.skipped }, 'automatic payout skipped for the day');
      })
      .catch((e: unknown) => log.error({ err: e }, 'settlement: run failed; tried again at the next one'))
      .finally(() => (running = null));
  };
  const timer = setInterval(round, everyMs).unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}

export interface LimitsInput {
  wallet_id: string;
  /** One method, or every method when absent. */
  method?: string;
  /** Decimal amounts in the wallet's currency; absent: no such limit. */
  single_min?: string;
  single_max?: string;
  daily_max?: string;
  by: string;
  now: number;
}

/** Sets the wallet's limits for one method or all (replacing what was set for it). */
export async function setLimits(store: Store, input: LimitsInput): Promise<WalletLimits> {
  const wallet = await walletOf(store, input.wallet_id);
  if (input.method !== undefined && !(PAYMENT_METHODS as readonly string[]).includes(input.method))
    throw new AdminError(`--method must be one of ${PAYMENT_METHODS.join(', ')}`);
  const amount = amountOfFlag(wallet.currency);
  const limits: WalletLimits = {
    wallet_id: wallet.wallet_id,
    payment_method: input.method ?? '',
    single_min: amount('single-min', input.single_min),
    single_max: amount('single-max', input.single_max),
    daily_max: amount('daily-max', input.daily_max),
    updated_at: input.now,
    updated_by: input.by,
  };
  if (limits.single_min !== null && limits.single_max !== null && limits.single_min > limits.single_max)
    throw new AdminError('--single-min is above --single-max');
  await store.ledger.setLimits(limits);
  // Creates read limits through the credentials' cache: this forgets them here and on the other instances.
  await store.accounts.noteLocalChange();
  return limits;
}

/** The UTC day's start of `now`: the daily total counts what was paid since. */
export const dayStart = (now: number) => Math.floor(now / DAY_MS) * DAY_MS;

/**
 * Refuses (454) a create beyond a limit of its wallet, for every method or its own: below the
 * single minimum, above the single maximum, or past the daily total with what was paid today (UTC).
 */
export async function requireWithinLimits(
  ctx: { store: Store; credentials: CredentialCache },
  wallet: Pick<Wallet, 'wallet_id' | 'currency'>,
  payment_method: PaymentMethod,
  amount: number,
  now: number,
): Promise<void> {
  const refusal = await limitRefusal(
    ctx,
    await ctx.credentials.limits(wallet.wallet_id),
    wallet,
    payment_method,
    amount,
    now,
  );
  if (refusal === undefined) return;
  // A refusal is never made on what was kept: the limits read again (one may have been raised).
  const again = await limitRefusal(
    ctx,
    await ctx.credentials.limits(wallet.wallet_id, true),
    wallet,
    payment_method,
    amount,
    now,
  );
  if (again !== undefined) fail(454, again);
}

/** What a create of `amount` passes of the wallet's limits, or undefined. */
async function limitRefusal(
  ctx: { store: Store },
  limits: readonly WalletLimits[],
  wallet: Pick<Wallet, 'wallet_id' | 'currency'>,
  payment_method: PaymentMethod,
  amount: number,
  now: number,
): Promise<string | undefined> {
  const rows = limits.filter((l) => l.payment_method === '' || l.payment_method === payment_method);
  const exponent = exponentOf(wallet.currency);
  const money = (m: number) => `${formatAmount(m, exponent)} ${wallet.currency}`;
  for (const l of rows) {
    const of = `wallet ${wallet.wallet_id}${l.payment_method ? ` for ${l.payment_method}` : ''}`;
    if (l.single_min !== null && amount < l.single_min)
      return `amount ${money(amount)} is below the single payment minimum of ${of} (${money(l.single_min)})`;
    if (l.single_max !== null && amount > l.single_max)
      return `amount ${money(amount)} is above the single payment maximum of ${of} (${money(l.single_max)})`;
    if (l.daily_max !== null) {
      const paid = await ctx.store.ledger.paidSince(wallet.wallet_id, l.payment_method || null, dayStart(now));
      if (paid + amount > l.daily_max)
        return `amount ${money(amount)} would pass the daily total of ${of} (${money(l.daily_max)}; ${money(paid)} paid today, UTC)`;
    }
  }
  return undefined;
}

/** The wallet's balances in its currency. */
export async function walletBalance(store: Store, wallet_id: string): Promise<WalletBalances> {
  const wallet = await walletOf(store, wallet_id);
  return store.ledger.walletBalances(wallet.wallet_id, wallet.currency);
}

/** How many movements a statement reads at a time. */
const STATEMENT_PAGE = 5_000;

/**
 * The wallet's statement from the start of `from` to the end of `to` (dates, UTC, both included),
 * every movement: read a page at a time.
 */
export async function walletStatement(store: Store, wallet_id: string, from: string, to: string): Promise<Statement> {
  const wallet = await walletOf(store, wallet_id);
  const start = dayOf('from', from);
  const end = dayOf('to', to) + DAY_MS;
  if (end <= start) throw new AdminError('--to is before --from');
  return wholeStatement(store, wallet, start, end);
}

/** Every page of a statement, as one. */
export async function wholeStatement(
  store: Store,
  wallet: Pick<Wallet, 'wallet_id' | 'currency'>,
  from: number,
  to: number,
): Promise<Statement> {
  let page = await store.ledger.statement(wallet.wallet_id, wallet.currency, from, to, { limit: STATEMENT_PAGE });
  const lines = [...page.lines];
  while (page.next) {
    page = await store.ledger.statement(wallet.wallet_id, wallet.currency, from, to, {
      limit: STATEMENT_PAGE,
      after: page.next,
    });
    lines.push(...page.lines);
  }
  const { next: _next, ...whole } = page;
  return { ...whole, lines };
}

/** An operator's adjustment of a wallet's available balance (a signed decimal amount), with its reason. */
export async function adjustBalance(
  store: Store,
  input: {
    wallet_id: string;
    amount: string;
    reason: string;
    by: string;
    now: number;
    /** The adjustment's id when its cause has one (an exception's): posting it again posts nothing. */
    adjustment_id?: string;
  },
): Promise<{ adjustment_id: string; amount: number; currency: string }> {
  const wallet = await walletOf(store, input.wallet_id);
  const exponent = exponentOf(wallet.currency);
  const negative = input.amount.trim().startsWith('-');
  const parsed = parseAmount(input.amount.trim().replace(/^[-+]/, ''), exponent);
  if (!parsed.ok) throw new AdminError(`--amount ${parsed.reason} (in ${wallet.currency}; negative to take back)`);
  if (parsed.minor === 0) throw new AdminError('--amount must not be zero');
  if (!input.reason.trim()) throw new AdminError("--reason must say why: it is on the merchant's statement");
  const amount = negative ? -parsed.minor : parsed.minor;
  const adjustment_id = input.adjustment_id ?? `A${randomBytes(5).toString('hex')}`;
  const done = await store.ledger.adjust(
    adjustmentEntry({
      adjustment_id,
      wallet_id: wallet.wallet_id,
      currency: wallet.currency,
      amount,
      reason: input.reason,
      created_at: input.now,
    }),
  );
  if (!done.ok)
    throw new AdminError(
      `wallet ${wallet.wallet_id} has ${formatAmount(Math.max(0, done.available), exponent)} ${wallet.currency} available: it cannot be taken back more`,
    );
  return { adjustment_id, amount, currency: wallet.currency };
}
