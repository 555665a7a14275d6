import type { User, UserStatus, Wallet, WalletStatus } from '../domain/account.js';
import type { PaymentMethod } from '../domain/transaction.js';
import type { ProviderName } from './connector.js';

// Users, wallets and exchange rates: read on every request, changed by administration (the CLI,
// later the console), often from another process or instance.

export type NewWallet = Omit<
  Wallet,
  'legacy_signatures' | 'previous_api_key' | 'previous_key_expires_at' | 'wallet_status'
> & { legacy_signatures?: 0 | 1 };

export interface NewMerchant {
  organisation_name: string;
  user_id: string;
  user_name: string;
  wallet: Omit<NewWallet, 'user_id'>;
  now: number;
}

/** What administration may change of a wallet; a field left out is kept. */
export interface WalletChanges {
  wallet_name?: string;
  payment_methods?: string;
  legacy_signatures?: 0 | 1;
}

/** A channel account as stored: its config as JSON, its secrets sealed (domain/sealed.ts). */
export interface StoredChannelAccount {
  wallet_id: string;
  payment_method: PaymentMethod;
  provider: ProviderName;
  /** JSON object of the provider's ids and public material. */
  config: string;
  /** The secrets' JSON, sealed with the master key. */
  sealed_secrets: string;
  created_at: number;
  updated_at: number;
}

export interface Organisation {
  organisation_id: number;
  organisation_name: string;
  created_at: number;
  /** When it was closed (its users, wallets and console users disabled for good); null while open. */
  closed_at: number | null;
}

export interface AccountsRepo {
  /** Changes whenever users, wallets or rates may have changed: here, in another process (the CLI), or on another instance. */
  readonly version: string;
  /**
   * Something kept beside the accounts and cached with them (a wallet's limits) was changed here:
   * `version` moves, and the other instances are told as for a change to the accounts.
   */
  noteLocalChange(): Promise<void>;
  findUser(user_id: string): Promise<User | undefined>;
  findWallet(wallet_id: string): Promise<Wallet | undefined>;
  /** The user's wallets, oldest first. */
  listWallets(user_id: string): Promise<Wallet[]>;
  /** Millionths of `currency_to` per unit of `currency_from`. */
  findRate(currency_from: string, currency_to: string): Promise<number | undefined>;

  /** Every rate, by currency pair. */
  listRates(): Promise<Array<{ currency_from: string; currency_to: string; rate_micros: number; updated_at: number }>>;
  /** The organisation's users (API users), oldest first. */
  listOrganisationUsers(organisation_id: number): Promise<User[]>;
  /** False when there is no such organisation. */
  renameOrganisation(organisation_id: number, organisation_name: string): Promise<boolean>;
  /** Marks an open organisation closed; false when it is closed already (or not there). */
  closeOrganisation(organisation_id: number, now: number): Promise<boolean>;
  createMerchant(m: NewMerchant): Promise<{ organisation_id: number }>;
  findOrganisation(organisation_id: number): Promise<Organisation | undefined>;
  /** Every organisation, with how many of its API users are active (none: it is disabled). */
  listOrganisations(): Promise<Array<Organisation & { active_api_users: number }>>;
  /** The wallets of an organisation's users, with the user each belongs to. */
  listOrganisationWallets(organisation_id: number): Promise<Wallet[]>;
  createWallet(wallet: NewWallet): Promise<void>;
  /**
   * Gives the wallet a new key; the one it replaces keeps verifying until `previousUntil` (null:
   * not at all, as for a key that was exposed). False when there is no such wallet.
   */
  /** False when there is no such wallet, or (given `replacing`) its key is another by now. */
  rotateApiKey(wallet_id: string, api_key: string, previousUntil: number | null, replacing?: string): Promise<boolean>;
  /** The wallet as changed, or undefined when there is no such wallet. */
  updateWallet(wallet_id: string, changes: WalletChanges): Promise<Wallet | undefined>;
  setUserStatus(user_id: string, user_status: UserStatus): Promise<boolean>;
  setWalletStatus(wallet_id: string, wallet_status: WalletStatus): Promise<boolean>;
  setRate(currency_from: string, currency_to: string, rate_micros: number, now: number): Promise<void>;

  findChannelAccount(wallet_id: string, payment_method: PaymentMethod): Promise<StoredChannelAccount | undefined>;
  /** Channel accounts, by wallet and method; of one wallet or one provider when asked. */
  listChannelAccounts(filter?: { wallet_id?: string; provider?: ProviderName }): Promise<StoredChannelAccount[]>;
  /** Creates or replaces the wallet's account for the method. */
  setChannelAccount(account: StoredChannelAccount): Promise<void>;
  removeChannelAccount(wallet_id: string, payment_method: PaymentMethod): Promise<boolean>;
}
