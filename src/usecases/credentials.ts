import type { User, Wallet } from '../domain/account.js';
import type { PaymentMethod } from '../domain/transaction.js';
import type { AccountsRepo, StoredChannelAccount } from '../ports/accounts.js';
import type { ChannelAccount, ProviderName } from '../ports/connector.js';
import type { WalletLimits } from '../ports/ledger.js';

/**
 * Users, wallets, rates and wallets' limits are read on every request and change rarely (by the CLI, often from
 * another process). They are kept for at most `ttlMs`, and forgotten at once when the accounts'
 * version moves: an administrative change in this process, a commit by another
 * process to the SQLite file (the CLI), or a NOTIFY from another PostgreSQL instance or CLI.
 * Besides, a cached value may only speed up a request that succeeds: every refusal is checked
 * again against the store (`fresh`).
 */
export class CredentialCache {
  private readonly users = new Map<string, Entry<User>>();
  private readonly wallets = new Map<string, Entry<Wallet>>();
  private readonly walletLists = new Map<string, Entry<Wallet[]>>();
  private readonly rates = new Map<string, Entry<number | undefined>>();
  private readonly channelAccounts = new Map<string, Entry<ChannelAccount | undefined>>();
  private readonly providerAccounts = new Map<string, Entry<ChannelAccount[]>>();
  private readonly limitsOf = new Map<string, Entry<WalletLimits[]>>();
  private version = '';

  constructor(
    private readonly accounts: AccountsRepo,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
    /** Opens a stored channel account (its secrets unsealed with the master key). */
    private readonly openAccount: (stored: StoredChannelAccount) => ChannelAccount = refuseSealed,
    /** A wallet's limits (the ledger's), kept as the accounts are: a change to them moves the accounts' version. */
    private readonly loadLimits: (wallet_id: string) => Promise<WalletLimits[]> = async () => [],
  ) {}

  /** The wallet's limits (none: an empty list, kept too: most wallets have none). */
  limits(wallet_id: string, fresh = false): Promise<WalletLimits[]> {
    return this.cached(this.limitsOf, wallet_id, fresh, () => this.loadLimits(wallet_id), true) as Promise<
      WalletLimits[]
    >;
  }

  user(user_id: string, fresh = false): Promise<User | undefined> {
    return this.cached(this.users, user_id, fresh, () => this.accounts.findUser(user_id), false);
  }

  wallet(wallet_id: string, fresh = false): Promise<Wallet | undefined> {
    return this.cached(this.wallets, wallet_id, fresh, () => this.accounts.findWallet(wallet_id), false);
  }

  walletsOf(user_id: string, fresh = false): Promise<Wallet[]> {
    return this.cached(this.walletLists, user_id, fresh, () => this.accounts.listWallets(user_id), false) as Promise<
      Wallet[]
    >;
  }

  /** Rates are cached even when missing: a create without a rate must not cost a read each time. */
  rate(from: string, to: string): Promise<number | undefined> {
    return this.cached(this.rates, `${from}>${to}`, false, () => this.accounts.findRate(from, to), true);
  }

  /** The wallet's account with a provider for the method; cached even when missing (most have none). */
  channelAccount(wallet_id: string, method: PaymentMethod): Promise<ChannelAccount | undefined> {
    return this.cached(
      this.channelAccounts,
      `${wallet_id}\n${method}`,
      false,
      async () => {
        const stored = await this.accounts.findChannelAccount(wallet_id, method);
        return stored && this.openAccount(stored);
      },
      true,
    );
  }

  /** Every account with a provider: the ones a notification may come from. */
  channelAccountsOf(provider: ProviderName): Promise<ChannelAccount[]> {
    return this.cached(
      this.providerAccounts,
      provider,
      false,
      async () => (await this.accounts.listChannelAccounts({ provider })).map(this.openAccount),
      false,
    ) as Promise<ChannelAccount[]>;
  }

  clear(): void {
    this.users.clear();
    this.wallets.clear();
    this.walletLists.clear();
    this.rates.clear();
    this.channelAccounts.clear();
    this.providerAccounts.clear();
    this.limitsOf.clear();
  }

  private async cached<T>(
    map: Map<string, Entry<T>>,
    key: string,
    fresh: boolean,
    load: () => Promise<T>,
    keepMissing: boolean,
  ): Promise<T | undefined> {
    const version = this.accounts.version;
    if (version !== this.version) {
      // Something administrative changed (a rotated key, a disabled user, a new rate): forget all.
      this.clear();
      this.version = version;
    }
    const now = this.now();
    const hit = map.get(key);
    if (!fresh && hit && hit.until > now) return hit.value;
    const value = await load();
    if (this.ttlMs > 0 && (value !== undefined || keepMissing)) {
      // Bounded: a flood of unknown ids must not grow the map without limit.
      if (map.size >= MAX_ENTRIES) map.clear();
      map.set(key, { value, until: now + this.ttlMs });
    } else {
      map.delete(key);
    }
    return value;
  }
}

interface Entry<T> {
  value: T;
  until: number;
}

const MAX_ENTRIES = 50_000;

function refuseSealed(stored: StoredChannelAccount): ChannelAccount {
  throw new Error(
    `wallet ${stored.wallet_id} has a ${stored.provider} account for ${stored.payment_method}, but no master key is configured to open its secrets (GATEWAY_MASTER_KEY or GATEWAY_MASTER_KEY_FILE)`,
  );
}
