import { sql, type Kysely } from 'kysely';
import type { FeePlan } from '../../domain/fees.js';
import {
  FEE_REVENUE,
  providerFeesAccount,
  WALLET_BALANCES,
  walletAccount,
  shownBalance,
  type JournalEntry,
} from '../../domain/ledger.js';
import type {
  LedgerCheck,
  LedgerProblem,
  LedgerRepo,
  MarginRow,
  SettlementRun,
  Statement,
  StatementCursor,
  StatementLine,
  WalletBalances,
  WalletLimits,
} from '../../ports/ledger.js';
import type { Payout } from '../../domain/payout.js';
import type { PaymentMethod } from '../../domain/transaction.js';
import type { Engine } from '../../ports/store.js';
import type { Database } from '../schema.js';
import { runSettlement } from './ledger-settlement.js';
import { DAY_MS } from '../../domain/ledger-settlement.js';
import { postIn, walletBalancesIn } from './refund-books.js';

// The ledger's reads and its check, the same SQL on both engines. Entries are written by the
// repositories whose state changes they record, in the same atomic unit (ledger-write.ts).

export class SqlLedger implements LedgerRepo {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly engine: Engine,
  ) {}

  async entriesOfOrder(order_id: string): Promise<JournalEntry[]> {
    const entries = await this.db
      .selectFrom('ledger_entries')
      .selectAll()
      .where('order_id', '=', order_id)
      .orderBy('created_at')
      .orderBy('entry_key')
      .execute();
    if (entries.length === 0) return [];
    const lines = await this.db
      .selectFrom('ledger_lines')
      .selectAll()
      .where(
        'entry_key',
        'in',
        entries.map((e) => e.entry_key),
      )
      .orderBy('entry_key')
      .orderBy('line_no')
      .execute();
    return entries.map((e) => ({
      ...e,
      lines: lines
        .filter((l) => l.entry_key === e.entry_key)
        .map(({ account, currency, amount }) => ({ account, currency, amount })),
    }));
  }

  async walletBalances(wallet_id: string, currency: string): Promise<WalletBalances> {
    const accounts = WALLET_BALANCES.map((b) => walletAccount(wallet_id, b));
    const rows = await this.db
      .selectFrom('ledger_balances')
      .select(['account', 'balance'])
      .where('account', 'in', accounts)
      .where('currency', '=', currency)
      .execute();
    const of = (account: string) =>
      shownBalance(account, Number(rows.find((r) => r.account === account)?.balance ?? 0));
    const out = { currency } as WalletBalances;
    for (const b of WALLET_BALANCES) out[b] = of(walletAccount(wallet_id, b));
    return out;
  }

  async check(limit = 100): Promise<LedgerCheck> {
    const problems: LedgerProblem[] = [];
    const count = async (table: 'ledger_entries' | 'ledger_lines') =>
      Number(
        (
          await this.db
            .selectFrom(table)
            .select(sql<number>`count(*)`.as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const unbalanced = await this.db
      .selectFrom('ledger_lines')
      .select(['entry_key', 'currency', sql<number>`sum(amount)`.as('sum')])
      .groupBy(['entry_key', 'currency'])
      .having(sql`sum(amount)`, '<>', 0)
      .limit(limit)
      .execute();
    for (const u of unbalanced)
      problems.push({
        kind: 'unbalanced_entry',
        subject: u.entry_key,
        detail: `its ${u.currency} lines sum to ${Number(u.sum)}, not 0`,
      });
    // Every kept balance against the sum of its lines, and every wallet account with lines has a balance.
    const differs = await sql<{ account: string; currency: string; kept: number | null; summed: number | null }>`
      select coalesce(b.account, l.account) as account, coalesce(b.currency, l.currency) as currency,
             b.balance as kept, l.summed as summed
      from ledger_balances b
      full outer join (
        select account, currency, sum(amount) as summed from ledger_lines where account like 'wallet:%' group by account, currency
      ) l on l.account = b.account and l.currency = b.currency
      where coalesce(b.balance, 0) <> coalesce(l.summed, 0)
      limit ${limit}`.execute(this.db);
    for (const d of differs.rows)
      problems.push({
        kind: 'balance_differs',
        subject: `${d.account} ${d.currency}`,
        detail: `kept ${Number(d.kept ?? 0)}, its lines sum to ${Number(d.summed ?? 0)}`,
      });
    // Every wallet account's days add up to its kept balance.
    const days = await sql<{ account: string; currency: string; kept: number | null; summed: number | null }>`
      select coalesce(b.account, d.account) as account, coalesce(b.currency, d.currency) as currency,
             b.balance as kept, d.summed as summed
      from ledger_balances b
      full outer join (select account, currency, sum(amount) as summed from ledger_days group by account, currency) d
        on d.account = b.account and d.currency = b.currency
      where coalesce(b.balance, 0) <> coalesce(d.summed, 0)
      limit ${limit}`.execute(this.db);
    for (const d of days.rows)
      problems.push({
        kind: 'balance_differs',
        subject: `${d.account} ${d.currency}`,
        detail: `kept ${Number(d.kept ?? 0)}, its days sum to ${Number(d.summed ?? 0)}`,
      });
    const missing = await this.db
      .selectFrom('transactions as t')
      .select('t.order_id')
      .where('t.status', '=', 'paid')
      .where(sql<boolean>`not exists (select 1 from ledger_entries e where e.entry_key = 'payment:' || t.order_id)`)
      .limit(limit)
      .execute();
    for (const m of missing)
      problems.push({
        kind: 'paid_order_without_entry',
        subject: m.order_id,
        detail: 'the order is paid and its payment has no ledger entry',
      });
    // A standing refund has its reservation; a made one, its entry out to the provider.
    const refunds = await this.db
      .selectFrom('refunds as r')
      .select(['r.refund_id', 'r.refund_status'])
      .where((eb) =>
        eb.or([
          eb.and([
            eb('r.refund_status', 'in', ['pending', 'succeeded']),
            sql<boolean>`not exists (select 1 from ledger_entries e where e.entry_key = 'refund_reserved:' || r.refund_id)`,
          ]),
          eb.and([
            eb('r.refund_status', '=', 'succeeded'),
            sql<boolean>`not exists (select 1 from ledger_entries e where e.entry_key = 'refund_made:' || r.refund_id)`,
          ]),
        ]),
      )
      .limit(limit)
      .execute();
    for (const r of refunds)
      problems.push({
        kind: 'refund_without_entry',
        subject: r.refund_id,
        detail: `the refund is ${r.refund_status} and its ${r.refund_status === 'pending' ? 'reservation' : 'entries'} not on the books`,
      });
    // A payout has the entries of each state it passed: requested always, then sent (from in_batch),
    // paid, returned or canceled.
    const needs: Array<[string, string[]]> = [
      ['payout_requested', ['requested', 'approved', 'in_batch', 'paid', 'returned', 'canceled']],
      ['payout_sent', ['in_batch', 'paid', 'returned']],
      ['payout_paid', ['paid']],
      ['payout_returned', ['returned']],
      ['payout_canceled', ['canceled']],
    ];
    const payouts = await this.db
      .selectFrom('payouts as p')
      .select(['p.payout_id', 'p.payout_status'])
      .where((eb) =>
        eb.or(
          needs.map(([kind, states]) =>
            eb.and([
              eb('p.payout_status', 'in', states as Payout['payout_status'][]),
              sql<boolean>`not exists (select 1 from ledger_entries e where e.entry_key = ${kind + ':'} || p.payout_id)`,
            ]),
          ),
        ),
      )
      .limit(limit)
      .execute();
    for (const p of payouts)
      problems.push({
        kind: 'payout_without_entry',
        subject: p.payout_id,
        detail: `the payout is ${p.payout_status} and an entry of its way there is not on the books`,
      });
    const paid = await this.db
      .selectFrom('transactions')
      .select(sql<number>`count(*)`.as('n'))
      .where('status', '=', 'paid')
      .executeTakeFirstOrThrow();
    return {
      entries: await count('ledger_entries'),
      lines: await count('ledger_lines'),
      paid_orders: Number(paid.n),
      problems,
    };
  }

  async addFeePlan(plan: Omit<FeePlan, 'version'>): Promise<FeePlan> {
    // The next version in the insert itself; two operators at once on PostgreSQL: the second tries again.
    for (let attempt = 1; ; attempt++) {
      try {
        const row = await sql<{ version: number }>`insert into fee_plans
          (wallet_id, payment_method, version, basis_points, fixed, minimum, maximum, refund_fee, effective_from, created_at, created_by)
          select ${plan.wallet_id}, ${plan.payment_method}, coalesce(max(version), 0) + 1, ${plan.basis_points}, ${plan.fixed},
            ${plan.minimum}, ${plan.maximum}, ${plan.refund_fee}, ${plan.effective_from}, ${plan.created_at}, ${plan.created_by}
          from fee_plans where wallet_id = ${plan.wallet_id} and payment_method = ${plan.payment_method}
          returning version`.execute(this.db);
        return { ...plan, version: Number(row.rows[0].version) };
      } catch (e) {
        if (attempt >= 3) throw e;
      }
    }
  }

  async listFeePlans(filter: { wallet_id?: string; payment_method?: string } = {}): Promise<FeePlan[]> {
    let q = this.db.selectFrom('fee_plans').selectAll();
    if (filter.wallet_id !== undefined) q = q.where('wallet_id', '=', filter.wallet_id);
    if (filter.payment_method !== undefined) q = q.where('payment_method', '=', filter.payment_method);
    // Integers come back as numbers on both engines (PostgreSQL's int8 parser: postgres/open.ts).
    return q.orderBy('wallet_id').orderBy('payment_method').orderBy('version').execute();
  }

  async setSettlementDelay(wallet_id: string, days: number, by: string, now: number): Promise<void> {
    await this.db
      .insertInto('wallet_settlement')
      .values({ wallet_id, delay_days: days, updated_at: now, updated_by: by })
      .onConflict((oc) => oc.column('wallet_id').doUpdateSet({ delay_days: days, updated_at: now, updated_by: by }))
      .execute();
  }

  async settlementDelay(wallet_id: string): Promise<number | undefined> {
    const row = await this.db
      .selectFrom('wallet_settlement')
      .select('delay_days')
      .where('wallet_id', '=', wallet_id)
      .executeTakeFirst();
    return row?.delay_days;
  }

  runSettlement(now: number, defaultDelayDays: number): Promise<SettlementRun> {
    return runSettlement(this.db, this.engine, now, defaultDelayDays);
  }

  async setLimits(l: WalletLimits): Promise<void> {
    const { single_min, single_max, daily_max, updated_at, updated_by } = l;
    await this.db
      .insertInto('wallet_limits')
      .values(l)
      .onConflict((oc) =>
        oc
          .columns(['wallet_id', 'payment_method'])
          .doUpdateSet({ single_min, single_max, daily_max, updated_at, updated_by }),
      )
      .execute();
  }

  listLimits(wallet_id?: string): Promise<WalletLimits[]> {
    let q = this.db.selectFrom('wallet_limits').selectAll();
    if (wallet_id !== undefined) q = q.where('wallet_id', '=', wallet_id);
    return q.orderBy('wallet_id').orderBy('payment_method').execute();
  }

  async paidSince(wallet_id: string, payment_method: string | null, since: number): Promise<number> {
    let q = this.db
      .selectFrom('transactions')
      .select(sql<number | string | null>`sum(amount)`.as('sum'))
      .where('wallet_id', '=', wallet_id)
      .where('status', '=', 'paid')
      .where('pay_time', '>=', since);
    if (payment_method !== null) q = q.where('payment_method', '=', payment_method as PaymentMethod);
    return Number((await q.executeTakeFirst())?.sum ?? 0);
  }

  async statement(
    wallet_id: string,
    currency: string,
    from: number,
    to: number,
    page: { limit?: number; after?: StatementCursor } = {},
  ): Promise<Statement> {
    const accounts = WALLET_BALANCES.map((b) => walletAccount(wallet_id, b));
    // The balances at a time: its days before added up (ledger_days), and the lines of its own day before it.
    const balancesAt = async (at: number): Promise<WalletBalances> => {
      const day = Math.floor(at / DAY_MS) * DAY_MS;
      const [days, lines] = await Promise.all([
        this.db
          .selectFrom('ledger_days')
          .select(['account', sql<number | string>`sum(amount)`.as('sum')])
          .where('account', 'in', accounts)
          .where('currency', '=', currency)
          .where('day', '<', day)
          .groupBy('account')
          .execute(),
        at === day
          ? Promise.resolve([])
          : this.db
              .selectFrom('ledger_lines')
              .select(['account', sql<number | string>`sum(amount)`.as('sum')])
              .where('account', 'in', accounts)
              .where('currency', '=', currency)
              .where('created_at', '>=', day)
              .where('created_at', '<', at)
              .groupBy('account')
              .execute(),
      ]);
      const out = { currency } as WalletBalances;
      for (const b of WALLET_BALANCES) {
        const account = walletAccount(wallet_id, b);
        const sum = [...days, ...lines].filter((r) => r.account === account).reduce((s, r) => s + Number(r.sum), 0);
        out[b] = shownBalance(account, sum);
      }
      return out;
    };
    const limit = page.limit ?? 100_000;
    // Each account's lines in order, read on its index (account, currency, created_at) up to the
    // limit, then merged: an IN over the three accounts would sort every line of the range first.
    const perAccount = await Promise.all(
      accounts.map((account) => {
        let q = this.db
          .selectFrom('ledger_lines as l')
          .innerJoin('ledger_entries as e', 'e.entry_key', 'l.entry_key')
          .select([
            'l.entry_key',
            'l.account',
            'l.amount',
            'l.created_at',
            'e.kind',
            'e.order_id',
            'e.refund_id',
            'e.payout_id',
            'e.memo',
          ])
          .where('l.account', '=', account)
          .where('l.currency', '=', currency)
          .where('l.created_at', '>=', page.after ? page.after.created_at : from)
          .where('l.created_at', '<', to);
        if (page.after)
          q = q.where((eb) =>
            eb.or([eb('l.created_at', '>', page.after!.created_at), eb('l.entry_key', '>', page.after!.entry_key)]),
          );
        return q
          .orderBy('l.created_at')
          .orderBy('l.entry_key')
          .orderBy('l.line_no')
          .limit(limit + 1)
          .execute();
      }),
    );
    const key = (r: { created_at: number; entry_key: string }) =>
      `${String(r.created_at).padStart(15, '0')}\u0000${r.entry_key}`;
    // An account whose lines went past the limit is complete only before its last line's entry.
    let boundary: string | undefined;
    for (const rows of perAccount)
      if (rows.length === limit + 1) {
        const k = key(rows[rows.length - 1]);
        if (boundary === undefined || k < boundary) boundary = k;
      }
    const merged = perAccount
      .flat()
      .filter((r) => boundary === undefined || key(r) < boundary)
      .sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
    const lines: StatementLine[] = [];
    for (const r of merged) {
      let line = lines[lines.length - 1];
      if (line?.entry_key !== r.entry_key) {
        const { entry_key, kind, created_at, order_id, refund_id, payout_id, memo } = r;
        line = {
          entry_key,
          kind,
          created_at,
          order_id,
          refund_id,
          payout_id,
          memo,
          pending: 0,
          available: 0,
          reserved: 0,
        };
        lines.push(line);
      }
      const balance = WALLET_BALANCES.find((b) => walletAccount(wallet_id, b) === r.account)!;
      line[balance] += shownBalance(r.account, Number(r.amount));
    }
    const more = boundary !== undefined || lines.length > limit;
    const shown = lines.slice(0, limit);
    const last = shown[shown.length - 1];
    const [opening, closing] = await Promise.all([balancesAt(from), balancesAt(to)]);
    return {
      wallet_id,
      currency,
      from,
      to,
      opening,
      lines: shown,
      closing,
      ...(more && last && { next: { created_at: last.created_at, entry_key: last.entry_key } }),
    };
  }

  async walletsBalances(
    wallet_ids: readonly string[] | undefined,
  ): Promise<Array<WalletBalances & { wallet_id: string }>> {
    if (wallet_ids !== undefined && wallet_ids.length === 0) return [];
    let q = this.db.selectFrom('ledger_balances').select(['account', 'currency', 'balance']);
    q =
      wallet_ids === undefined
        ? q.where('account', 'like', 'wallet:%')
        : q.where(
            'account',
            'in',
            wallet_ids.flatMap((w) => WALLET_BALANCES.map((b) => walletAccount(w, b))),
          );
    const rows = await q.orderBy('account').execute();
    const out = new Map<string, WalletBalances & { wallet_id: string }>();
    for (const r of rows) {
      const cut = r.account.lastIndexOf(':');
      const wallet_id = r.account.slice('wallet:'.length, cut);
      const balance = r.account.slice(cut + 1) as (typeof WALLET_BALANCES)[number];
      const key = `${wallet_id}\u0000${r.currency}`;
      const row = out.get(key) ?? { wallet_id, currency: r.currency, pending: 0, available: 0, reserved: 0 };
      row[balance] = shownBalance(r.account, Number(r.balance));
      out.set(key, row);
    }
    return [...out.values()];
  }

  async margin(from: number, to: number): Promise<MarginRow[]> {
    // A payment's or a refund's fee by its order's method; a payout's by `payout`.
    const rows = await sql<{ currency: string; payment_method: string; fees: number | string; count: number | string }>`
      select l.currency as currency, coalesce(t.payment_method, 'payout') as payment_method,
             -sum(l.amount) as fees, count(*) as count
      from ledger_lines l
      join ledger_entries e on e.entry_key = l.entry_key
      left join transactions t on t.order_id = e.order_id
      where l.account = ${FEE_REVENUE} and l.created_at >= ${from} and l.created_at < ${to}
      group by l.currency, coalesce(t.payment_method, 'payout')
      order by l.currency, payment_method`.execute(this.db);
    // What the providers charged: the statements' fees, on each method's cost account.
    const prefix = providerFeesAccount('');
    const costs = await sql<{ currency: string; account: string; fees: number | string }>`
      select currency, account, sum(amount) as fees from ledger_lines
      where account like ${`${prefix}%`} and created_at >= ${from} and created_at < ${to}
      group by currency, account`.execute(this.db);
    const out = new Map<string, MarginRow>();
    for (const r of rows.rows)
      out.set(`${r.currency} ${r.payment_method}`, {
        currency: r.currency,
        payment_method: r.payment_method,
        fees: Number(r.fees),
        count: Number(r.count),
        provider_fees: 0,
      });
    for (const c of costs.rows) {
      const payment_method = c.account.slice(prefix.length);
      const key = `${c.currency} ${payment_method}`;
      const row = out.get(key) ?? { currency: c.currency, payment_method, fees: 0, count: 0, provider_fees: 0 };
      row.provider_fees += Number(c.fees);
      out.set(key, row);
    }
    return [...out.values()].sort((a, b) =>
      a.currency === b.currency ? (a.payment_method < b.payment_method ? -1 : 1) : a.currency < b.currency ? -1 : 1,
    );
  }

  async adjust(entry: JournalEntry): Promise<{ ok: true } | { ok: false; available: number }> {
    const line = entry.lines.find((l) => l.account.startsWith('wallet:'))!;
    return this.db.transaction().execute(async (trx) => {
      const balances = await walletBalancesIn(trx, entry.wallet_id!, line.currency, this.engine === 'postgres');
      // The line credits the wallet (negative) or debits it: a debit must fit what is available.
      if (line.amount > 0 && balances.available < line.amount)
        return { ok: false as const, available: balances.available };
      await postIn(trx, entry);
      return { ok: true as const };
    });
  }
}
