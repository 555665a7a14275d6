import type { Wallet } from '../domain/account.js';
import { CURRENCY_MODES } from '../domain/channel.js';
import { certificateNotAfter, privateKeyPem, publicKeyPem } from '../domain/key-pem.js';
import { fingerprint, seal, unseal, type MasterKey } from '../domain/sealed.js';
import type { PaymentMethod } from '../domain/transaction.js';
import type { AccountsRepo, StoredChannelAccount } from '../ports/accounts.js';
import type { ChannelAccount, Connector, ProviderName } from '../ports/connector.js';

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

/** Validates the account with its connector, then seals and stores it (replacing the wallet's account for the method). */
export async function setChannelAccount(
  accounts: AccountsRepo,
  connectors: Readonly<Record<ProviderName, Connector>>,
  master: MasterKey,
  account: ChannelAccount,
  now: number,
): Promise<SetAccountResult> {
  const problems = connectors[account.provider].checkAccount(account);
  if (problems.length > 0) return { ok: false, problems };
  const before = await accounts.findChannelAccount(account.wallet_id, account.payment_method);
  await accounts.setChannelAccount(sealAccount(master, account, now, before?.created_at ?? now));
  return { ok: true, account, replaced: before !== undefined };
}

/** A channel account's fields as text (keys as PEM or bare base64): the CLI reads its files into these, the console's form sends them. */
export interface AccountFields {
  currency_mode?: string;
  endpoint?: string;
  // Alipay
  app_id?: string;
  alipay_public_key?: string;
  /** Certificate mode, instead of alipay_public_key: the app's public key certificate, Alipay's, and Alipay's root file (PEM). */
  app_cert?: string;
  alipay_cert?: string;
  alipay_root_cert?: string;
  // WeChat Pay
  mchid?: string;
  appid?: string;
  serial_no?: string;
  platform_public_key?: string;
  platform_public_key_id?: string;
  /** A platform certificate beside the key (PEM): during a move to the public key, or a certificate's renewal. */
  platform_certificate?: string;
  mcc?: string;
  jsapi?: boolean;
  oauth_endpoint?: string;
  // Secrets (both providers' private key; WeChat Pay's APIv3 key and the official account's AppSecret)
  private_key?: string;
  apiv3_key?: string;
  appsecret?: string;
}

/** A field the account cannot be made with, named as AccountFields names it. */
export class AccountInputError extends Error {
  constructor(
    readonly field: keyof AccountFields | 'provider',
    message: string,
  ) {
    super(message);
  }
}

/** The account of a wallet for a method with a provider, from its fields (checked by its connector when stored). */
export function accountFromFields(
  wallet: Pick<Wallet, 'wallet_id' | 'currency'>,
  payment_method: PaymentMethod,
  provider: string,
  f: AccountFields,
): ChannelAccount {
  const need = (field: keyof AccountFields) => {
    const v = f[field];
    if (typeof v !== 'string' || v.trim() === '') throw new AccountInputError(field, 'is required');
    return v.trim();
  };
  const key = (
    field: 'private_key' | 'alipay_public_key' | 'alipay_cert' | 'platform_public_key',
    kind: 'private' | 'public',
  ) => {
    try {
      return kind === 'private' ? privateKeyPem(need(field)) : publicKeyPem(need(field));
    } catch (e) {
      throw e instanceof AccountInputError ? e : new AccountInputError(field, (e as Error).message);
    }
  };
  const mode = f.currency_mode ?? 'domestic';
  if (!(CURRENCY_MODES as readonly string[]).includes(mode))
    throw new AccountInputError('currency_mode', `must be domestic or cross-border, not ${mode}`);
  const common = {
    currency_mode: mode,
    ...(mode === 'cross-border' && { currency: wallet.currency }),
    ...(f.endpoint && { endpoint: f.endpoint }),
  };
  const base = { wallet_id: wallet.wallet_id, payment_method };
  switch (provider) {
    case 'alipay': {
      // Public-key mode, or certificate mode: then Alipay's key is its certificate's, and the
      // connector checks the three certificates (connectors/alipay/cert.ts).
      const certMode = [f.app_cert, f.alipay_cert, f.alipay_root_cert].some((v) => v?.trim());
      if (certMode && f.alipay_public_key?.trim())
        throw new AccountInputError(
          'alipay_public_key',
          "give Alipay's public key, or (certificate mode) app_cert, alipay_cert and alipay_root_cert, not both",
        );
      const keys: Record<string, string> = certMode
        ? {
            alipay_public_key: key('alipay_cert', 'public'),
            app_cert: need('app_cert'),
            alipay_cert: need('alipay_cert'),
            alipay_root_cert: need('alipay_root_cert'),
          }
        : { alipay_public_key: key('alipay_public_key', 'public') };
      return {
        ...base,
        provider,
        config: { app_id: need('app_id'), ...keys, ...common },
        secrets: { private_key: key('private_key', 'private') },
      };
    }
    case 'wechatpay':
      return {
        ...base,
        provider,
        config: {
          mchid: need('mchid'),
          appid: need('appid'),
          serial_no: need('serial_no'),
          platform_public_key: key('platform_public_key', 'public'),
          platform_public_key_id: need('platform_public_key_id'),
          ...(f.platform_certificate?.trim() && { platform_certificate: f.platform_certificate.trim() }),
          ...(f.mcc && { mcc: f.mcc }),
          ...(f.jsapi && { jsapi: 'on' }),
          ...(f.oauth_endpoint && { oauth_endpoint: f.oauth_endpoint }),
          ...common,
        },
        secrets: {
          private_key: key('private_key', 'private'),
          apiv3_key: need('apiv3_key'),
          ...(f.appsecret && { appsecret: f.appsecret.trim() }),
        },
      };
    default:
      throw new AccountInputError('provider', `must be alipay or wechatpay, not ${provider}`);
  }
}
