import type { Kysely } from 'kysely';
import type { AutoPayoutDay, AutoPayoutSetting } from '../../domain/auto-payout.js';
import type { BankAccount } from '../../domain/bank-account.js';
import {
  fromStates,
  payoutCanceledEntry,
  payoutPaidEntry,
  payoutRequestedEntry,
  payoutReturnedEntry,
  payoutSentEntry,
  type Payout,
  type PayoutStatus,
} from '../../domain/payout.js';
import type { PayoutBatch, PayoutMoveResult, PayoutRequestResult, PayoutsRepo } from '../../ports/payouts.js';
import type { Engine } from '../../ports/store.js';
import { postIn, walletBalancesIn } from '../ledger/refund-books.js';
import type { Database } from '../schema.js';

// Payouts on both engines. A state change and its ledger entry are one transaction; on PostgreSQL
// the payout's row (and, for a request, the wallet's balance rows) are locked first, so two
// operators marking one payout at once, or a payout requested beside a refund, take turns.

class CannotCover extends Error {
  constructor(readonly available: number) {
    super('available cannot cover the payout');
  }
}
class DayHasOne extends Error {
  constructor() {
    super("the wallet's day has its automatic payout");
  }
}

export class SqlPayouts implements PayoutsRepo {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly engine: Engine,
  ) {}

  private get locks(): boolean {
    return this.engine === 'postgres';
  }

  async addBankAccount(a: BankAccount): Promise<void> {
    await this.db.insertInto('bank_accounts').values(a).execute();
  }

  findBankAccount(bank_account_id: string): Promise<BankAccount | undefined> {
    return this.db
      .selectFrom('bank_accounts')
      .selectAll()
      .where('bank_account_id', '=', bank_account_id)
      .executeTakeFirst();
  }

  listBankAccounts(wallet_id?: string): Promise<BankAccount[]> {
    let q = this.db.selectFrom('bank_accounts').selectAll();
    if (wallet_id !== undefined) q = q.where('wallet_id', '=', wallet_id);
    return q.orderBy('created_at').orderBy('bank_account_id').execute();
  }

  async verifyBankAccount(bank_account_id: string, by: string, now: number): Promise<BankAccount | undefined> {
    await this.db
      .updateTable('bank_accounts')
      .set({ verified_at: now, verified_by: by })
      .where('bank_account_id', '=', bank_account_id)
      .where('verified_at', 'is', null)
      .execute();
    return this.findBankAccount(bank_account_id);
  }

  async request(payout: Payout, auto_day?: number): Promise<PayoutRequestResult> {
    try {
      await this.db.transaction().execute(async (trx) => {
        // The day's row first: another instance's payout for the day waits here, then finds it.
        if (auto_day !== undefined && !(await this.claimDay(trx, payout, auto_day))) throw new DayHasOne();
        const balances = await walletBalancesIn(trx, payout.wallet_id, payout.currency, this.locks);
        if (balances.available < payout.amount + payout.fee) throw new CannotCover(balances.available);
        await trx.insertInto('payouts').values(payout).execute();
        if (auto_day !== undefined)
          await trx
            .updateTable('auto_payout_days')
            .set({ payout_id: payout.payout_id })
            .where('wallet_id', '=', payout.wallet_id)
            .where('day', '=', auto_day)
            .execute();
        await postIn(trx, payoutRequestedEntry(payout, payout.requested_at));
      });
      return { ok: true };
    } catch (e) {
      if (e instanceof CannotCover) return { ok: false, available: e.available };
      if (e instanceof DayHasOne) return { ok: false, already: true };
      throw e;
    }
  }

  private async claimDay(trx: Kysely<Database>, payout: Payout, day: number): Promise<boolean> {
    // Claimed before the payout exists (its id is filled in once it does, in this transaction).
    const inserted = await trx
      .insertInto('auto_payout_days')
      .values({ wallet_id: payout.wallet_id, day, payout_id: null, note: null, created_at: payout.requested_at })
      .onConflict((oc) => oc.columns(['wallet_id', 'day']).doNothing())
      .executeTakeFirst();
    return Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  async move(
    payout_id: string,
    to: 'approved' | 'canceled' | 'paid' | 'returned',
    by: string,
    now: number,
    reason?: string,
  ): Promise<PayoutMoveResult> {
    return this.db.transaction().execute(async (trx): Promise<PayoutMoveResult> => {
      let read = trx.selectFrom('payouts').selectAll().where('payout_id', '=', payout_id);
      if (this.locks) read = read.forUpdate();
      const before = await read.executeTakeFirst();
      if (!before || !fromStates(to).includes(before.payout_status))
        return { ok: false, status: before?.payout_status };
      const payout: Payout = {
        ...before,
        payout_status: to,
        updated_at: now,
        updated_by: by,
        ...(to === 'returned' && { return_reason: reason ?? null }),
      };
      await trx
        .updateTable('payouts')
        .set({ payout_status: to, updated_at: now, updated_by: by, return_reason: payout.return_reason })
        .where('payout_id', '=', payout_id)
        .execute();
      if (to === 'canceled') await postIn(trx, payoutCanceledEntry(payout, now));
      if (to === 'paid') await postIn(trx, payoutPaidEntry(payout, now));
      if (to === 'returned') await postIn(trx, payoutReturnedEntry(payout, reason ?? '', now));
      return { ok: true, payout };
    });
  }

  async batch(
    currency: string,
    batch_id: string,
    by: string,
    now: number,
  ): Promise<{ batch: PayoutBatch; payouts: Payout[] } | undefined> {
    return this.db.transaction().execute(async (trx) => {
      let q = trx
        .selectFrom('payouts')
        .selectAll()
        .where('payout_status', '=', 'approved')
        .where('currency', '=', currency)
        .orderBy('requested_at')
        .orderBy('payout_id');
      // Another operator's batch at the same time takes the rows it locked; this one the rest.
      if (this.locks) q = q.forUpdate().skipLocked();
      const approved = await q.execute();
      if (approved.length === 0) return undefined;
      const batch: PayoutBatch = {
        batch_id,
        currency,
        payout_count: approved.length,
        total: approved.reduce((s, p) => s + p.amount, 0),
        created_at: now,
        created_by: by,
      };
      await trx.insertInto('payout_batches').values(batch).execute();
      const payouts: Payout[] = [];
      for (const p of approved) {
        const moved: Payout = { ...p, payout_status: 'in_batch', batch_id, updated_at: now, updated_by: by };
        await trx
          .updateTable('payouts')
          .set({ payout_status: 'in_batch', batch_id, updated_at: now, updated_by: by })
          .where('payout_id', '=', p.payout_id)
          .execute();
        await postIn(trx, payoutSentEntry(moved, batch_id, now));
        payouts.push(moved);
      }
      return { batch, payouts };
    });
  }

  find(payout_id: string): Promise<Payout | undefined> {
    return this.db.selectFrom('payouts').selectAll().where('payout_id', '=', payout_id).executeTakeFirst();
  }

  list(
    filter: { wallet_id?: string; status?: PayoutStatus; batch_id?: string; limit?: number } = {},
  ): Promise<Payout[]> {
    let q = this.db.selectFrom('payouts').selectAll();
    if (filter.wallet_id !== undefined) q = q.where('wallet_id', '=', filter.wallet_id);
    if (filter.status !== undefined) q = q.where('payout_status', '=', filter.status);
    if (filter.batch_id !== undefined) q = q.where('batch_id', '=', filter.batch_id);
    return q
      .orderBy('requested_at', 'desc')
      .orderBy('payout_id')
      .limit(filter.limit ?? 500)
      .execute();
  }

  listBatches(limit = 100): Promise<PayoutBatch[]> {
    return this.db.selectFrom('payout_batches').selectAll().orderBy('created_at', 'desc').limit(limit).execute();
  }

  findBatch(batch_id: string): Promise<PayoutBatch | undefined> {
    return this.db.selectFrom('payout_batches').selectAll().where('batch_id', '=', batch_id).executeTakeFirst();
  }

  async setAutoPayout(setting: AutoPayoutSetting | { wallet_id: string; off: true }): Promise<void> {
    if ('off' in setting) {
      await this.db.deleteFrom('wallet_auto_payouts').where('wallet_id', '=', setting.wallet_id).execute();
      return;
    }
    const { above, keep, updated_at, updated_by } = setting;
    await this.db
      .insertInto('wallet_auto_payouts')
      .values(setting)
      .onConflict((oc) => oc.column('wallet_id').doUpdateSet({ above, keep, updated_at, updated_by }))
      .execute();
  }

  autoPayout(wallet_id: string): Promise<AutoPayoutSetting | undefined> {
    return this.db.selectFrom('wallet_auto_payouts').selectAll().where('wallet_id', '=', wallet_id).executeTakeFirst();
  }

  dueAutoPayouts(day: number): Promise<AutoPayoutSetting[]> {
    return this.db
      .selectFrom('wallet_auto_payouts as s')
      .selectAll('s')
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('auto_payout_days as d')
              .select('d.day')
              .whereRef('d.wallet_id', '=', 's.wallet_id')
              .where('d.day', '=', day),
          ),
        ),
      )
      .orderBy('s.wallet_id')
      .execute();
  }

  async skipAutoPayout(skip: AutoPayoutDay): Promise<boolean> {
    const inserted = await this.db
      .insertInto('auto_payout_days')
      .values(skip)
      .onConflict((oc) => oc.columns(['wallet_id', 'day']).doNothing())
      .executeTakeFirst();
    return Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  autoPayoutDays(wallet_id: string, limit: number): Promise<AutoPayoutDay[]> {
    return this.db
      .selectFrom('auto_payout_days')
      .selectAll()
      .where('wallet_id', '=', wallet_id)
      .orderBy('day', 'desc')
      .limit(limit)
      .execute();
  }
}
