import { randomInt } from 'node:crypto';
import { isSupportedCurrency, parseRate } from '../domain/money.js';
import { PAYMENT_METHODS } from '../domain/transaction.js';
import type { UserStatus, WalletStatus } from '../domain/account.js';
import type { Store } from '../ports/store.js';
import { MAX_KEY_OVERLAP_MS, newApiKey, rotateWalletKey, type RotatedKey } from './wallet-keys.js';

export { newApiKey };

// Administration of merchants: organisations, their users and wallets, and exchange rates. Used by
// the CLI and the console (each audits who did it), and by tests to set up merchants.

/** Input the administration refuses; its message says why (the CLI exits 2 with it, the console shows it). */
export class AdminError extends Error {}

function digits(n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += String(randomInt(10));
  return s;
}

export function newUserId(): string {
  return `U${digits(9)}`;
}

export function newWalletId(): string {
  return `W${digits(17)}`;
}

const ID_PATTERN = /^[A-Za-z0-9_-]{1,32}$/;

function checkCurrency(currency: string): string {
  const c = currency.toUpperCase();
  if (!isSupportedCurrency(c)) throw new AdminError(`currency ${currency} is not supported (use e.g. NZD, AUD or CNY)`);
  return c;
}

function checkId(kind: string, id: string): string {
  if (!ID_PATTERN.test(id)) throw new AdminError(`${kind} must be 1-32 letters, digits, - or _`);
  return id;
}

/** `on` or `off`, as the CLI's switches are written, for a column that holds 1 or 0. */
export function onOff(flag: string, value: string): 0 | 1 {
  if (value === 'on') return 1;
  if (value === 'off') return 0;
  throw new AdminError(`${flag} must be on or off, not ${value}`);
}

/** A comma-separated list of payment methods, each one the gateway knows, none twice. */
function checkMethods(list: string): string {
  const methods = list.split(',').map((m) => m.trim());
  for (const m of methods) {
    if (!(PAYMENT_METHODS as readonly string[]).includes(m))
      throw new AdminError(`unknown payment method ${JSON.stringify(m)} (known: ${PAYMENT_METHODS.join(', ')})`);
  }
  if (new Set(methods).size !== methods.length) throw new AdminError('--methods names a payment method twice');
  return methods.join(',');
}

export interface MerchantCredentials {
  organisation_id: number;
  organisation_name: string;
  user_id: string;
  wallet_id: string;
  api_key: string;
  currency: string;
}

export async function createMerchant(
  store: Store,
  input: {
    name: string;
    currency: string;
    user_id?: string;
    wallet_id?: string;
    api_key?: string;
    legacy_signatures?: 0 | 1;
  },
): Promise<MerchantCredentials> {
  const currency = checkCurrency(input.currency);
  const user_id = checkId('--user-id', input.user_id ?? newUserId());
  const wallet_id = checkId('--wallet-id', input.wallet_id ?? newWalletId());
  const api_key = input.api_key ?? newApiKey();
  if (api_key.length < 4 || /\s/.test(api_key))
    throw new AdminError('--api-key must be at least 4 characters without spaces');
  if (await store.accounts.findUser(user_id)) throw new AdminError(`user ${user_id} already exists`);
  if (await store.accounts.findWallet(wallet_id)) throw new AdminError(`wallet ${wallet_id} already exists`);
  const now = Date.now();
  const { organisation_id } = await store.accounts.createMerchant({
    organisation_name: input.name,
    user_id,
    user_name: input.name,
    now,
    wallet: {
      wallet_id,
      wallet_name: `${input.name} ${currency}`,
      currency,
      api_key,
      payment_methods: PAYMENT_METHODS.join(','),
      ...(input.legacy_signatures !== undefined && { legacy_signatures: input.legacy_signatures }),
      created_at: now,
    },
  });
  return { organisation_id, organisation_name: input.name, user_id, wallet_id, api_key, currency };
}

export async function createWallet(
  store: Store,
  input: {
    user_id: string;
    currency: string;
    name?: string;
    wallet_id?: string;
    api_key?: string;
    methods?: string;
    legacy_signatures?: 0 | 1;
  },
): Promise<{ user_id: string; wallet_id: string; api_key: string; currency: string }> {
  const currency = checkCurrency(input.currency);
  const user = await store.accounts.findUser(input.user_id);
  if (!user) throw new AdminError(`no user ${input.user_id}`);
  const wallet_id = checkId('--wallet-id', input.wallet_id ?? newWalletId());
  if (await store.accounts.findWallet(wallet_id)) throw new AdminError(`wallet ${wallet_id} already exists`);
  const payment_methods = input.methods ? checkMethods(input.methods) : PAYMENT_METHODS.join(',');
  const api_key = input.api_key ?? newApiKey();
  await store.accounts.createWallet({
    wallet_id,
    user_id: user.user_id,
    wallet_name: input.name ?? `${user.user_name} ${currency}`,
    currency,
    api_key,
    payment_methods,
    ...(input.legacy_signatures !== undefined && { legacy_signatures: input.legacy_signatures }),
    created_at: Date.now(),
  });
  return { user_id: user.user_id, wallet_id, api_key, currency };
}

/** A wallet's settings as the CLI shows them (never its API key). */
export interface WalletSettings {
  wallet_id: string;
  user_id: string;
  wallet_name: string;
  currency: string;
  payment_methods: string;
  legacy_signatures: 'on' | 'off';
}

export async function updateWallet(
  store: Store,
  wallet_id: string,
  input: { name?: string; methods?: string; legacy_signatures?: 0 | 1 },
): Promise<WalletSettings> {
  if (input.name !== undefined && input.name.trim() === '') throw new AdminError('--name must not be empty');
  const w = await store.accounts.updateWallet(wallet_id, {
    ...(input.name !== undefined && { wallet_name: input.name }),
    ...(input.methods !== undefined && { payment_methods: checkMethods(input.methods) }),
    ...(input.legacy_signatures !== undefined && { legacy_signatures: input.legacy_signatures }),
  });
  if (!w) throw new AdminError(`no wallet ${wallet_id}`);
  return {
    wallet_id: w.wallet_id,
    user_id: w.user_id,
    wallet_name: w.wallet_name,
    currency: w.currency,
    payment_methods: w.payment_methods,
    legacy_signatures: w.legacy_signatures === 1 ? 'on' : 'off',
  };
}

export async function rotateKey(store: Store, wallet_id: string, overlapHours: number): Promise<RotatedKey> {
  if (!Number.isInteger(overlapHours) || overlapHours < 0 || overlapHours * 3600_000 > MAX_KEY_OVERLAP_MS) {
    throw new AdminError(`--overlap-hours must be a whole number from 0 to ${MAX_KEY_OVERLAP_MS / 3600_000}`);
  }
  const rotated = await rotateWalletKey(store, Date.now(), wallet_id, overlapHours * 3600_000);
  if (!rotated) throw new AdminError(`no wallet ${wallet_id}`);
  return rotated;
}

export async function setUserStatus(store: Store, user_id: string, status: UserStatus): Promise<void> {
  const user = await store.accounts.findUser(user_id);
  if (!user) throw new AdminError(`no user ${user_id}`);
  if (status === 'active') await refuseClosed(store, user.organisation_id);
  await store.accounts.setUserStatus(user_id, status);
}

/** A wallet's status, as `gateway wallet enable|disable` sets it: a closed organisation's wallet stays disabled. */
export async function setWalletStatus(store: Store, wallet_id: string, status: WalletStatus): Promise<void> {
  const wallet = await store.accounts.findWallet(wallet_id);
  const owner = wallet && (await store.accounts.findUser(wallet.user_id));
  if (!wallet || !owner) throw new AdminError(`no wallet ${wallet_id}`);
  if (status === 'active') await refuseClosed(store, owner.organisation_id);
  await store.accounts.setWalletStatus(wallet_id, status);
}

async function refuseClosed(store: Store, organisation_id: number): Promise<void> {
  if ((await store.accounts.findOrganisation(organisation_id))?.closed_at != null)
    throw new AdminError(`organisation ${organisation_id} is closed: its users and wallets stay disabled`);
}

/** A rate that moves more than this from the last one is set only when confirmed: every customer's CNY amount moves with it. */
export const RATE_CONFIRM_CHANGE = 0.1;

export type RateSet =
  | { kind: 'set'; micros: number; before: number | undefined }
  /** More than RATE_CONFIRM_CHANGE from the last: nothing set; set again with `confirmed`. */
  | { kind: 'confirm'; micros: number; before: number; change: number };

/**
 * A wallet's currency to CNY: the only rate the gateway uses (the CNY amount of an order a
 * domestic account charges). A change of more than 10 % from the last rate is set only when
 * confirmed.
 */
export async function setRate(
  store: Store,
  from: string,
  to: string,
  rate: string,
  opts: { confirmed?: boolean } = {},
): Promise<RateSet> {
  const micros = parseRate(rate);
  if (micros === null)
    throw new AdminError('the rate must be a positive decimal with at most 6 decimal places, e.g. 4.6443');
  const pair = { from: checkCurrency(from), to: checkCurrency(to) };
  if (pair.to !== 'CNY' || pair.from === 'CNY')
    throw new AdminError(
      `a rate is from a wallet's currency to CNY (what a domestic account charges), not ${pair.from} -> ${pair.to}`,
    );
  const before = await store.accounts.findRate(pair.from, pair.to);
  const change = before === undefined ? 0 : Math.abs(micros - before) / before;
  if (before !== undefined && change > RATE_CONFIRM_CHANGE && !opts.confirmed)
    return { kind: 'confirm', micros, before, change };
  await store.accounts.setRate(pair.from, pair.to, micros, Date.now());
  return { kind: 'set', micros, before };
}
