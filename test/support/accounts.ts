// The channel account of each fake provider, as `gateway channel set` would store it for a wallet
// (or, for Alipay without a fake, with an endpoint nothing listens on, where a test never reaches
// the provider). Used by the tests (through channels.ts) and by the bench's fake providers.
import type { ChannelAccount } from '../../src/ports/connector.js';
import { CERT_MODE_FIXTURES, type FakeAlipay } from './fake-alipay.js';
import type { FakeAzupay } from './fake-azupay.js';
import type { FakeCoinPayments } from './fake-coinpayments.js';
import type { FakePoli } from './fake-poli.js';
import type { FakeUnionpay } from './fake-unionpay.js';
import type { FakeWechatPay } from './fake-wechatpay.js';
import { keyPair } from './fake-server.js';

export type AccountOptions = { currency_mode?: 'domestic' | 'cross-border'; currency?: string; wallet_id?: string };

/** With `certMode`, the account of a fake started in certificate mode: the three certificates of test/fixtures/alipay-cert-mode. */
export function alipayAccount(
  wallet_id: string,
  fake: FakeAlipay | undefined,
  opts: AccountOptions & { certMode?: boolean } = {},
): ChannelAccount {
  const certs: Record<string, string> = opts.certMode
    ? {
        app_cert: CERT_MODE_FIXTURES.file('app.crt'),
        alipay_cert: CERT_MODE_FIXTURES.file('alipay.crt'),
        alipay_root_cert: CERT_MODE_FIXTURES.file('root.crt'),
      }
    : {};
  return {
    wallet_id,
    payment_method: 'alipay',
    provider: 'alipay',
    config: {
      app_id: fake?.app_id ?? '2021000000000001',
      alipay_public_key: fake?.alipay.publicKey ?? keyPair(1).publicKey,
      // Nothing listens on port 9 of the loopback: a test without a fake never reaches Alipay.
      endpoint: fake?.endpoint ?? 'http://127.0.0.1:9/gateway.do',
      currency_mode: opts.currency_mode ?? 'domestic',
      ...(opts.currency && { currency: opts.currency }),
      ...certs,
    },
    secrets: { private_key: fake?.app.privateKey ?? keyPair(0).privateKey },
  };
}

export function wechatpayAccount(
  wallet_id: string,
  fake: FakeWechatPay,
  opts: AccountOptions & { mcc?: string; jsapi?: boolean; certificate?: boolean } = {},
): ChannelAccount {
  return {
    wallet_id,
    payment_method: 'wechat',
    provider: 'wechatpay',
    config: {
      mchid: fake.mchid,
      appid: fake.appid,
      serial_no: fake.merchantSerial,
      platform_public_key: fake.platform.publicKey,
      platform_public_key_id: fake.platformKeyId,
      endpoint: fake.url,
      currency_mode: opts.currency_mode ?? 'domestic',
      ...(opts.currency && { currency: opts.currency }),
      ...(opts.mcc && { mcc: opts.mcc }),
      ...(opts.jsapi && { jsapi: 'on', oauth_endpoint: fake.url }),
      ...(opts.certificate && { platform_certificate: fake.certificate.pem }),
    },
    secrets: {
      private_key: fake.merchant.privateKey,
      apiv3_key: fake.apiv3Key,
      ...(opts.jsapi && { appsecret: fake.appsecret }),
    },
  };
}

export function poliAccount(wallet_id: string, fake: FakePoli, opts: AccountOptions = {}): ChannelAccount {
  return {
    wallet_id,
    payment_method: 'polipay',
    provider: 'poli',
    config: {
      merchant_code: fake.merchant_code,
      endpoint: fake.url,
      currency_mode: 'cross-border',
      currency: opts.currency ?? fake.currency,
    },
    secrets: { authentication_code: fake.authentication_code },
  };
}

export function coinpaymentsAccount(wallet_id: string, fake: FakeCoinPayments, currency = 'NZD'): ChannelAccount {
  return {
    wallet_id,
    payment_method: 'coin_payments',
    provider: 'coinpayments',
    config: { client_id: fake.client_id, endpoint: fake.url, currency_mode: 'cross-border', currency },
    secrets: { client_secret: fake.client_secret },
  };
}

export function azupayAccount(wallet_id: string, fake: FakeAzupay): ChannelAccount {
  return {
    wallet_id,
    payment_method: 'payid',
    provider: 'azupay',
    config: { client_id: fake.client_id, endpoint: `${fake.url}/v1`, currency_mode: 'cross-border', currency: 'AUD' },
    secrets: { api_key: fake.api_key },
  };
}

export function unionpayAccount(wallet_id: string, fake: FakeUnionpay, opts: AccountOptions = {}): ChannelAccount {
  return {
    wallet_id,
    payment_method: 'upi_upop',
    provider: 'unionpay',
    config: {
      mer_id: fake.mer_id,
      root_cert: fake.root.pem,
      middle_cert: fake.middle.pem,
      endpoint: fake.url,
      currency_mode: opts.currency_mode ?? 'domestic',
      ...(opts.currency && { currency: opts.currency }),
    },
    secrets: { sign_cert: fake.pfx, sign_cert_password: fake.pfxPassword },
  };
}
