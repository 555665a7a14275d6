import { dueStatementDates } from '../domain/reconciliation.js';
import type { Log } from '../ports/log.js';
import type { GatewayContext } from './context.js';
import { importStatement } from './reconciliation.js';

// The statements' import job, on every instance: for every provider account whose connector reads
// statements, the days due (yesterday in the provider's zone once it has published, and a few
// before, for an instance that was down), each claimed for its import (one instance at a time on
// PostgreSQL), imported, and asked again later when the provider has not published it.

/** How often every instance looks for days to import. */
export const STATEMENT_JOB_EVERY_MS = 5 * 60_000;
/** An import's claim: long enough for a large statement, short enough that a crashed instance's is taken over. */
const CLAIM_MS = 15 * 60_000;
/** A day not published yet (or not fetched) is asked again after this. */
export const STATEMENT_RETRY_MS = 30 * 60_000;

interface AccountToImport {
  provider: string;
  merchant_id: string;
  wallet_id: string;
  method: string;
}

/** One account per provider identity (an account serving several wallets has one statement). */
async function accountsWithStatements(ctx: GatewayContext): Promise<AccountToImport[]> {
  const out = new Map<string, AccountToImport>();
  for (const stored of await ctx.store.accounts.listChannelAccounts()) {
    const connector = Object.hasOwn(ctx.connectors, stored.provider) ? ctx.connectors[stored.provider] : undefined;
    if (!connector?.statements) continue;
    const account = await ctx.credentials.channelAccount(stored.wallet_id, stored.payment_method);
    if (!account || account.provider !== stored.provider) continue;
    const merchant_id = connector.merchantId(account);
    const key = `${stored.provider}\u0000${merchant_id}`;
    if (!out.has(key))
      out.set(key, {
        provider: stored.provider,
        merchant_id,
        wallet_id: stored.wallet_id,
        method: stored.payment_method,
      });
  }
  return [...out.values()];
}

export interface StatementJobRound {
  imported: number;
  notReady: number;
}

/** One round: every due day of every account not imported yet and not claimed elsewhere. */
export async function runStatementJob(ctx: GatewayContext, log: Log): Promise<StatementJobRound> {
  const round: StatementJobRound = { imported: 0, notReady: 0 };
  for (const a of await accountsWithStatements(ctx)) {
    const source = ctx.connectors[a.provider].statements!;
    for (const date of dueStatementDates(ctx.now(), source)) {
      const now = ctx.now();
      const key = { provider: a.provider, merchant_id: a.merchant_id, statement_date: date };
      const claimed = await ctx.store.reconciliation.claimDay(
        { ...key, wallet_id: a.wallet_id, payment_method: a.method, next_try_at: now, claimed_until: now + CLAIM_MS },
        now,
      );
      if (!claimed) continue;
      try {
        const done = await importStatement(ctx, { wallet_id: a.wallet_id, method: a.method, date, by: 'job' });
        if (done.kind === 'not_ready') {
          round.notReady++;
          log.info({ ...key, reason: done.reason }, 'statement not published yet: asked again later');
          await ctx.store.reconciliation.finishDay(
            key,
            { error: done.reason, next_try_at: ctx.now() + STATEMENT_RETRY_MS },
            ctx.now(),
          );
          continue;
        }
        round.imported++;
        await ctx.store.reconciliation.finishDay(key, { statement_id: done.statement.statement_id }, ctx.now());
        const s = done.statement;
        log.info(
          {
            ...key,
            statement_id: s.statement_id,
            lines: s.line_count,
            matched: s.matched_count,
            exceptions: s.exception_count,
          },
          'statement imported',
        );
        for (const e of done.exceptions)
          log.warn(
            {
              exception_id: e.exception_id,
              kind: e.kind,
              severity: e.severity,
              order_id: e.order_id,
              detail: e.detail,
            },
            'money exception: an operator must look (gateway exceptions list)',
          );
      } catch (e) {
        log.error({ ...key, err: e }, 'statement import failed: tried again later');
        await ctx.store.reconciliation.finishDay(
          key,
          { error: e instanceof Error ? e.message : String(e), next_try_at: ctx.now() + STATEMENT_RETRY_MS },
          ctx.now(),
        );
      }
    }
  }
  return round;
}

/** The job on a timer (its first round one interval after start); a round still going is not joined. */
export function startStatementJob(
  ctx: GatewayContext,
  log: Log,
  everyMs = STATEMENT_JOB_EVERY_MS,
): () => Promise<void> {
  let running: Promise<unknown> | null = null;
  const timer = setInterval(() => {
    if (running) return;
    running = runStatementJob(ctx, log)
      .catch((e: unknown) => log.error({ err: e }, 'statement job: round failed; tried again at the next one'))
      .finally(() => (running = null));
  }, everyMs).unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
