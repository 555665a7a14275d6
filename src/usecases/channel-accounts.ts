import type { Wallet } from '../domain/account.js';
import { certificateNotAfter, privateKeyPem, publicKeyPem } from '../domain/key-pem.js';
import { fingerprint, seal, unseal, type MasterKey } from '../domain/sealed.js';
import type { PaymentMethod } from '../domain/transaction.js';
import type { AccountsRepo, StoredChannelAccount } from '../ports/accounts.js';
import type { ChannelAccount, ProviderName } from '../ports/connector.js';
import { AccountInputError, type AccountField, type AccountInput, type ProviderDescriptor } from '../ports/provider.js';
import type { Connectors } from './context.js';

// Channel accounts at rest: the provider's ids and public keys as JSON, the private keys and the
// APIv3 key sealed under the master key (domain/sealed.ts). Only a fingerprint of a secret is
// ever shown.

export function sealAccount(
  master: MasterKey,
  account: ChannelAccount,
  now: number,
  created_at = now,
): StoredChannelAccount {
  return {
    wallet_id: account.wallet_id,
    payment_method: account.payment_method,
    provider: account.provider,
    config: JSON.stringify(account.config),
    sealed_secrets: seal(master, JSON.stringify(account.secrets)),
    created_at,
    updated_at: now,
  };
}

/** Opens a stored account; throws with the account named when its secrets do not open under this key. */
export function openAccount(master: MasterKey | undefined, stored: StoredChannelAccount): ChannelAccount {
  const what = `wallet ${stored.wallet_id}'s ${stored.provider} account for ${stored.payment_method}`;
  if (!master)
    throw new Error(
      `${what} has sealed secrets, but no master key is configured (GATEWAY_MASTER_KEY or GATEWAY_MASTER_KEY_FILE)`,
    );
  let secrets: Record<string, string>;
  try {
    secrets = JSON.parse(unseal(master, stored.sealed_secrets)) as Record<string, string>;
  } catch (e) {
    throw new Error(`${what}: ${(e as Error).message}`, { cause: e });
  }
  return {
    wallet_id: stored.wallet_id,
    payment_method: stored.payment_method,
    provider: stored.provider,
    config: JSON.parse(stored.config) as Record<string, string>,
    secrets,
  };
}

/** Checks that every stored account opens under the master key: the server refuses to start otherwise. */
export async function checkStoredAccounts(accounts: AccountsRepo, master: MasterKey | undefined): Promise<number> {
  const stored = await accounts.listChannelAccounts();
  for (const s of stored) openAccount(master, s);
  return stored.length;
}

/** How long before a certificate stops being valid the gateway warns of it. */
export const CERTIFICATE_WARNING_MS = 30 * 24 * 3600 * 1000;

/** A certificate of a channel account that stops being valid soon (or has). */
export interface ExpiringCertificate {
  wallet_id: string;
  payment_method: PaymentMethod;
  provider: ProviderName;
  /** The account's config field holding it (app_cert, alipay_cert, platform_certificate, ...). */
  field: string;
  not_after: string;
  expired: boolean;
}

/**
 * The accounts' certificates that stop being valid within CERTIFICATE_WARNING_MS of `now` (or have):
 * from then on the provider refuses the account's calls, or its answers fail to verify.
 */
export function expiringCertificates(
  accounts: readonly Pick<ChannelAccount, 'wallet_id' | 'payment_method' | 'provider' | 'config'>[],
  now: number,
): ExpiringCertificate[] {
  const found: ExpiringCertificate[] = [];
  for (const a of accounts) {
    for (const [field, value] of Object.entries(a.config)) {
      const notAfter = certificateNotAfter(value);
      if (notAfter === undefined || notAfter - now > CERTIFICATE_WARNING_MS) continue;
      found.push({
        wallet_id: a.wallet_id,
        payment_method: a.payment_method,
        provider: a.provider,
        field,
        not_after: new Date(notAfter).toISOString(),
        expired: notAfter <= now,
      });
    }
  }
  return found;
}

/** One line for an operator: what expires when, and what to do. */
export function certificateWarning(c: ExpiringCertificate): string {
  return `wallet ${c.wallet_id}'s ${c.provider} account for ${c.payment_method}: ${c.field} ${c.expired ? 'expired' : 'expires'} ${c.not_after}; set the renewed one with gateway channel set`;
}

/** What `channel list` shows of an account: its config, and its secrets only as fingerprints. */
export function describeAccount(account: ChannelAccount): Record<string, string> {
  const out: Record<string, string> = {
    wallet_id: account.wallet_id,
    payment_method: account.payment_method,
    provider: account.provider,
  };
  for (const [k, v] of Object.entries(account.config)) out[k] = /PUBLIC KEY|CERTIFICATE/.test(v) ? describePem(v) : v;
  for (const [k, v] of Object.entries(account.secrets)) out[k] = `sealed (sha256 ${fingerprint(v)})`;
  return out;
}

function describePem(pem: string): string {
  const notAfter = certificateNotAfter(pem);
  return `${firstLine(pem)} (sha256 ${fingerprint(pem)}${notAfter === undefined ? '' : `, valid until ${new Date(notAfter).toISOString().slice(0, 10)}`})`;
}

function firstLine(pem: string): string {
  return pem.trim().split('\n')[0] ?? '';
}

export type SetAccountResult =
  { ok: true; account: ChannelAccount; replaced: boolean } | { ok: false; problems: readonly string[] };

/** The provider of that name that has accounts (the sandbox has none), or undefined. */
export function providerNamed(connectors: Connectors, provider: string): ProviderDescriptor | undefined {
  return Object.hasOwn(connectors, provider) ? connectors[provider]?.descriptor : undefined;
}

/** Every provider that has accounts, in the registry's order. */
export function accountProviders(connectors: Connectors): ProviderDescriptor[] {
  return Object.values(connectors).flatMap((c) => (c.descriptor ? [c.descriptor] : []));
}

/** Validates the account with its provider, then seals and stores it (replacing the wallet's account for the method). */
export async function setChannelAccount(
  accounts: AccountsRepo,
  connectors: Connectors,
  master: MasterKey,
  account: ChannelAccount,
  now: number,
): Promise<SetAccountResult> {
  const descriptor = providerNamed(connectors, account.provider);
  if (!descriptor) return { ok: false, problems: [`no provider ${account.provider}`] };
  return storeChannelAccount(accounts, descriptor, master, account, now);
}

/** The same with the account's provider at hand. */
export async function storeChannelAccount(
  accounts: AccountsRepo,
  descriptor: ProviderDescriptor,
  master: MasterKey,
  account: ChannelAccount,
  now: number,
): Promise<SetAccountResult> {
  const problems = descriptor.checkAccount(account, now);
  if (problems.length > 0) return { ok: false, problems };
  const before = await accounts.findChannelAccount(account.wallet_id, account.payment_method);
  await accounts.setChannelAccount(sealAccount(master, account, now, before?.created_at ?? now));
  return { ok: true, account, replaced: before !== undefined };
}

/**
 * The account of a wallet for a method with a provider, made from the fields given (as text: keys
 * as PEM or bare base64, a flag as on or off) over the wallet's account with the same provider, if
 * any: what is given changes, the rest is kept (a secret is replaced only by a new one). Giving a
 * field of one alternative (Alipay's certificates) drops the stored fields of the others (its public
 * key). Checked by its provider (checkAccount) when stored.
 */
export function accountFromInput(
  descriptor: ProviderDescriptor,
  wallet: Pick<Wallet, 'wallet_id' | 'currency'>,
  payment_method: PaymentMethod,
  given: AccountInput,
  existing?: ChannelAccount,
): ChannelAccount {
  if (!descriptor.methods.includes(payment_method))
    throw new AccountInputError(
      'payment_method',
      `${descriptor.label.en} serves ${descriptor.methods.join(', ')}, not ${payment_method}`,
    );
  const byId = new Map(descriptor.fields.map((f) => [f.id, f]));
  const typed = Object.entries(given).filter(([, v]) => v.trim() !== '');
  for (const [id] of typed) {
    if (!byId.has(id)) throw new AccountInputError(id, `is not a field of a ${descriptor.label.en} account`);
  }
  const alternatives = [...new Set(descriptor.fields.flatMap((f) => (f.alternative ? [f.alternative] : [])))];
  const givenAlternatives = [...new Set(typed.flatMap(([id]) => byId.get(id)?.alternative ?? []))];
  if (givenAlternatives.length > 1)
    throw new AccountInputError(
      alternativeFields(descriptor, givenAlternatives[1])[0],
      `give ${givenAlternatives.map((a) => alternativeFields(descriptor, a).join(', ')).join(', or ')}, not both`,
    );
  const fields = new Map<string, string>();
  if (existing?.provider === descriptor.name) {
    // The stored account's alternative: the first whose fields it has in full.
    const kept = alternatives.find((a) => alternativeFields(descriptor, a).every((id) => stored(existing, id)));
    const chosen = givenAlternatives[0] ?? kept;
    for (const f of descriptor.fields) {
      const v = stored(existing, f.id);
      if (v !== undefined && (!f.alternative || f.alternative === chosen)) fields.set(f.id, v);
    }
  }
  for (const [id, text] of typed) {
    const f = byId.get(id)!;
    if (f.kind === 'flag' && text.trim() === 'off') fields.delete(id);
    else fields.set(id, readField(f, text));
  }
  for (const f of descriptor.fields) {
    if (f.required && !f.alternative && !fields.has(f.id)) throw new AccountInputError(f.id, 'is required');
  }
  if (
    alternatives.length > 0 &&
    !alternatives.some((a) => alternativeFields(descriptor, a).every((id) => fields.has(id)))
  ) {
    const partial = alternatives.find((a) => alternativeFields(descriptor, a).some((id) => fields.has(id)));
    const missing = alternativeFields(descriptor, partial ?? alternatives[0]).filter((id) => !fields.has(id));
    throw new AccountInputError(
      missing[0],
      partial
        ? `is required with ${alternativeFields(descriptor, partial)
            .filter((id) => fields.has(id))
            .join(', ')} (missing: ${missing.join(', ')})`
        : `is required (or ${alternatives
            .slice(1)
            .map((a) => alternativeFields(descriptor, a).join(', '))
            .join(', or ')})`,
    );
  }
  const mode = fields.get('currency_mode') ?? descriptor.currencyModes[0] ?? 'domestic';
  if (!(descriptor.currencyModes as readonly string[]).includes(mode))
    throw new AccountInputError(
      'currency_mode',
      `must be ${descriptor.currencyModes.join(' or ')} for a ${descriptor.label.en} account, not ${mode}`,
    );
  fields.set('currency_mode', mode);
  const config: Record<string, string> = {};
  const secrets: Record<string, string> = {};
  for (const [id, v] of fields) (byId.get(id)!.secret ? secrets : config)[id] = v;
  if (mode === 'cross-border') config.currency = wallet.currency;
  Object.assign(config, descriptor.derive?.(config));
  const account: ChannelAccount = {
    wallet_id: wallet.wallet_id,
    payment_method,
    provider: descriptor.name,
    config,
    secrets,
  };
  descriptor.parseAccount(account);
  return account;
}

function alternativeFields(descriptor: ProviderDescriptor, alternative: string): string[] {
  return descriptor.fields.filter((f) => f.alternative === alternative).map((f) => f.id);
}

function stored(account: ChannelAccount, id: string): string | undefined {
  return Object.hasOwn(account.secrets, id)
    ? account.secrets[id]
    : Object.hasOwn(account.config, id)
      ? account.config[id]
      : undefined;
}

/** A field's text as it is stored: keys as PEM, the rest trimmed; refused with the field named when it is not what the field holds. */
function readField(f: AccountField, text: string): string {
  const v = text.trim();
  try {
    switch (f.kind) {
      case 'public_key':
        return publicKeyPem(v);
      case 'private_key':
        return privateKeyPem(v);
      case 'certificate':
        if (!/-----BEGIN CERTIFICATE-----/.test(v)) throw new Error('is not a certificate (PEM, BEGIN CERTIFICATE)');
        return v;
      case 'flag':
        if (v !== 'on') throw new Error(`must be on or off, not ${v}`);
        return v;
      case 'choice':
        if (!f.choices?.includes(v)) throw new Error(`must be ${(f.choices ?? []).join(' or ')}, not ${v}`);
        return v;
      case 'binary':
        if (!/^[A-Za-z0-9+/]+=*$/.test(v.replace(/\s+/g, ''))) throw new Error('is not base64');
        return v.replace(/\s+/g, '');
      case 'url':
        if (!/^https?:\/\/[^\s/]+/.test(v)) throw new Error('must be an http(s) URL');
        return v;
      case 'text':
      case 'secret':
        return v;
    }
  } catch (e) {
    throw new AccountInputError(f.id, (e as Error).message);
  }
}
