import type { FeePlan } from '../domain/fees.js';
import { formatAmount, exponentOf } from '../domain/money.js';
import type { LedgerCheck } from '../ports/ledger.js';
import { setFeePlan } from '../usecases/fee-plans.js';
import { required } from './args.js';
import type { Command } from './command.js';
import { auditCli, osUser } from './console-users.js';
import { DATABASE_FLAG, JSON_FLAG, withStore } from './shared.js';

// The books' commands: `gateway ledger check` (whether the books are sound: domain/ledger.ts says
// what that means), `gateway fees set|list` (fee plans: domain/fees.ts).

function formatCheck(c: LedgerCheck): string {
  const head = `${c.entries} entries, ${c.lines} lines, ${c.paid_orders} paid orders`;
  if (c.problems.length === 0) return `${head}: the ledger is sound`;
  return [
    `${head}: ${c.problems.length} problem(s)`,
    ...c.problems.map((p) => `  ${p.kind.padEnd(26)} ${p.subject}: ${p.detail}`),
  ].join('\n');
}

export const ledgerCheck: Command = {
  name: 'ledger check',
  summary: "check the books: entries balanced, balances equal to their lines, every paid order's entry",
  description:
    "Every journal entry's lines balance in each currency, every wallet balance kept equals the sum\nof its account's lines, every paid order has its payment's entry, and every refund and payout\nthe entries of its states. Exits 1 when anything is wrong, naming it (at most 100 of each kind).",
  flags: [DATABASE_FLAG, JSON_FLAG],
  examples: ['gateway ledger check', 'gateway ledger check --json --database postgres://gateway@db/gateway'],
  async run(v) {
    const check = await withStore(v, (store) => store.ledger.check());
    console.log(v.json ? JSON.stringify(check, null, 2) : formatCheck(check));
    return check.problems.length === 0 ? 0 : 1;
  },
};

/** A plan version as the CLI shows it: amounts as decimals of the wallet's currency, dates in ISO. */
function planView(p: FeePlan, currency: string): Record<string, string | number | null> {
  const e = exponentOf(currency);
  const money = (m: number | null) => (m === null ? null : formatAmount(m, e));
  return {
    wallet_id: p.wallet_id,
    payment_method: p.payment_method,
    version: p.version,
    percent: (p.basis_points / 100).toFixed(2),
    fixed: money(p.fixed),
    min: money(p.minimum),
    max: money(p.maximum),
    currency,
    refund_fee: p.refund_fee,
    effective_from: new Date(p.effective_from).toISOString(),
    created_at: new Date(p.created_at).toISOString(),
    created_by: p.created_by,
  };
}

export const feesSet: Command = {
  name: 'fees set',
  summary: "a wallet's fee plan for a method: a new version from its effective date",
  description:
    "The fee of an order is its percentage (rounded half up to the minor unit) plus the fixed fee,\nwithin the minimum and maximum, under the plan version it was created under; it is posted with\nthe payment. A plan is never changed: each set makes the next version. Amounts in the wallet's\ncurrency.",
  flags: [
    { name: 'wallet-id', type: 'string', value: 'W', help: 'the wallet', required: true },
    { name: 'method', type: 'string', value: 'M', help: 'the payment method (alipay, wechat, ...)', required: true },
    { name: 'percent', type: 'string', value: 'P', help: 'the percentage of the amount, e.g. 2.5', required: true },
    { name: 'fixed', type: 'string', value: 'A', help: 'a fixed fee added, e.g. 0.30 (none by default)' },
    { name: 'min', type: 'string', value: 'A', help: 'the least fee' },
    { name: 'max', type: 'string', value: 'A', help: 'the most fee' },
    { name: 'effective', type: 'string', value: 'YYYY-MM-DD', help: 'from that day (UTC); now by default' },
    {
      name: 'refund-fee',
      type: 'string',
      value: 'none|pro_rata',
      help: 'whether a refund gives back its share of the fee (none by default)',
    },
    DATABASE_FLAG,
    JSON_FLAG,
  ],
  examples: [
    'gateway fees set --wallet-id W00000001 --method alipay --percent 2.5 --fixed 0.30 --min 0.50 --max 50',
    'gateway fees set --wallet-id W00000001 --method polipay --percent 1 --effective 2026-12-01',
  ],
  async run(v) {
    const view = await withStore(v, async (store) => {
      const plan = await setFeePlan(store, {
        wallet_id: required(v, 'wallet-id'),
        payment_method: required(v, 'method'),
        percent: required(v, 'percent'),
        ...(typeof v.fixed === 'string' && { fixed: v.fixed }),
        ...(typeof v.min === 'string' && { min: v.min }),
        ...(typeof v.max === 'string' && { max: v.max }),
        ...(typeof v.effective === 'string' && { effective: v.effective }),
        ...(typeof v['refund-fee'] === 'string' && { refund_fee: v['refund-fee'] }),
        by: `cli:${osUser()}`,
        now: Date.now(),
      });
      const wallet = (await store.accounts.findWallet(plan.wallet_id))!;
      const shown = planView(plan, wallet.currency);
      await auditCli(store, {
        action: 'cli.fees.set',
        object: `${plan.wallet_id}/${plan.payment_method}`,
        after: JSON.stringify(shown),
      });
      return shown;
    });
    if (v.json) console.log(JSON.stringify(view, null, 2));
    else for (const [k, x] of Object.entries(view)) console.log(`${k.padEnd(16)} ${String(x ?? '-')}`);
    return 0;
  },
};

export const feesList: Command = {
  name: 'fees list',
  summary: 'every version of the fee plans, of one wallet or of all',
  flags: [{ name: 'wallet-id', type: 'string', value: 'W', help: 'only this wallet' }, DATABASE_FLAG, JSON_FLAG],
  examples: ['gateway fees list --wallet-id W00000001', 'gateway fees list --json'],
  async run(v) {
    const views = await withStore(v, async (store) => {
      const plans = await store.ledger.listFeePlans(
        typeof v['wallet-id'] === 'string' ? { wallet_id: v['wallet-id'] } : {},
      );
      const currencies = new Map<string, string>();
      for (const p of plans)
        if (!currencies.has(p.wallet_id))
          currencies.set(p.wallet_id, (await store.accounts.findWallet(p.wallet_id))?.currency ?? 'NZD');
      return plans.map((p) => planView(p, currencies.get(p.wallet_id)!));
    });
    if (v.json) console.log(JSON.stringify(views, null, 2));
    else if (views.length === 0) console.log('no fee plans');
    else
      for (const p of views)
        console.log(
          `${p.wallet_id} ${p.payment_method} v${p.version}: ${p.percent}% + ${p.fixed ?? '0'} ${p.currency} (min ${p.min ?? '-'}, max ${p.max ?? '-'}), refund fee ${p.refund_fee}, from ${p.effective_from}`,
        );
    return 0;
  },
};
