import type { Kysely } from 'kysely';
import type { User, UserStatus, Wallet, WalletStatus } from '../../domain/account.js';
import type {
  AccountsRepo,
  NewMerchant,
  NewWallet,
  Organisation,
  StoredChannelAccount,
  WalletChanges,
} from '../../ports/accounts.js';
import type { ProviderName } from '../../ports/connector.js';
import type { PaymentMethod } from '../../domain/transaction.js';
import { prepared } from '../prepared.js';
import { organisationUsers } from '../organisation-scope.js';
import type { Database } from '../schema.js';

/**
 * Users, wallets and rates, alike on both engines but for how a change made elsewhere becomes
 * known (`version`): sqlite.ts and postgres.ts.
 */
export abstract class SqlAccounts implements AccountsRepo {
  /** Changes made through this store, and ones another instance announced (noteExternalChange). */
  protected changes = 0;
  private readonly q;

  constructor(protected readonly db: Kysely<Database>) {
    // Read on every request: compiled once (prepared.ts).
    this.q = {
      user: prepared((p: { user_id: string }) =>
        db
          .selectFrom('users')
          .innerJoin('organisations', 'organisations.organisation_id', 'users.organisation_id')
          .select([
            'users.user_id',
            'users.user_name',
            'users.user_status',
            'users.organisation_id',
            'organisations.organisation_name',
          ])
          .where('users.user_id', '=', p.user_id),
      ),
      wallet: prepared((p: { wallet_id: string }) =>
        db.selectFrom('wallets').selectAll().where('wallet_id', '=', p.wallet_id),
      ),
      rate: prepared((p: { currency_from: string; currency_to: string }) =>
        db
          .selectFrom('rates')
          .select('rate_micros')
          .where('currency_from', '=', p.currency_from)
          .where('currency_to', '=', p.currency_to),
      ),
    };
  }

  abstract get version(): string;
  /** Tells the other processes or instances that users, wallets or rates changed, after a change here. */
  protected abstract announceChange(): Promise<void>;

  /** Another instance changed users, wallets or rates (on PostgreSQL its NOTIFY says so). */
  noteExternalChange(): void {
    this.changes++;
  }

  noteLocalChange(): Promise<void> {
    return this.changed();
  }

  private async changed(): Promise<void> {
    this.changes++;
    await this.announceChange();
  }

  findUser(user_id: string): Promise<User | undefined> {
    return this.q.user.first(this.db, { user_id });
  }

  findWallet(wallet_id: string): Promise<Wallet | undefined> {
    return this.q.wallet.first(this.db, { wallet_id });
  }

  listWallets(user_id: string): Promise<Wallet[]> {
    return this.db.selectFrom('wallets').selectAll().where('user_id', '=', user_id).orderBy('created_at').execute();
  }

  async findRate(currency_from: string, currency_to: string): Promise<number | undefined> {
    return (await this.q.rate.first(this.db, { currency_from, currency_to }))?.rate_micros;
  }

  listRates() {
    return this.db.selectFrom('rates').selectAll().orderBy('currency_from').orderBy('currency_to').execute();
  }

  listOrganisationUsers(organisation_id: number): Promise<User[]> {
    return this.db
      .selectFrom('users')
      .innerJoin('organisations', 'organisations.organisation_id', 'users.organisation_id')
      .select([
        'users.user_id',
        'users.user_name',
        'users.user_status',
        'users.organisation_id',
        'organisations.organisation_name',
      ])
      .where('users.organisation_id', '=', organisation_id)
      .orderBy('users.created_at')
      .execute();
  }

  async renameOrganisation(organisation_id: number, organisation_name: string): Promise<boolean> {
    const r = await this.db
      .updateTable('organisations')
      .set({ organisation_name })
      .where('organisation_id', '=', organisation_id)
      .executeTakeFirst();
    await this.changed();
    return Number(r.numUpdatedRows) > 0;
  }

  async closeOrganisation(organisation_id: number, now: number): Promise<boolean> {
    const r = await this.db
      .updateTable('organisations')
      .set({ closed_at: now })
      .where('organisation_id', '=', organisation_id)
      .where('closed_at', 'is', null)
      .executeTakeFirst();
    await this.changed();
    return Number(r.numUpdatedRows) > 0;
  }

  findOrganisation(organisation_id: number): Promise<Organisation | undefined> {
    return this.db
      .selectFrom('organisations')
      .selectAll()
      .where('organisation_id', '=', organisation_id)
      .executeTakeFirst();
  }

  async listOrganisations(): Promise<Array<Organisation & { active_api_users: number }>> {
    const rows = await this.db
      .selectFrom('organisations')
      .selectAll('organisations')
      .select((eb) =>
        eb
          .selectFrom('users')
          .select(eb.fn.countAll().as('n'))
          .whereRef('users.organisation_id', '=', 'organisations.organisation_id')
          .where('users.user_status', '=', 'active')
          .as('active_api_users'),
      )
      .orderBy('organisation_id')
      .execute();
    // PostgreSQL counts in bigint, which pg reads as a string.
    return rows.map((r) => ({ ...r, active_api_users: Number(r.active_api_users ?? 0) }));
  }

  listOrganisationWallets(organisation_id: number): Promise<Wallet[]> {
    return this.db
      .selectFrom('wallets')
      .selectAll('wallets')
      .where('user_id', 'in', organisationUsers(this.db, organisation_id))
      .orderBy('wallet_id')
      .execute();
  }

  async createMerchant(m: NewMerchant): Promise<{ organisation_id: number }> {
    return this.db
      .transaction()
      .execute(async (trx) => {
        const org = await trx
          .insertInto('organisations')
          .values({ organisation_name: m.organisation_name, created_at: m.now })
          .returning('organisation_id')
          .executeTakeFirstOrThrow();
        await trx
          .insertInto('users')
          .values({
            user_id: m.user_id,
            organisation_id: org.organisation_id,
            user_name: m.user_name,
            user_status: 'active',
            created_at: m.now,
          })
          .execute();
        await trx
          .insertInto('wallets')
          .values({ ...m.wallet, user_id: m.user_id })
          .execute();
        return { organisation_id: Number(org.organisation_id) };
      })
      .finally(() => this.changed());
  }

  async createWallet(wallet: NewWallet): Promise<void> {
    await this.db.insertInto('wallets').values(wallet).execute();
    await this.changed();
  }

  async rotateApiKey(
    wallet_id: string,
    api_key: string,
    previousUntil: number | null,
    replacing?: string,
  ): Promise<boolean> {
    // One statement: the key replaced is the one stored at that moment, whatever another rotation
    // did; with `replacing`, only if that is still the key (a form sent twice rotates once).
    let update = this.db
      .updateTable('wallets')
      .set((eb) => ({
        api_key,
        previous_api_key: previousUntil === null ? null : eb.ref('api_key'),
        previous_key_expires_at: previousUntil,
      }))
      .where('wallet_id', '=', wallet_id);
    if (replacing !== undefined) update = update.where('api_key', '=', replacing);
    const r = await update.executeTakeFirst();
    await this.changed();
    return Number(r.numUpdatedRows) > 0;
  }

  async updateWallet(wallet_id: string, changes: WalletChanges): Promise<Wallet | undefined> {
    const set = Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined)) as WalletChanges;
    if (Object.keys(set).length === 0) return this.findWallet(wallet_id);
    const updated = await this.db
      .updateTable('wallets')
      .set(set)
      .where('wallet_id', '=', wallet_id)
      .returningAll()
      .executeTakeFirst();
    await this.changed();
    return updated;
  }

  async setUserStatus(user_id: string, user_status: UserStatus): Promise<boolean> {
    const r = await this.db.updateTable('users').set({ user_status }).where('user_id', '=', user_id).executeTakeFirst();
    await this.changed();
    return Number(r.numUpdatedRows) > 0;
  }

  async setWalletStatus(wallet_id: string, wallet_status: WalletStatus): Promise<boolean> {
    const r = await this.db
      .updateTable('wallets')
      .set({ wallet_status })
      .where('wallet_id', '=', wallet_id)
      .executeTakeFirst();
    await this.changed();
    return Number(r.numUpdatedRows) > 0;
  }

  findChannelAccount(wallet_id: string, payment_method: PaymentMethod): Promise<StoredChannelAccount | undefined> {
    return this.db
      .selectFrom('channel_accounts')
      .selectAll()
      .where('wallet_id', '=', wallet_id)
      .where('payment_method', '=', payment_method)
      .executeTakeFirst();
  }

  listChannelAccounts(filter: { wallet_id?: string; provider?: ProviderName } = {}): Promise<StoredChannelAccount[]> {
    let q = this.db.selectFrom('channel_accounts').selectAll();
    if (filter.wallet_id !== undefined) q = q.where('wallet_id', '=', filter.wallet_id);
    if (filter.provider !== undefined) q = q.where('provider', '=', filter.provider);
    return q.orderBy('wallet_id').orderBy('payment_method').execute();
  }

  async setChannelAccount(account: StoredChannelAccount): Promise<void> {
    const { provider, config, sealed_secrets, updated_at } = account;
    await this.db
      .insertInto('channel_accounts')
      .values(account)
      .onConflict((oc) =>
        oc.columns(['wallet_id', 'payment_method']).doUpdateSet({ provider, config, sealed_secrets, updated_at }),
      )
      .execute();
    await this.changed();
  }

  async removeChannelAccount(wallet_id: string, payment_method: PaymentMethod): Promise<boolean> {
    const r = await this.db
      .deleteFrom('channel_accounts')
      .where('wallet_id', '=', wallet_id)
      .where('payment_method', '=', payment_method)
      .executeTakeFirst();
    await this.changed();
    return Number(r.numDeletedRows) > 0;
  }

  async setRate(currency_from: string, currency_to: string, rate_micros: number, now: number): Promise<void> {
    await this.db
      .insertInto('rates')
      .values({ currency_from, currency_to, rate_micros, updated_at: now })
      .onConflict((oc) => oc.columns(['currency_from', 'currency_to']).doUpdateSet({ rate_micros, updated_at: now }))
      .execute();
    await this.changed();
  }
}
