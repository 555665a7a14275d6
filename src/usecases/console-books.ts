import type { Wallet } from '../domain/account.js';
import type { AutoPayoutDay, AutoPayoutSetting } from '../domain/auto-payout.js';
import type { BankAccount } from '../domain/bank-account.js';
import { permits, type ConsoleAction, type ConsoleUser } from '../domain/console.js';
import type { FeePlan } from '../domain/fees.js';
import type { WalletBalances } from '../domain/ledger.js';
import { DAY_MS } from '../domain/ledger-settlement.js';
import type { Payout } from '../domain/payout.js';
import type { Organisation } from '../ports/accounts.js';
import type { AuditEntry } from '../ports/console.js';
import { PAYMENT_METHODS } from '../domain/transaction.js';
import type { MarginRow, Statement, StatementCursor, WalletLimits } from '../ports/ledger.js';
import type { PayoutBatch } from '../ports/payouts.js';
import { AdminError } from './administration.js';
import { adjustBalance, setLimits, setSettlementDelay, settlementDelayOf, wholeStatement } from './books.js';
import { audit, ConsoleError } from './console-auth.js';
import { walletFor } from './console-wallets.js';
import type { GatewayContext } from './context.js';
import { setFeePlan } from './fee-plans.js';
import { addBankAccount, batchFile, batchPayouts, movePayout, requestPayout, type BankFile } from './payouts.js';
import { setAutoPayout } from './auto-payouts.js';

// The books in the console: a wallet's balances, statement, bank accounts and payouts for its
// merchant; fee plans, limits, the settlement delay, the payout queue, every wallet's balances and
// the margin report for operators. Each is authorised here, on the server: a merchant's user sees
// its own organisation's wallets only (walletFor), a role acts only as `permits` says; every change
// is written to the audit log.

type Actor = { user: ConsoleUser; ip: string };

const allow = (user: ConsoleUser, action: ConsoleAction) => {
  if (!permits(user, action)) throw new ConsoleError('error.forbidden');
};
const operatorOnly = (user: ConsoleUser, action: ConsoleAction) => {
  if (user.kind !== 'operator') throw new ConsoleError('error.not_found');
  allow(user, action);
};
/** An AdminError's message (what is wrong with the input) as the page's error. */
export async function asInputError<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (e) {
    if (e instanceof AdminError) throw new ConsoleError('error.input', { detail: e.message });
    throw e;
  }
}
const by = (user: ConsoleUser) => `console:${user.email}`;

export interface WalletBooks {
  wallet: Pick<Wallet, 'wallet_id' | 'wallet_name' | 'currency'>;
  organisation: Organisation;
  balances: WalletBalances;
  delay_days: number;
  statement: Statement;
  bank_accounts: BankAccount[];
  payouts: Payout[];
  /** Its automatic payout, if set, and its latest days' outcomes. */
  auto_payout: AutoPayoutSetting | undefined;
  auto_payout_days: AutoPayoutDay[];
  /** Operators only (empty for a merchant's user). */
  fee_plans: FeePlan[];
  limits: WalletLimits[];
  /** Operators only: the changes to its limits and settlement delay, newest first (the audit log). */
  history: AuditEntry[];
}

/** The wallet's books page: a statement of [from, to) (days, UTC; the last 30 by default). */
/** Movements on one page of a wallet's books. */
export const STATEMENT_PAGE = 100;

export async function walletBooks(
  ctx: GatewayContext,
  user: ConsoleUser,
  wallet_id: string,
  range: { from: number; to: number; after?: StatementCursor },
): Promise<WalletBooks> {
  const { wallet, organisation } = await walletFor(ctx, user, wallet_id);
  allow(user, 'view');
  if (range.to <= range.from || range.to - range.from > 366 * DAY_MS)
    throw new ConsoleError('error.report_range', { days: 366 });
  const operator = user.kind === 'operator';
  const [
    balances,
    delay_days,
    statement,
    bank_accounts,
    payouts,
    auto_payout,
    auto_payout_days,
    fee_plans,
    limits,
    history,
  ] = await Promise.all([
    ctx.store.ledger.walletBalances(wallet.wallet_id, wallet.currency),
    settlementDelayOf(ctx.store, wallet.wallet_id),
    ctx.store.ledger.statement(wallet.wallet_id, wallet.currency, range.from, range.to, {
      limit: STATEMENT_PAGE,
      ...(range.after && { after: range.after }),
    }),
    ctx.store.payouts.listBankAccounts(wallet.wallet_id),
    ctx.store.payouts.list({ wallet_id: wallet.wallet_id, limit: 50 }),
    ctx.store.payouts.autoPayout(wallet.wallet_id),
    ctx.store.payouts.autoPayoutDays(wallet.wallet_id, 7),
    operator ? ctx.store.ledger.listFeePlans({ wallet_id: wallet.wallet_id }) : Promise.resolve([]),
    operator ? ctx.store.ledger.listLimits(wallet.wallet_id) : Promise.resolve([]),
    operator
      ? ctx.store.console.listAudit({
          actions: [
            'limits.set',
            'cli.limits.set',
            'settlement.set',
            'cli.settlement.set',
            'ledger.adjust',
            'cli.ledger.adjust',
            'payout.auto',
            'cli.payout.auto',
          ],
          objects: [
            wallet.wallet_id,
            `${wallet.wallet_id}/*`,
            ...PAYMENT_METHODS.map((m) => `${wallet.wallet_id}/${m}`),
          ],
          limit: 50,
        })
      : Promise.resolve([]),
  ]);
  return {
    wallet: { wallet_id: wallet.wallet_id, wallet_name: wallet.wallet_name, currency: wallet.currency },
    organisation,
    balances,
    delay_days,
    statement,
    bank_accounts,
    payouts,
    auto_payout,
    auto_payout_days,
    fee_plans,
    limits,
    history,
  };
}

/** The balances of the wallets the user sees, added up per currency (the dashboard's card). */
export async function balanceCard(ctx: GatewayContext, user: ConsoleUser): Promise<WalletBalances[]> {
  const wallet_ids =
    user.kind === 'operator'
      ? undefined
      : (await ctx.store.accounts.listOrganisationWallets(user.organisation_id!)).map((w) => w.wallet_id);
  const rows = await ctx.store.ledger.walletsBalances(wallet_ids);
  const byCurrency = new Map<string, WalletBalances>();
  for (const r of rows) {
    const sum = byCurrency.get(r.currency) ?? { currency: r.currency, pending: 0, available: 0, reserved: 0 };
    sum.pending += r.pending;
    sum.available += r.available;
    sum.reserved += r.reserved;
    byCurrency.set(r.currency, sum);
  }
  return [...byCurrency.values()].sort((a, b) => (a.currency < b.currency ? -1 : 1));
}

/** Every wallet's balances (operators). */
export async function allBalances(ctx: GatewayContext, user: ConsoleUser) {
  operatorOnly(user, 'view');
  return ctx.store.ledger.walletsBalances(undefined);
}

export async function consoleAddBankAccount(
  ctx: GatewayContext,
  { user, ip }: Actor,
  wallet_id: string,
  form: { holder: string; bsb?: string; account_number?: string; nz_account?: string },
): Promise<BankAccount> {
  const { organisation } = await walletFor(ctx, user, wallet_id);
  // A merchant's owner adds it (an operator admin may, for a merchant who asks).
  allow(user, user.kind === 'operator' ? 'configure' : 'refund');
  const account = await asInputError(() =>
    addBankAccount(ctx.store, { wallet_id, ...form, by: by(user), now: ctx.now() }),
  );
  await audit(
    ctx,
    { kind: 'user', user, ip },
    {
      action: 'bank_account.add',
      organisation_id: organisation.organisation_id,
      object: account.bank_account_id,
      after: JSON.stringify({ wallet_id, holder: account.holder, currency: account.currency }),
    },
  );
  return account;
}

/** The bank account, if the user may see its wallet. */
async function bankAccountFor(ctx: GatewayContext, user: ConsoleUser, bank_account_id: string) {
  const account = await ctx.store.payouts.findBankAccount(bank_account_id);
  if (!account) throw new ConsoleError('error.not_found');
  const { organisation } = await walletFor(ctx, user, account.wallet_id);
  return { account, organisation };
}

export async function consoleVerifyBankAccount(ctx: GatewayContext, { user, ip }: Actor, bank_account_id: string) {
  operatorOnly(user, 'configure');
  const { account, organisation } = await bankAccountFor(ctx, user, bank_account_id);
  const verified = await ctx.store.payouts.verifyBankAccount(bank_account_id, by(user), ctx.now());
  await audit(
    ctx,
    { kind: 'user', user, ip },
    { action: 'bank_account.verify', organisation_id: organisation.organisation_id, object: bank_account_id },
  );
  return { wallet_id: account.wallet_id, verified: verified! };
}

export async function consoleRequestPayout(
  ctx: GatewayContext,
  { user, ip }: Actor,
  wallet_id: string,
  amount: string,
): Promise<Payout> {
  const { organisation } = await walletFor(ctx, user, wallet_id);
  allow(user, user.kind === 'operator' ? 'configure' : 'refund');
  const payout = await asInputError(() =>
    requestPayout(ctx.store, { wallet_id, amount, by: by(user), now: ctx.now() }),
  );
  await audit(
    ctx,
    { kind: 'user', user, ip },
    {
      action: 'payout.request',
      organisation_id: organisation.organisation_id,
      object: payout.payout_id,
      after: JSON.stringify({ wallet_id, amount: payout.amount, fee: payout.fee }),
    },
  );
  return payout;
}

/** The wallet's automatic payout (its merchant's owner, or an operator's admin): `above` of `off` turns it off. */
export async function consoleSetAutoPayout(
  ctx: GatewayContext,
  { user, ip }: Actor,
  wallet_id: string,
  form: { above: string; keep?: string },
): Promise<void> {
  const { organisation } = await walletFor(ctx, user, wallet_id);
  allow(user, user.kind === 'operator' ? 'configure' : 'refund');
  const set = await asInputError(() => setAutoPayout(ctx.store, { wallet_id, ...form, by: by(user), now: ctx.now() }));
  await audit(
    ctx,
    { kind: 'user', user, ip },
    {
      action: 'payout.auto',
      organisation_id: organisation.organisation_id,
      object: wallet_id,
      after: JSON.stringify(set ? { above: set.above, keep: set.keep } : { off: true }),
    },
  );
}

/** cancel (the merchant's owner, or an operator), approve, paid, returned (operators). */
export async function consoleMovePayout(
  ctx: GatewayContext,
  { user, ip }: Actor,
  payout_id: string,
  to: 'approved' | 'canceled' | 'paid' | 'returned',
  reason?: string,
): Promise<Payout> {
  const found = await ctx.store.payouts.find(payout_id);
  if (!found) throw new ConsoleError('error.not_found');
  const { organisation } = await walletFor(ctx, user, found.wallet_id);
  if (to === 'canceled') allow(user, user.kind === 'operator' ? 'configure' : 'refund');
  else operatorOnly(user, 'configure');
  const payout = await asInputError(() => movePayout(ctx.store, payout_id, to, by(user), ctx.now(), reason));
  await audit(
    ctx,
    { kind: 'user', user, ip },
    {
      action: `payout.${to}`,
      organisation_id: organisation.organisation_id,
      object: payout_id,
      ...(reason && { after: JSON.stringify({ reason }) }),
    },
  );
  return payout;
}

export interface PayoutQueue {
  requested: Payout[];
  approved: Payout[];
  in_batch: Payout[];
  batches: PayoutBatch[];
}

export async function payoutQueue(ctx: GatewayContext, user: ConsoleUser): Promise<PayoutQueue> {
  operatorOnly(user, 'view');
  const [requested, approved, in_batch, batches] = await Promise.all([
    ctx.store.payouts.list({ status: 'requested' }),
    ctx.store.payouts.list({ status: 'approved' }),
    ctx.store.payouts.list({ status: 'in_batch' }),
    ctx.store.payouts.listBatches(20),
  ]);
  return { requested, approved, in_batch, batches };
}

export async function consoleBatch(
  ctx: GatewayContext,
  { user, ip }: Actor,
  currency: string,
): Promise<BankFile | undefined> {
  operatorOnly(user, 'configure');
  const file = await asInputError(() =>
    batchPayouts(ctx.store, { currency, settings: ctx.config.bankFiles ?? {}, by: by(user), now: ctx.now() }),
  );
  if (file)
    await audit(
      ctx,
      { kind: 'user', user, ip },
      {
        action: 'payout.batch',
        object: file.batch.batch_id,
        after: JSON.stringify({ currency, payouts: file.batch.payout_count, total: file.batch.total }),
      },
    );
  return file;
}

export async function consoleBatchFile(ctx: GatewayContext, { user, ip }: Actor, batch_id: string): Promise<BankFile> {
  operatorOnly(user, 'configure');
  const file = await asInputError(() => batchFile(ctx.store, batch_id, ctx.config.bankFiles ?? {}));
  await audit(ctx, { kind: 'user', user, ip }, { action: 'payout.file', object: batch_id });
  return file;
}

export async function consoleSetFeePlan(
  ctx: GatewayContext,
  { user, ip }: Actor,
  wallet_id: string,
  form: {
    method: string;
    percent: string;
    fixed?: string;
    min?: string;
    max?: string;
    effective?: string;
    refund_fee?: string;
  },
): Promise<FeePlan> {
  operatorOnly(user, 'configure');
  const { organisation } = await walletFor(ctx, user, wallet_id);
  const plan = await asInputError(() =>
    setFeePlan(ctx.store, { wallet_id, payment_method: form.method, ...form, by: by(user), now: ctx.now() }),
  );
  await audit(
    ctx,
    { kind: 'user', user, ip },
    {
      action: 'fees.set',
      organisation_id: organisation.organisation_id,
      object: `${wallet_id}/${plan.payment_method}`,
      after: JSON.stringify(plan),
    },
  );
  return plan;
}

export async function consoleSetLimits(
  ctx: GatewayContext,
  { user, ip }: Actor,
  wallet_id: string,
  form: { method?: string; single_min?: string; single_max?: string; daily_max?: string },
): Promise<WalletLimits> {
  operatorOnly(user, 'configure');
  const { organisation } = await walletFor(ctx, user, wallet_id);
  const limits = await asInputError(() => setLimits(ctx.store, { wallet_id, ...form, by: by(user), now: ctx.now() }));
  await audit(
    ctx,
    { kind: 'user', user, ip },
    {
      action: 'limits.set',
      organisation_id: organisation.organisation_id,
      object: `${wallet_id}/${limits.payment_method || '*'}`,
      after: JSON.stringify(limits),
    },
  );
  return limits;
}

export async function consoleSetSettlementDelay(
  ctx: GatewayContext,
  { user, ip }: Actor,
  wallet_id: string,
  delay_days: string,
): Promise<void> {
  operatorOnly(user, 'configure');
  const { organisation } = await walletFor(ctx, user, wallet_id);
  const done = await asInputError(() =>
    setSettlementDelay(ctx.store, { wallet_id, delay_days, by: by(user), now: ctx.now() }),
  );
  await audit(
    ctx,
    { kind: 'user', user, ip },
    {
      action: 'settlement.set',
      organisation_id: organisation.organisation_id,
      object: wallet_id,
      after: JSON.stringify(done),
    },
  );
}

/** Fees earned per currency and method in [from, to) (operators). */
export async function marginReport(
  ctx: GatewayContext,
  user: ConsoleUser,
  range: { from: number; to: number },
): Promise<MarginRow[]> {
  operatorOnly(user, 'view');
  return ctx.store.ledger.margin(range.from, range.to);
}

export async function consoleAdjust(
  ctx: GatewayContext,
  { user, ip }: Actor,
  wallet_id: string,
  form: { amount: string; reason: string },
): Promise<void> {
  operatorOnly(user, 'configure');
  const { organisation } = await walletFor(ctx, user, wallet_id);
  const done = await asInputError(() => adjustBalance(ctx.store, { wallet_id, ...form, by: by(user), now: ctx.now() }));
  await audit(
    ctx,
    { kind: 'user', user, ip },
    {
      action: 'ledger.adjust',
      organisation_id: organisation.organisation_id,
      object: wallet_id,
      after: JSON.stringify({ ...done, reason: form.reason }),
    },
  );
}

/** The whole statement of [from, to) for its CSV (every page). */
export async function statementForCsv(
  ctx: GatewayContext,
  user: ConsoleUser,
  wallet_id: string,
  range: { from: number; to: number },
): Promise<Statement> {
  const { wallet } = await walletFor(ctx, user, wallet_id);
  allow(user, 'view');
  if (range.to <= range.from || range.to - range.from > 366 * DAY_MS)
    throw new ConsoleError('error.report_range', { days: 366 });
  return wholeStatement(ctx.store, wallet, range.from, range.to);
}
