import { chartFigures, DAY_MS, windowDays, type ChartFigures } from '../domain/charts.js';
import type { ConsoleUser } from '../domain/console.js';
import type { PaymentMethod } from '../domain/transaction.js';
import type { GatewayContext } from './context.js';

// The console's charts: the last 30 days of one currency (and method, if chosen), for a merchant's
// user their organisation's, for an operator every merchant's or one organisation's.

export const CHART_DAYS = 30;

export interface Charts {
  /** The currencies with orders in the window (the chart shows one at a time). */
  currencies: string[];
  currency?: string;
  figures?: ChartFigures;
}

export async function charts(
  ctx: GatewayContext,
  user: ConsoleUser,
  pick: { organisation_id?: number; currency?: string; payment_method?: PaymentMethod },
): Promise<Charts> {
  const organisation_id = user.kind === 'merchant' ? user.organisation_id! : pick.organisation_id;
  const now = ctx.now();
  const to = now - (now % DAY_MS) + DAY_MS;
  const from = to - CHART_DAYS * DAY_MS;
  const scope = { from, to, ...(organisation_id !== undefined && { organisation_id }) };
  const [created, paid, refunded] = await Promise.all([
    ctx.store.transactions.createdByDay(scope),
    // An order is paid within its life: those created a life before the window may be paid in it.
    ctx.store.transactions.paidByDay({ ...scope, createdFrom: from - ctx.config.orderExpiryMs }),
    ctx.store.refunds.succeededByDay(scope),
  ]);
  const currencies = [...new Set([...created, ...paid].map((r) => r.currency))].sort();
  const currency = pick.currency && currencies.includes(pick.currency) ? pick.currency : currencies[0];
  if (!currency) return { currencies };
  const figures = chartFigures(
    windowDays(from, to),
    { created, paid, refunded },
    { currency, ...(pick.payment_method && { payment_method: pick.payment_method }) },
  );
  return { currencies, currency, figures };
}
