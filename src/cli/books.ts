import type { WalletBalances } from '../domain/ledger.js';
import { exponentOf, formatAmount, formatSignedAmount } from '../domain/money.js';
import type { WalletLimits } from '../ports/ledger.js';
import {
  adjustBalance,
  runSettlement,
  setLimits,
  setSettlementDelay,
  settlementDelayOf,
  walletBalance,
  walletStatement,
} from '../usecases/books.js';
import { required } from './args.js';
import type { Command } from './command.js';
import { auditCli, osUser } from './console-users.js';
import { CSV_HEADER, statementCsv } from '../pages/statement-csv.js';
import { DATABASE_FLAG, JSON_FLAG, withStore } from './shared.js';
import { runAutoPayouts } from '../usecases/auto-payouts.js';

// The books' commands beside `ledger check` and `fees` (ledger.ts): limits, the settlement delay
// and run, a wallet's balance and its statement. Amounts are decimals of the wallet's currency.

const WALLET_FLAG = { name: 'wallet-id', type: 'string', value: 'W', help: 'the wallet', required: true } as const;

function limitsView(l: WalletLimits, currency: string) {
  const e = exponentOf(currency);
  const money = (m: number | null) => (m === null ? null : formatAmount(m, e));
  return {
    wallet_id: l.wallet_id,
    method: l.payment_method || '*',
    currency,
    single_min: money(l.single_min),
    single_max: money(l.single_max),
    daily_max: money(l.daily_max),
    updated_at: new Date(l.updated_at).toISOString(),
    updated_by: l.updated_by,
  };
}

export const limitsSet: Command = {
  name: 'limits set',
  summary: "a wallet's payment limits, for every method or one: a create beyond them is refused (454)",
  description:
    "Sets (replaces) the wallet's limits for one method, or for every method without --method. A\nlimit not given is no limit. The daily total counts the orders paid since the start of the day\n(UTC) with the one being created. Both the every-method limits and the method's apply.",
  flags: [
    WALLET_FLAG,
    { name: 'method', type: 'string', value: 'M', help: 'only this payment method (every method by default)' },
    { name: 'single-min', type: 'string', value: 'A', help: 'the least amount of one payment' },
    { name: 'single-max', type: 'string', value: 'A', help: 'the most amount of one payment' },
    { name: 'daily-max', type: 'string', value: 'A', help: 'the most paid in a day (UTC), this payment included' },
    DATABASE_FLAG,
    JSON_FLAG,
  ],
  examples: [
    'gateway limits set --wallet-id W00000001 --single-min 1.00 --single-max 5000 --daily-max 20000',
    'gateway limits set --wallet-id W00000001 --method wechat --single-max 1000',
  ],
  async run(v) {
    const view = await withStore(v, async (store) => {
      const limits = await setLimits(store, {
        wallet_id: required(v, 'wallet-id'),
        ...(typeof v.method === 'string' && { method: v.method }),
        ...(typeof v['single-min'] === 'string' && { single_min: v['single-min'] }),
        ...(typeof v['single-max'] === 'string' && { single_max: v['single-max'] }),
        ...(typeof v['daily-max'] === 'string' && { daily_max: v['daily-max'] }),
        by: `cli:${osUser()}`,
        now: Date.now(),
      });
      const wallet = (await store.accounts.findWallet(limits.wallet_id))!;
      const shown = limitsView(limits, wallet.currency);
      await auditCli(store, {
        action: 'cli.limits.set',
        object: `${limits.wallet_id}/${shown.method}`,
        after: JSON.stringify(shown),
      });
      return shown;
    });
    print(v, view);
    return 0;
  },
};

export const limitsList: Command = {
  name: 'limits list',
  summary: 'the limits of one wallet or of all',
  flags: [{ name: 'wallet-id', type: 'string', value: 'W', help: 'only this wallet' }, DATABASE_FLAG, JSON_FLAG],
  examples: ['gateway limits list --wallet-id W00000001', 'gateway limits list --json'],
  async run(v) {
    const views = await withStore(v, async (store) => {
      const rows = await store.ledger.listLimits(typeof v['wallet-id'] === 'string' ? v['wallet-id'] : undefined);
      const out = [];
      for (const l of rows) out.push(limitsView(l, (await store.accounts.findWallet(l.wallet_id))?.currency ?? 'NZD'));
      return out;
    });
    if (v.json) console.log(JSON.stringify(views, null, 2));
    else if (views.length === 0) console.log('no limits');
    else
      for (const l of views)
        console.log(
          `${l.wallet_id} ${l.method}: single ${l.single_min ?? '-'}..${l.single_max ?? '-'}, daily ${l.daily_max ?? '-'} ${l.currency}`,
        );
    return 0;
  },
};

export const settlementSet: Command = {
  name: 'settlement set',
  summary: "a wallet's settlement delay: days from a payment until its money is available",
  description:
    "A paid order's net (its amount less its fee) is pending, and becomes available to pay out this\nmany days after it was paid (2 by default; 0: at the next settlement run).",
  flags: [
    WALLET_FLAG,
    { name: 'delay-days', type: 'string', value: 'N', help: 'whole days, 0 to 365', required: true },
    DATABASE_FLAG,
    JSON_FLAG,
  ],
  examples: ['gateway settlement set --wallet-id W00000001 --delay-days 0'],
  async run(v) {
    const set = await withStore(v, async (store) => {
      const done = await setSettlementDelay(store, {
        wallet_id: required(v, 'wallet-id'),
        delay_days: required(v, 'delay-days'),
        by: `cli:${osUser()}`,
        now: Date.now(),
      });
      await auditCli(store, { action: 'cli.settlement.set', object: done.wallet_id, after: JSON.stringify(done) });
      return done;
    });
    print(v, set);
    return 0;
  },
};

export const settlementRun: Command = {
  name: 'settlement run',
  summary: 'makes every due amount available now, as the job on every instance does each minute',
  description:
    "Then, as the job does, requests the day's automatic payouts (gateway payout auto) of wallets\nwhose available balance is now above their threshold.",
  flags: [DATABASE_FLAG, JSON_FLAG],
  examples: ['gateway settlement run', 'gateway settlement run --json'],
  async run(v) {
    const view = await withStore(v, async (store) => {
      const run = await runSettlement(store, Date.now());
      const moves = [];
      for (const m of run.moves)
        moves.push({
          wallet_id: m.wallet_id,
          currency: m.currency,
          amount: formatAmount(m.amount, exponentOf(m.currency)),
        });
      const auto_payouts = (await runAutoPayouts(store, Date.now())).map((o) =>
        'payout' in o
          ? {
              wallet_id: o.wallet_id,
              payout_id: o.payout.payout_id,
              currency: o.payout.currency,
              amount: formatAmount(o.payout.amount, exponentOf(o.payout.currency)),
              fee: formatAmount(o.payout.fee, exponentOf(o.payout.currency)),
            }
          : { wallet_id: o.wallet_id, skipped: o.skipped },
      );
      return { wallets: run.wallets, moves, claimed_elsewhere: run.claimed_elsewhere, auto_payouts };
    });
    if (v.json) console.log(JSON.stringify(view, null, 2));
    else {
      for (const m of view.moves) console.log(`${m.wallet_id}: ${m.amount} ${m.currency} now available`);
      for (const a of view.auto_payouts)
        console.log(
          'payout_id' in a
            ? `${a.wallet_id}: automatic payout ${a.payout_id} of ${a.amount} ${a.currency} requested (fee ${a.fee})`
            : `${a.wallet_id}: no automatic payout today: ${a.skipped}`,
        );
      console.log(
        view.claimed_elsewhere
          ? 'another instance is running the settlement: it makes the rest available'
          : `${view.wallets} wallet(s) with money pending, ${view.moves.length} with money made available`,
      );
    }
    return 0;
  },
};

function balancesView(b: WalletBalances) {
  const e = exponentOf(b.currency);
  return {
    currency: b.currency,
    pending: formatSignedAmount(b.pending, e),
    available: formatSignedAmount(b.available, e),
    reserved: formatSignedAmount(b.reserved, e),
  };
}

export const balance: Command = {
  name: 'balance',
  summary: "a wallet's balances: pending, available (to pay out) and reserved (for refunds and payouts under way)",
  flags: [WALLET_FLAG, DATABASE_FLAG, JSON_FLAG],
  examples: ['gateway balance --wallet-id W00000001', 'gateway balance --wallet-id W00000001 --json'],
  async run(v) {
    const view = await withStore(v, async (store) => {
      const wallet_id = required(v, 'wallet-id');
      return {
        ...balancesView(await walletBalance(store, wallet_id)),
        settlement_delay_days: await settlementDelayOf(store, wallet_id),
      };
    });
    print(v, view);
    return 0;
  },
};

export const statement: Command = {
  name: 'statement',
  summary: "a wallet's statement: opening balances, every movement with its order, refund or payout, closing balances",
  description: `Dates are UTC days, both included. --csv prints ${CSV_HEADER.split(',').length} columns: ${CSV_HEADER}.`,
  flags: [
    WALLET_FLAG,
    { name: 'from', type: 'string', value: 'YYYY-MM-DD', help: 'the first day', required: true },
    { name: 'to', type: 'string', value: 'YYYY-MM-DD', help: 'the last day', required: true },
    { name: 'csv', type: 'boolean', help: 'print CSV' },
    DATABASE_FLAG,
    JSON_FLAG,
  ],
  examples: [
    'gateway statement --wallet-id W00000001 --from 2026-11-01 --to 2026-11-30',
    'gateway statement --wallet-id W00000001 --from 2026-11-01 --to 2026-11-30 --csv > november.csv',
  ],
  async run(v) {
    const s = await withStore(v, (store) =>
      walletStatement(store, required(v, 'wallet-id'), required(v, 'from'), required(v, 'to')),
    );
    if (v.csv) {
      console.log(statementCsv(s));
      return 0;
    }
    const e = exponentOf(s.currency);
    const view = {
      wallet_id: s.wallet_id,
      from: new Date(s.from).toISOString(),
      to: new Date(s.to).toISOString(),
      opening: balancesView(s.opening),
      lines: s.lines.map((l) => ({
        ...l,
        created_at: new Date(l.created_at).toISOString(),
        pending: formatSignedAmount(l.pending, e),
        available: formatSignedAmount(l.available, e),
        reserved: formatSignedAmount(l.reserved, e),
      })),
      closing: balancesView(s.closing),
    };
    if (v.json) console.log(JSON.stringify(view, null, 2));
    else {
      const b = (x: ReturnType<typeof balancesView>) =>
        `pending ${x.pending}, available ${x.available}, reserved ${x.reserved} ${x.currency}`;
      console.log(`${view.from} opening: ${b(view.opening)}`);
      for (const l of view.lines)
        console.log(
          `${l.created_at} ${l.kind.padEnd(16)} ${l.order_id ?? l.payout_id ?? ''} pending ${l.pending} available ${l.available} reserved ${l.reserved}${l.memo ? ` (${l.memo})` : ''}`,
        );
      console.log(`${view.to} closing: ${b(view.closing)}`);
    }
    return 0;
  },
};

/** A command's result: JSON with --json, else a line per field. */
export function print(v: { json?: unknown }, view: Record<string, string | number | boolean | null>): void {
  if (v.json) console.log(JSON.stringify(view, null, 2));
  else for (const [k, x] of Object.entries(view)) console.log(`${k.padEnd(22)} ${String(x ?? '-')}`);
}

export const ledgerAdjust: Command = {
  name: 'ledger adjust',
  summary: "an operator's adjustment of a wallet's available balance, with its reason (on the statement)",
  description:
    "A positive amount is owed to the merchant (a goodwill credit, a fee charged wrongly); a negative\none is taken back from what is available, never more than that. The other side is the\noperator's adjustments account. An entry of its own: a correction is another adjustment.",
  flags: [
    WALLET_FLAG,
    {
      name: 'amount',
      type: 'string',
      value: 'A',
      help: "the amount in the wallet's currency, negative to take back",
      required: true,
    },
    {
      name: 'reason',
      type: 'string',
      value: 'TEXT',
      help: 'why (the merchant reads it on the statement)',
      required: true,
    },
    DATABASE_FLAG,
    JSON_FLAG,
  ],
  examples: [
    'gateway ledger adjust --wallet-id W00000001 --amount 12.50 --reason "fee charged twice on 2026-11-28"',
    'gateway ledger adjust --wallet-id W00000001 --amount=-5.00 --reason "chargeback 4411"',
  ],
  async run(v) {
    const view = await withStore(v, async (store) => {
      const done = await adjustBalance(store, {
        wallet_id: required(v, 'wallet-id'),
        amount: required(v, 'amount'),
        reason: required(v, 'reason'),
        by: `cli:${osUser()}`,
        now: Date.now(),
      });
      const shown = {
        id: done.adjustment_id,
        wallet_id: required(v, 'wallet-id'),
        amount: formatSignedAmount(done.amount, exponentOf(done.currency)),
        currency: done.currency,
        reason: required(v, 'reason'),
      };
      await auditCli(store, { action: 'cli.ledger.adjust', object: shown.wallet_id, after: JSON.stringify(shown) });
      return shown;
    });
    print(v, view);
    return 0;
  },
};
