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
  created_at: number;
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
