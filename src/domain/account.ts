import { isPaymentMethod, type PaymentMethod } from './transaction.js';

// The merchant's side: a user (an account of an organisation) and its wallets, each with its
// currency, API key and the payment methods it accepts.

export type UserStatus = 'active' | 'disabled';

/** A user with its organisation, as requests need it. */
export interface User {
  user_id: string;
  user_name: string;
  user_status: UserStatus;
  organisation_id: number;
  organisation_name: string;
}

export interface Wallet {
  wallet_id: string;
  user_id: string;
  wallet_name: string;
  currency: string;
  api_key: string;
  /** Comma-separated payment methods this wallet accepts, in the order they are offered. */
  payment_methods: string;
  /** 1: create requests may also be signed with the original service's legacy concatenation (signing.ts). */
  legacy_signatures: 0 | 1;
  /** The key the last rotation replaced: it still verifies requests until previous_key_expires_at (the overlap window). */
  previous_api_key: string | null;
  previous_key_expires_at: number | null;
  /** A disabled wallet takes no new orders (301); its orders can still be queried, refunded and canceled. */
  wallet_status: WalletStatus;
  created_at: number;
}

export type WalletStatus = 'active' | 'disabled';

/**
 * The keys a request to the wallet may be signed with at `now`: its key, and during a rotation's
 * overlap window the key it replaced (so that a merchant can deploy the new key without a gap).
 */
export function verifyingKeys(
  wallet: Pick<Wallet, 'api_key' | 'previous_api_key' | 'previous_key_expires_at'>,
  now: number,
): string[] {
  const overlapping =
    wallet.previous_api_key !== null && wallet.previous_key_expires_at !== null && now < wallet.previous_key_expires_at;
  return overlapping ? [wallet.api_key, wallet.previous_api_key!] : [wallet.api_key];
}

export function isActive(user: Pick<User, 'user_status'>): boolean {
  return user.user_status === 'active';
}

/** The wallet's payment methods, in its order. */
export function walletMethods(wallet: Pick<Wallet, 'payment_methods'>): PaymentMethod[] {
  return wallet.payment_methods.split(',').filter(isPaymentMethod);
}

export function walletAccepts(wallet: Pick<Wallet, 'payment_methods'>, method: PaymentMethod): boolean {
  return walletMethods(wallet).includes(method);
}
