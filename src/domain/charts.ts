import type { Status } from './transaction.js';

// The console's charts, as figures: per day of a window, in one currency (optionally one method),
// the volume paid, the refunds that succeeded, the orders created and how many of those that ended
// were paid; and the window's totals. Amounts are minor units, added as integers.

export const DAY_MS = 86_400_000;

export interface CreatedRow {
  day: number;
  currency: string;
  payment_method: string;
  status: Status;
  count: number;
  amount: number;
}

export interface MoneyRow {
  day: number;
  currency: string;
  payment_method: string;
  count: number;
  amount: number;
}

export interface ChartDay {
  day: number;
  /** Paid that day (by pay_time). */
  volume: number;
  /** Refunds that succeeded that day. */
  refunds: number;
  /** Orders created that day, and of them the ones paid and the ones ended (not pending). */
  created: number;
  paid: number;
  ended: number;
}

export interface ChartFigures {
  days: ChartDay[];
  totals: { volume: number; refunds: number; net: number; created: number; paid: number; ended: number };
}

/** The days [from, to) of the window, each at 00:00 UTC. */
export function windowDays(from: number, to: number): number[] {
  const days: number[] = [];
  for (let d = from - (from % DAY_MS); d < to; d += DAY_MS) days.push(d);
  return days;
}

export function chartFigures(
  days: readonly number[],
  rows: { created: readonly CreatedRow[]; paid: readonly MoneyRow[]; refunded: readonly MoneyRow[] },
  pick: { currency: string; payment_method?: string },
): ChartFigures {
  const byDay = new Map<number, ChartDay>(
    days.map((day) => [day, { day, volume: 0, refunds: 0, created: 0, paid: 0, ended: 0 }]),
  );
  const picked = (r: { currency: string; payment_method: string }) =>
    r.currency === pick.currency && (pick.payment_method === undefined || r.payment_method === pick.payment_method);
  for (const r of rows.created) {
    const d = byDay.get(r.day);
    if (!d || !picked(r)) continue;
    d.created += r.count;
    if (r.status === 'paid') d.paid += r.count;
    if (r.status !== 'pending') d.ended += r.count;
  }
  for (const r of rows.paid) {
    const d = byDay.get(r.day);
    if (d && picked(r)) d.volume += r.amount;
  }
  for (const r of rows.refunded) {
    const d = byDay.get(r.day);
    if (d && picked(r)) d.refunds += r.amount;
  }
  const list = [...byDay.values()];
  const sum = (k: keyof ChartDay) => list.reduce((a, d) => a + d[k], 0);
  const volume = sum('volume');
  const refunds = sum('refunds');
  return {
    days: list,
    totals: { volume, refunds, net: volume - refunds, created: sum('created'), paid: sum('paid'), ended: sum('ended') },
  };
}

/** A round top for an axis holding `max`: 1, 2 or 5 times a power of ten. */
export function niceCeiling(max: number): number {
  if (max <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  for (const step of [1, 2, 5, 10]) if (step * power >= max) return step * power;
  return 10 * power;
}
