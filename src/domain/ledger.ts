// The books' rules, with no I/O: the ledger's accounts, a journal entry whose lines balance per
// currency, and the entry each business event posts. Amounts are integer minor units; a line's
// amount is signed: a debit is positive, a credit negative, so every entry's lines sum to zero in
// each currency. A wallet's accounts are what the operator owes the merchant (credit-normal): their
// balance as shown is the negated sum of their lines. Entries are appended, never changed: a
// correction is an entry of its own. Each entry's key names the event that posted it, so posting an
// event again posts nothing (the store's unique key).

/** The three balances of a merchant's wallet, in its currency. */
export const WALLET_BALANCES = ['pending', 'available', 'reserved'] as const;
export type WalletBalance = (typeof WALLET_BALANCES)[number];
/** A wallet's balances in its currency, in minor units, as the merchant is owed them. */
export type WalletBalances = { currency: string } & Record<WalletBalance, number>;

/** `wallet:{wallet_id}:{balance}`: what the operator owes the merchant, by how soon it may be paid out. */
export function walletAccount(wallet_id: string, balance: WalletBalance): string {
  return `wallet:${wallet_id}:${balance}`;
}

/**
 * `provider:{provider}:{wallet_id}`: what the provider owes the operator for payments it took
 * through the wallet's account with it (channel_accounts: the wallet and the method the provider
 * serves) and has not yet paid over, in the currency it charged. The merchant id at the provider is
 * the account's (several wallets may share one).
 */
export function providerAccount(provider: string, wallet_id: string): string {
  return `provider:${provider}:${wallet_id}`;
}

/** The operator's fee revenue, in each currency fees were charged in. */
export const FEE_REVENUE = 'operator:fees';
/** The conversion between a provider's currency and the wallet's (a domestic account: CNY in, NZD owed). */
export const CONVERSION = 'operator:conversion';
/** Payouts in a bank file, not yet confirmed paid or returned: owed to the merchants on their way. */
export const PAYOUTS_IN_TRANSIT = 'operator:payouts';
/** The operator's bank account, where payouts are paid from (and providers' settlements arrive). */
export const OPERATOR_BANK = 'operator:bank';
/** The other side of an operator's manual adjustment. */
export const ADJUSTMENTS = 'operator:adjustments';

/** The providers' fees on a method's payments, as their statements state them: the operator's cost. */
export function providerFeesAccount(payment_method: string): string {
  return `operator:provider_fees:${payment_method}`;
}

/**
 * A statement's provider fees for one wallet and currency: the operator's cost, out of what the
 * provider owes for the wallet (it kept them). Negative (fees given back with refunds): the other way.
 */
export function providerFeeEntry(p: {
  statement_id: string;
  provider: string;
  payment_method: string;
  wallet_id: string;
  currency: string;
  fee: number;
  created_at: number;
}): JournalEntry {
  return {
    entry_key: `provider_fee:${p.statement_id}:${p.wallet_id}:${p.currency}`,
    kind: 'provider_fee',
    wallet_id: p.wallet_id,
    order_id: null,
    refund_id: null,
    payout_id: null,
    memo: `statement ${p.statement_id}`,
    created_at: p.created_at,
    lines: [
      { account: providerFeesAccount(p.payment_method), currency: p.currency, amount: p.fee },
      { account: providerAccount(p.provider, p.wallet_id), currency: p.currency, amount: -p.fee },
    ],
  };
}

/** Which way an account's balance is shown: the operator's assets by their debits, what it owes by its credits. */
export function isCreditNormal(account: string): boolean {
  return (
    account.startsWith('wallet:') ||
    account === FEE_REVENUE ||
    account === ADJUSTMENTS ||
    account === PAYOUTS_IN_TRANSIT
  );
}

export interface LedgerLine {
  account: string;
  currency: string;
  /** Minor units of `currency`: a debit is positive, a credit negative; never zero. */
  amount: number;
}

export const ENTRY_KINDS = [
  'payment',
  'refund_reserved',
  'refund_made',
  'refund_failed',
  'available',
  'payout_requested',
  'payout_sent',
  'payout_paid',
  'payout_returned',
  'payout_canceled',
  'adjustment',
  'provider_fee',
] as const;
export type EntryKind = (typeof ENTRY_KINDS)[number];

export interface JournalEntry {
  /** Unique per event (`payment:{order_id}`, `refund_made:{refund_id}`...): posting it again posts nothing. */
  entry_key: string;
  kind: EntryKind;
  wallet_id: string | null;
  order_id: string | null;
  refund_id: string | null;
  payout_id: string | null;
  /** Why, in words (an operator's adjustment must say). */
  memo: string | null;
  created_at: number;
  lines: LedgerLine[];
}

/** Why an entry cannot be posted (its lines do not balance in a currency, an amount is not a whole count), or undefined. */
export function entryProblem(entry: Pick<JournalEntry, 'entry_key' | 'lines'>): string | undefined {
  if (!entry.entry_key) return 'an entry needs a key';
  if (entry.lines.length < 2) return `entry ${entry.entry_key} has ${entry.lines.length} line(s): at least two`;
  const sums = new Map<string, number>();
  for (const l of entry.lines) {
    if (!Number.isSafeInteger(l.amount) || l.amount === 0)
      return `entry ${entry.entry_key}: ${l.account} ${l.currency} amount ${l.amount} is not a whole, non-zero count of minor units`;
    if (!l.account || !/^[A-Z]{3}$/.test(l.currency))
      return `entry ${entry.entry_key}: a line without an account or a currency`;
    sums.set(l.currency, (sums.get(l.currency) ?? 0) + l.amount);
  }
  for (const [currency, sum] of sums)
    if (sum !== 0) return `entry ${entry.entry_key} does not balance in ${currency}: debits exceed credits by ${sum}`;
  return undefined;
}

/** The balance of an account as shown: debits less credits, or credits less debits for what the operator owes. */
export function shownBalance(account: string, sumOfLines: number): number {
  // `+ 0` makes the negation of zero a zero (not -0).
  return (isCreditNormal(account) ? -sumOfLines : sumOfLines) + 0;
}

/** Lines, with those of one account and currency added together and the zero ones left out. */
export function netLines(lines: readonly LedgerLine[]): LedgerLine[] {
  const byKey = new Map<string, LedgerLine>();
  for (const l of lines) {
    const key = `${l.account}\u0000${l.currency}`;
    const had = byKey.get(key);
    byKey.set(key, had ? { ...had, amount: had.amount + l.amount } : { ...l });
  }
  return [...byKey.values()].filter((l) => l.amount !== 0);
}

/** What a paid order posts: the provider owes what it charged; the merchant is owed the order less its fee, pending. */
export interface PaymentPosting {
  order_id: string;
  wallet_id: string;
  /** The order's amount, in the wallet's currency. */
  amount: number;
  currency: string;
  /** What the provider charged (a domestic account: CNY), and who it was (`sandbox` in the sandbox). */
  charged: { amount: number; currency: string };
  provider: string;
  /** The fee of the order's plan version, in the wallet's currency (0 without a plan). */
  fee: number;
  created_at: number;
}

export function paymentEntry(p: PaymentPosting): JournalEntry {
  if (p.fee < 0 || p.fee > p.amount) throw new Error(`fee ${p.fee} outside 0..${p.amount} for order ${p.order_id}`);
  const clearing = providerAccount(p.provider, p.wallet_id);
  const lines: LedgerLine[] = [{ account: clearing, currency: p.charged.currency, amount: p.charged.amount }];
  if (p.charged.currency !== p.currency) {
    // Two currencies: each side balances through the conversion account at the order's rate.
    lines.push({ account: CONVERSION, currency: p.charged.currency, amount: -p.charged.amount });
    lines.push({ account: CONVERSION, currency: p.currency, amount: p.amount });
  } else if (p.charged.amount !== p.amount) {
    throw new Error(`order ${p.order_id} charged ${p.charged.amount} of ${p.amount} in one currency`);
  }
  lines.push({ account: walletAccount(p.wallet_id, 'pending'), currency: p.currency, amount: -(p.amount - p.fee) });
  if (p.fee > 0) lines.push({ account: FEE_REVENUE, currency: p.currency, amount: -p.fee });
  return {
    entry_key: `payment:${p.order_id}`,
    kind: 'payment',
    wallet_id: p.wallet_id,
    order_id: p.order_id,
    refund_id: null,
    payout_id: null,
    memo: null,
    created_at: p.created_at,
    lines: lines.filter((l) => l.amount !== 0),
  };
}

/**
 * An operator's adjustment of a wallet's available balance, with its reason: a positive amount is
 * owed to the merchant (a goodwill credit, a fee charged wrongly), a negative one taken back.
 */
export function adjustmentEntry(p: {
  adjustment_id: string;
  wallet_id: string;
  currency: string;
  amount: number;
  reason: string;
  created_at: number;
}): JournalEntry {
  if (!Number.isSafeInteger(p.amount) || p.amount === 0)
    throw new Error('an adjustment moves a whole, non-zero amount');
  if (!p.reason.trim()) throw new Error('an adjustment needs its reason');
  return {
    entry_key: `adjustment:${p.adjustment_id}`,
    kind: 'adjustment',
    wallet_id: p.wallet_id,
    order_id: null,
    refund_id: null,
    payout_id: null,
    memo: p.reason.trim(),
    created_at: p.created_at,
    lines: [
      { account: walletAccount(p.wallet_id, 'available'), currency: p.currency, amount: -p.amount },
      { account: ADJUSTMENTS, currency: p.currency, amount: p.amount },
    ],
  };
}
