import type { CurrencyMode } from '../../domain/channel.js';
import { publicKeyPem } from '../../domain/key-pem.js';
import type { ChannelAccount } from '../../ports/connector.js';
import type { ProviderDescriptor } from '../../ports/provider.js';
import { accountField, currencyModeField, endpointField, required } from '../fields.js';
import { checkEndpoint } from '../http.js';
import { pemProblem } from '../pem.js';
import { certProblems } from './cert.js';

// A wallet's account with Alipay: the app's id and private key, and Alipay's public key, given as
// the key (public-key mode) or as its certificate with the app's and Alipay's root (certificate
// mode; the key is then the certificate's).

export interface AlipayAccount {
  app_id: string;
  alipay_public_key: string;
  private_key: string;
  /** Certificate mode: the three certificates (cert.ts checks them). */
  certificates?: { app_cert: string; alipay_cert: string; alipay_root_cert: string };
  endpoint?: string;
  currency_mode: CurrencyMode;
  /** Cross-border: the wallet's currency, which the account prices in. */
  currency?: string;
}

const CERTIFICATES = 'certificates';

export const alipayDescriptor: ProviderDescriptor<AlipayAccount> = {
  name: 'alipay',
  label: { en: 'Alipay', zh: '支付宝' },
  methods: ['alipay'],
  currencyModes: ['domestic', 'cross-border'],
  fields: [
    accountField(
      'app_id',
      'text',
      { flag: 'app-id', value: 'ID' },
      { en: 'App ID', zh: '应用 ID（APPID）' },
      { en: "the app's APPID on Alipay's open platform", zh: '支付宝开放平台的应用 APPID' },
    ),
    accountField(
      'private_key',
      'private_key',
      { flag: 'private-key-file', file: true, value: 'PEM' },
      { en: "App's private key", zh: '应用私钥' },
      { en: "the app's RSA2 private key (PEM or bare base64)", zh: '应用的 RSA2 私钥（PEM 或纯 base64）' },
    ),
    accountField(
      'app_cert',
      'certificate',
      { flag: 'app-cert-file', file: true, value: 'CRT' },
      { en: 'App public key certificate', zh: '应用公钥证书' },
      { en: 'certificate mode: appCertPublicKey_….crt', zh: '公钥证书模式：appCertPublicKey_….crt' },
      { alternative: CERTIFICATES },
    ),
    accountField(
      'alipay_cert',
      'certificate',
      { flag: 'alipay-cert-file', file: true, value: 'CRT' },
      { en: 'Alipay public key certificate', zh: '支付宝公钥证书' },
      { en: 'certificate mode: alipayCertPublicKey_RSA2.crt', zh: '公钥证书模式：alipayCertPublicKey_RSA2.crt' },
      { alternative: CERTIFICATES },
    ),
    accountField(
      'alipay_root_cert',
      'certificate',
      { flag: 'alipay-root-cert-file', file: true, value: 'CRT' },
      { en: 'Alipay root certificate', zh: '支付宝根证书' },
      { en: 'certificate mode: alipayRootCert.crt', zh: '公钥证书模式：alipayRootCert.crt' },
      { alternative: CERTIFICATES },
    ),
    accountField(
      'alipay_public_key',
      'public_key',
      { flag: 'alipay-public-key-file', file: true, value: 'PEM' },
      { en: 'Alipay public key', zh: '支付宝公钥' },
      {
        en: "public-key mode: Alipay's public key (PEM or bare base64)",
        zh: '公钥模式：支付宝公钥（PEM 或纯 base64）',
      },
      { alternative: 'public-key' },
    ),
    currencyModeField(),
    endpointField(),
  ],
  derive(config): Record<string, string> {
    // Certificate mode: Alipay's key is its certificate's.
    return config.alipay_cert ? { alipay_public_key: publicKeyPem(config.alipay_cert) } : {};
  },
  parseAccount(account: ChannelAccount): AlipayAccount {
    const c = account.config;
    return {
      app_id: required('app_id', c.app_id),
      alipay_public_key: required('alipay_public_key', c.alipay_public_key),
      private_key: required('private_key', account.secrets.private_key),
      ...(c.app_cert &&
        c.alipay_cert &&
        c.alipay_root_cert && {
          certificates: { app_cert: c.app_cert, alipay_cert: c.alipay_cert, alipay_root_cert: c.alipay_root_cert },
        }),
      ...(c.endpoint && { endpoint: c.endpoint }),
      currency_mode: c.currency_mode === 'cross-border' ? 'cross-border' : 'domestic',
      ...(c.currency && { currency: c.currency }),
    };
  },
  checkAccount(account: ChannelAccount, now: number): readonly string[] {
    const c = account.config;
    const problems = [
      !c.app_id || !/^[0-9A-Za-z]{1,32}$/.test(c.app_id)
        ? 'app_id must be the Alipay application id (up to 32 letters and digits)'
        : undefined,
      pemProblem('alipay_public_key', c.alipay_public_key, 'public'),
      pemProblem('private_key', account.secrets.private_key, 'private'),
      ...certProblems(account, now),
      c.endpoint ? checkEndpoint(c.endpoint) : undefined,
      c.currency_mode === 'cross-border' && !c.currency
        ? 'a cross-border account needs the currency it prices in'
        : undefined,
      account.payment_method !== 'alipay'
        ? `the Alipay connector serves alipay, not ${account.payment_method}`
        : undefined,
    ];
    return problems.filter((p): p is string => p !== undefined);
  },
};
