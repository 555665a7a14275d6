import { promisify } from 'node:util';
import { gunzip as gunzipCb, gzip as gzipCb } from 'node:zlib';
import type { Kysely } from 'kysely';
import type { JournalEntry } from '../../domain/ledger.js';
import type { ExceptionAction, ExceptionKind, KnownPayment, KnownRefund } from '../../domain/reconciliation.js';
import type {
  ExceptionFilter,
  MoneyException,
  ProviderStatement,
  ReconciliationRepo,
  StatementDay,
  StoredStatementLine,
  UnmatchedRecord,
} from '../../ports/reconciliation.js';
import type { Engine } from '../../ports/store.js';
import { postIn } from '../ledger/refund-books.js';
import type { Database } from '../schema.js';

// Reconciliation on both engines. A statement is begun (`importing`, its raw file kept gzipped),
// its lines written in parts (each one transaction, with the exceptions they raise), then finished
// in one transaction with its fee entries and the earlier exceptions it resolves (what it found
// that an earlier statement lacked); the account's day is its unique key, so a second import
// (another instance, a repeated command) writes nothing, and one left `importing` by a crash is
// discarded whole before the day is imported again.

const gzip = promisify(gzipCb);
const gunzip = promisify(gunzipCb);

/** Rows per multi-row insert and per `in (...)` list: well inside both engines' limits on parameters. */
const CHUNK = 500;

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK));
  return out;
}

export class SqlReconciliation implements ReconciliationRepo {
  constructor(
    private readonly db: Kysely<Database>,
    readonly engine: Engine,
  ) {}

  findStatement(provider: string, merchant_id: string, statement_date: string) {
    return statementOfDay(this.db, provider, merchant_id, statement_date);
  }

  async beginStatement(statement: ProviderStatement, raw: Uint8Array, staleBefore: number) {
    // Compressed before the transaction, off the event loop: a large file's gzip takes a while.
    const packed = await gzip(raw);
    const day = [statement.provider, statement.merchant_id, statement.statement_date] as const;
    return this.db.transaction().execute(async (trx) => {
      const before = await statementOfDay(trx, ...day);
      if (before?.status === 'imported') return { kind: 'imported' as const, statement: before };
      if (before && Number(before.imported_at) >= staleBefore) return { kind: 'busy' as const, statement: before };
      // Left half-written by an import that stopped: its parts go, and it starts again.
      if (before) await discard(trx, before.statement_id);
      const inserted = await trx
        .insertInto('provider_statements')
        .values({ ...statement, status: 'importing', raw: packed })
        .onConflict((oc) => oc.columns(['provider', 'merchant_id', 'statement_date']).doNothing())
        .executeTakeFirst();
      if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) {
        const other = (await statementOfDay(trx, ...day))!;
        return { kind: other.status === 'imported' ? ('imported' as const) : ('busy' as const), statement: other };
      }
      return { kind: 'begun' as const };
    });
  }

  async saveStatementPart(statement_id: string, lines: StoredStatementLine[], exceptions: MoneyException[]) {
    await this.db.transaction().execute(async (trx) => {
      // An exception seen before (live, or another day's statement) stays the one: lines name it.
      const idOf = new Map<string, string>();
      for (const part of chunks(exceptions)) {
        await trx
          .insertInto('money_exceptions')
          .values(part)
          .onConflict((oc) => oc.column('dedupe_key').doNothing())
          .execute();
        const rows = await trx
          .selectFrom('money_exceptions')
          .select(['exception_id', 'dedupe_key'])
          .where(
            'dedupe_key',
            'in',
            part.map((e) => e.dedupe_key),
          )
          .execute();
        const byKey = new Map(rows.map((r) => [r.dedupe_key, r.exception_id]));
        for (const e of part) idOf.set(e.exception_id, byKey.get(e.dedupe_key)!);
      }
      for (const part of chunks(lines))
        await trx
          .insertInto('statement_lines')
          .values(part.map((l) => ({ ...l, statement_id, exception_id: l.exception_id && idOf.get(l.exception_id)! })))
          .execute();
    });
  }

  async discardStatement(statement_id: string): Promise<void> {
    await this.db.transaction().execute((trx) => discard(trx, statement_id));
  }

  async finishStatement(
    statement: ProviderStatement,
    entries: JournalEntry[],
    found?: { keys: ReadonlySet<string>; by: string; note: string },
  ): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const done = await trx
        .updateTable('provider_statements')
        .set({
          status: 'imported',
          line_count: statement.line_count,
          matched_count: statement.matched_count,
          exception_count: statement.exception_count,
          fees: statement.fees,
          imported_at: statement.imported_at,
        })
        .where('statement_id', '=', statement.statement_id)
        .where('status', '=', 'importing')
        .executeTakeFirst();
      if (Number(done.numUpdatedRows) === 0) return false;
      for (const entry of entries) await postIn(trx, entry);
      if (found) await resolveKeysIn(trx, found.keys, found.by, found.note, statement.imported_at);
      return true;
    });
  }

  statementById(statement_id: string): Promise<ProviderStatement | undefined> {
    return this.db
      .selectFrom('provider_statements')
      .select(STATEMENT_COLUMNS)
      .where('statement_id', '=', statement_id)
      .executeTakeFirst();
  }

  async statementRaw(statement_id: string): Promise<Uint8Array | undefined> {
    const row = await this.db
      .selectFrom('provider_statements')
      .select('raw')
      .where('statement_id', '=', statement_id)
      .executeTakeFirst();
    return row && new Uint8Array(await gunzip(row.raw));
  }

  statementLines(statement_id: string, limit: number, after = 0): Promise<StoredStatementLine[]> {
    return this.db
      .selectFrom('statement_lines')
      .selectAll()
      .where('statement_id', '=', statement_id)
      .where('line_no', '>', after)
      .orderBy('line_no')
      .limit(limit)
      .execute();
  }

  listStatements(filter: { wallet_id?: string; limit?: number }): Promise<ProviderStatement[]> {
    let q = this.db.selectFrom('provider_statements').select(STATEMENT_COLUMNS);
    if (filter.wallet_id !== undefined) q = q.where('wallet_id', '=', filter.wallet_id);
    return q
      .orderBy('statement_date', 'desc')
      .orderBy('imported_at', 'desc')
      .limit(filter.limit ?? 100)
      .execute();
  }

  async knownPayments(out_trade_nos: readonly string[]) {
    const out = new Map<string, KnownPayment & { wallet_id: string; provider: string }>();
    for (const part of chunks([...new Set(out_trade_nos)])) {
      const rows = await this.db
        .selectFrom('channel_payments as cp')
        .innerJoin('transactions as t', 't.order_id', 'cp.order_id')
        .select([
          'cp.out_trade_no',
          'cp.order_id',
          'cp.provider',
          'cp.charged_amount',
          'cp.charged_currency',
          'cp.state',
          't.status',
          't.wallet_id',
        ])
        .where('cp.out_trade_no', 'in', part)
        .execute();
      if (rows.length === 0) continue;
      const paid = await this.db
        .selectFrom('channel_payments')
        .select(['order_id', 'out_trade_no'])
        .where(
          'order_id',
          'in',
          rows.map((r) => r.order_id),
        )
        .where('state', '=', 'paid')
        .execute();
      const paidOf = new Map<string, string[]>();
      for (const p of paid) paidOf.set(p.order_id, [...(paidOf.get(p.order_id) ?? []), p.out_trade_no]);
      for (const r of rows)
        out.set(r.out_trade_no, {
          order_id: r.order_id,
          order_status: r.status,
          charged_amount: Number(r.charged_amount),
          charged_currency: r.charged_currency,
          paid_this: r.state === 'paid',
          paid_other: (paidOf.get(r.order_id) ?? []).some((o) => o !== r.out_trade_no),
          wallet_id: r.wallet_id,
          provider: r.provider,
        });
    }
    return out;
  }

  async knownRefunds(refund_ids: readonly string[]) {
    const out = new Map<string, KnownRefund & { wallet_id: string }>();
    for (const part of chunks([...new Set(refund_ids)])) {
      const rows = await this.db
        .selectFrom('refunds as r')
        .innerJoin('transactions as t', 't.order_id', 'r.order_id')
        .select(['r.refund_id', 'r.order_id', 'r.refund_status', 'r.channel_amount', 't.wallet_id', 't.currency'])
        .where('r.refund_id', 'in', part)
        .execute();
      const paid = await this.db
        .selectFrom('channel_payments')
        .select(['order_id', 'charged_currency'])
        .where('order_id', 'in', rows.length ? rows.map((r) => r.order_id) : [''])
        .where('state', '=', 'paid')
        .execute();
      for (const r of rows)
        out.set(r.refund_id, {
          refund_id: r.refund_id,
          order_id: r.order_id,
          refund_status: r.refund_status,
          channel_amount: r.channel_amount === null ? null : Number(r.channel_amount),
          charged_currency: paid.find((p) => p.order_id === r.order_id)?.charged_currency ?? r.currency,
          wallet_id: r.wallet_id,
        });
    }
    return out;
  }

  /** The wallets' entries of a kind posted in [from, to), with the provider's paid payment of their order. */
  private dayEntries(
    kind: 'payment' | 'refund_made',
    provider: string,
    wallet_ids: readonly string[],
    from: number,
    to: number,
  ) {
    return this.db
      .selectFrom('ledger_entries as e')
      .innerJoin('channel_payments as cp', (j) =>
        j.onRef('cp.order_id', '=', 'e.order_id').on('cp.state', '=', 'paid').on('cp.provider', '=', provider),
      )
      .where('e.kind', '=', kind)
      .where('e.wallet_id', 'in', wallet_ids)
      .where('e.created_at', '>=', from)
      .where('e.created_at', '<', to);
  }

  async unmatched(provider: string, wallet_ids: readonly string[], from: number, to: number) {
    if (wallet_ids.length === 0) return [];
    const payments = await this.dayEntries('payment', provider, wallet_ids, from, to)
      .select([
        'e.wallet_id',
        'e.order_id',
        'cp.out_trade_no',
        'cp.charged_amount',
        'cp.charged_currency',
        'e.created_at',
      ])
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('statement_lines as sl')
              .select('sl.line_no')
              .whereRef('sl.out_trade_no', '=', 'cp.out_trade_no')
              .where('sl.kind', '=', 'payment'),
          ),
        ),
      )
      .execute();
    const refunds = await this.dayEntries('refund_made', provider, wallet_ids, from, to)
      .innerJoin('refunds as r', 'r.refund_id', 'e.refund_id')
      .select([
        'e.wallet_id',
        'e.order_id',
        'cp.out_trade_no',
        'e.refund_id',
        'r.channel_amount',
        'cp.charged_currency',
        'e.created_at',
      ])
      .where((eb) =>
        eb.not(
          eb.exists(
            eb.selectFrom('statement_lines as sl').select('sl.line_no').whereRef('sl.refund_id', '=', 'e.refund_id'),
          ),
        ),
      )
      .execute();
    const out: UnmatchedRecord[] = [
      ...payments.map((p) => ({
        wallet_id: p.wallet_id!,
        order_id: p.order_id!,
        out_trade_no: p.out_trade_no,
        refund_id: null,
        amount: Number(p.charged_amount),
        currency: p.charged_currency,
        at: Number(p.created_at),
      })),
      ...refunds.map((r) => ({
        wallet_id: r.wallet_id!,
        order_id: r.order_id!,
        out_trade_no: r.out_trade_no,
        refund_id: r.refund_id,
        amount: Number(r.channel_amount ?? 0),
        currency: r.charged_currency,
        at: Number(r.created_at),
      })),
    ];
    return out;
  }

  async claimDay(
    day: Omit<StatementDay, 'statement_id' | 'attempts' | 'last_error' | 'updated_at'>,
    now: number,
  ): Promise<boolean> {
    const done = await this.db
      .insertInto('statement_days')
      .values({ ...day, statement_id: null, attempts: 0, last_error: null, updated_at: now })
      .onConflict((oc) =>
        oc
          .columns(['provider', 'merchant_id', 'statement_date'])
          .doUpdateSet({ claimed_until: day.claimed_until, updated_at: now })
          .where('statement_days.statement_id', 'is', null)
          .where('statement_days.next_try_at', '<=', now)
          .where((eb) =>
            eb.or([eb('statement_days.claimed_until', 'is', null), eb('statement_days.claimed_until', '<', now)]),
          ),
      )
      .executeTakeFirst();
    return Number(done.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  async finishDay(
    key: Pick<StatementDay, 'provider' | 'merchant_id' | 'statement_date'>,
    done: { statement_id: string } | { error: string; next_try_at: number },
    now: number,
  ): Promise<void> {
    await this.db
      .updateTable('statement_days')
      .set((eb) =>
        'statement_id' in done
          ? { statement_id: done.statement_id, claimed_until: null, last_error: null, updated_at: now }
          : {
              attempts: eb('attempts', '+', 1),
              next_try_at: done.next_try_at,
              last_error: done.error.slice(0, 500),
              claimed_until: null,
              updated_at: now,
            },
      )
      .where('provider', '=', key.provider)
      .where('merchant_id', '=', key.merchant_id)
      .where('statement_date', '=', key.statement_date)
      .execute();
  }

  async listDays(filter: { imported?: boolean; limit?: number }): Promise<StatementDay[]> {
    let q = this.db.selectFrom('statement_days').selectAll();
    if (filter.imported === true) q = q.where('statement_id', 'is not', null);
    if (filter.imported === false) q = q.where('statement_id', 'is', null);
    const rows = await q
      .orderBy('statement_date', 'desc')
      .orderBy('provider')
      .orderBy('merchant_id')
      .limit(filter.limit ?? 200)
      .execute();
    return rows.map((r) => ({
      ...r,
      next_try_at: Number(r.next_try_at),
      claimed_until: r.claimed_until === null ? null : Number(r.claimed_until),
      updated_at: Number(r.updated_at),
    }));
  }

  async newestStatements() {
    const rows = await this.db
      .selectFrom('provider_statements')
      .select(['provider', 'merchant_id', (eb) => eb.fn.max('statement_date').as('statement_date')])
      .where('status', '=', 'imported')
      .groupBy(['provider', 'merchant_id'])
      .execute();
    const out = [];
    for (const r of rows) {
      const s = await this.findStatement(r.provider, r.merchant_id, String(r.statement_date));
      if (s)
        out.push({
          provider: s.provider,
          merchant_id: s.merchant_id,
          statement_date: s.statement_date,
          imported_at: Number(s.imported_at),
        });
    }
    return out;
  }

  async raiseException(e: MoneyException): Promise<{ raised: boolean; exception: MoneyException }> {
    const inserted = await this.db
      .insertInto('money_exceptions')
      .values(e)
      .onConflict((oc) => oc.column('dedupe_key').doNothing())
      .executeTakeFirst();
    const exception = await this.db
      .selectFrom('money_exceptions')
      .selectAll()
      .where('dedupe_key', '=', e.dedupe_key)
      .executeTakeFirstOrThrow();
    return { raised: Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0, exception: normal(exception) };
  }

  async findException(exception_id: string): Promise<MoneyException | undefined> {
    const row = await this.db
      .selectFrom('money_exceptions')
      .selectAll()
      .where('exception_id', '=', exception_id)
      .executeTakeFirst();
    return row && normal(row);
  }

  async listExceptions(filter: ExceptionFilter): Promise<MoneyException[]> {
    let q = this.db.selectFrom('money_exceptions').selectAll();
    if (filter.status !== undefined) q = q.where('exception_status', '=', filter.status);
    if (filter.kind !== undefined) q = q.where('kind', '=', filter.kind);
    if (filter.wallet_id !== undefined) q = q.where('wallet_id', '=', filter.wallet_id);
    const rows = await q
      .orderBy('created_at', 'desc')
      .orderBy('exception_id')
      .limit(filter.limit ?? 200)
      .execute();
    return rows.map(normal);
  }

  async openCounts(): Promise<Array<{ kind: ExceptionKind; count: number }>> {
    const rows = await this.db
      .selectFrom('money_exceptions')
      .select(['kind', (eb) => eb.fn.countAll<number | string>().as('count')])
      .where('exception_status', '=', 'open')
      .groupBy('kind')
      .orderBy('kind')
      .execute();
    return rows.map((r) => ({ kind: r.kind, count: Number(r.count) }));
  }

  async resolveException(
    exception_id: string,
    resolution: ExceptionAction | 'auto',
    by: string,
    note: string,
    now: number,
  ): Promise<MoneyException | undefined> {
    const done = await this.db
      .updateTable('money_exceptions')
      .set({ exception_status: 'resolved', resolution, resolved_by: by, resolved_at: now, note })
      .where('exception_id', '=', exception_id)
      .where('exception_status', '=', 'open')
      .executeTakeFirst();
    if (Number(done.numUpdatedRows) === 0) return undefined;
    return this.findException(exception_id);
  }
}

/** An account's statement of a day, if there is one (the day is its unique key). */
function statementOfDay(db: Kysely<Database>, provider: string, merchant_id: string, statement_date: string) {
  return db
    .selectFrom('provider_statements')
    .select(STATEMENT_COLUMNS)
    .where('provider', '=', provider)
    .where('merchant_id', '=', merchant_id)
    .where('statement_date', '=', statement_date)
    .executeTakeFirst();
}

/**
 * Resolves the open exceptions with these keys (a later statement found what an earlier lacked).
 * The keys are two for each line of the statement, the open exceptions of those kinds few: these
 * are read and matched here, so that the finishing unit writes only what it resolves.
 */
async function resolveKeysIn(
  trx: Kysely<Database>,
  wanted: ReadonlySet<string>,
  by: string,
  note: string,
  now: number,
): Promise<void> {
  if (wanted.size === 0) return;
  const open = await trx
    .selectFrom('money_exceptions')
    .select(['exception_id', 'dedupe_key'])
    .where('exception_status', '=', 'open')
    .where('kind', 'in', ['missing_payment', 'missing_refund'])
    .execute();
  const ids = open.filter((e) => wanted.has(e.dedupe_key)).map((e) => e.exception_id);
  for (const part of chunks(ids))
    await trx
      .updateTable('money_exceptions')
      .set({ exception_status: 'resolved', resolution: 'auto', resolved_by: by, resolved_at: now, note })
      .where('exception_id', 'in', part)
      .where('exception_status', '=', 'open')
      .execute();
}

/** A statement still importing, with its lines and the open exceptions it raised. */
async function discard(trx: Kysely<Database>, statement_id: string): Promise<void> {
  const importing = await trx
    .selectFrom('provider_statements')
    .select('statement_id')
    .where('statement_id', '=', statement_id)
    .where('status', '=', 'importing')
    .executeTakeFirst();
  if (!importing) return;
  await trx.deleteFrom('statement_lines').where('statement_id', '=', statement_id).execute();
  await trx
    .deleteFrom('money_exceptions')
    .where('statement_id', '=', statement_id)
    .where('exception_status', '=', 'open')
    .execute();
  await trx.deleteFrom('provider_statements').where('statement_id', '=', statement_id).execute();
}

const STATEMENT_COLUMNS = [
  'statement_id',
  'status',
  'provider',
  'merchant_id',
  'statement_date',
  'wallet_id',
  'payment_method',
  'format',
  'raw_sha256',
  'line_count',
  'matched_count',
  'exception_count',
  'fees',
  'source',
  'imported_at',
  'imported_by',
] as const;

/** Numbers as numbers (PostgreSQL's bigint arrives as text where no parser is set). */
function normal(e: MoneyException): MoneyException {
  return {
    ...e,
    created_at: Number(e.created_at),
    resolved_at: e.resolved_at === null ? null : Number(e.resolved_at),
    line_no: e.line_no === null ? null : Number(e.line_no),
  };
}
