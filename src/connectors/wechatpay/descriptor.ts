import type { CurrencyMode } from '../../domain/channel.js';
import type { ChannelAccount } from '../../ports/connector.js';
import type { ProviderDescriptor } from '../../ports/provider.js';
import { accountField, currencyModeField, endpointField, required } from '../fields.js';
import { checkEndpoint, isLocalAddress } from '../http.js';
import { pemProblem } from '../pem.js';
import { certificateKey } from './sign.js';

// A wallet's account with WeChat Pay (API v3, a direct merchant): the merchant id and its AppID, the
// merchant API certificate's serial and private key, the APIv3 key, WeChat Pay's public key and its
// id; JSAPI inside WeChat needs the official account's AppSecret too.

export interface WechatPayAccount {
  mchid: string;
  appid: string;
  serial_no: string;
  private_key: string;
  apiv3_key: string;
  platform_public_key: string;
  platform_public_key_id: string;
  platform_certificate?: string;
  mcc?: string;
  jsapi: boolean;
  appsecret?: string;
  oauth_endpoint?: string;
  endpoint?: string;
  currency_mode: CurrencyMode;
  currency?: string;
}

/** Why a platform certificate cannot stand beside the configured key, or undefined. */
function certificateProblem(pem: string, primaryId: string | undefined): string | undefined {
  let id: string;
  try {
    const key = certificateKey(pem);
    if (pemProblem('platform_certificate', key.pem, 'public'))
      return 'platform_certificate must hold an RSA public key';
    id = key.id;
  } catch {
    return 'platform_certificate must be a WeChat Pay platform certificate (PEM, BEGIN CERTIFICATE)';
  }
  return id === primaryId?.toUpperCase() ? `platform_certificate is the configured key ${id} itself` : undefined;
}

const optional = { required: false } as const;

export const wechatpayDescriptor: ProviderDescriptor<WechatPayAccount> = {
  name: 'wechatpay',
  label: { en: 'WeChat Pay', zh: '微信支付' },
  methods: ['wechat'],
  currencyModes: ['domestic', 'cross-border'],
  fields: [
    accountField(
      'mchid',
      'text',
      { flag: 'mchid', value: 'ID' },
      { en: 'Merchant ID (mchid)', zh: '商户号（mchid）' },
      { en: 'the merchant id', zh: '微信支付商户号' },
    ),
    accountField(
      'appid',
      'text',
      { flag: 'appid', value: 'ID' },
      { en: 'AppID', zh: 'AppID' },
      { en: 'the AppID bound to the merchant id (wx…)', zh: '与商户号绑定的 AppID（wx…）' },
    ),
    accountField(
      'serial_no',
      'text',
      { flag: 'serial-no', value: 'SERIAL' },
      { en: 'Certificate serial number', zh: '商户 API 证书序列号' },
      { en: "the merchant API certificate's serial number (hex)", zh: '商户 API 证书的序列号（十六进制）' },
    ),
    accountField(
      'private_key',
      'private_key',
      { flag: 'private-key-file', file: true, value: 'PEM' },
      { en: 'Merchant API private key', zh: '商户 API 私钥' },
      { en: 'apiclient_key.pem (PEM or bare base64)', zh: 'apiclient_key.pem（PEM 或纯 base64）' },
    ),
    accountField(
      'apiv3_key',
      'secret',
      { flag: 'apiv3-key-file', file: true, value: 'FILE' },
      { en: 'APIv3 key', zh: 'APIv3 密钥' },
      { en: 'the APIv3 key (32 characters)', zh: 'APIv3 密钥（32 个字符）' },
    ),
    accountField(
      'platform_public_key',
      'public_key',
      { flag: 'platform-public-key-file', file: true, value: 'PEM' },
      { en: 'WeChat Pay public key', zh: '微信支付公钥' },
      { en: "WeChat Pay's public key (pub_key.pem)", zh: '微信支付公钥（pub_key.pem）' },
    ),
    accountField(
      'platform_public_key_id',
      'text',
      { flag: 'platform-public-key-id', value: 'ID' },
      { en: 'WeChat Pay public key ID', zh: '微信支付公钥 ID' },
      { en: 'its id (PUB_KEY_ID_…)', zh: '公钥 ID（PUB_KEY_ID_…）' },
    ),
    accountField(
      'platform_certificate',
      'certificate',
      { flag: 'platform-certificate-file', file: true, value: 'PEM' },
      { en: 'Platform certificate', zh: '平台证书' },
      {
        en: 'a platform certificate verified beside the key (a move to the public key, a renewal)',
        zh: '与公钥并行验签的平台证书（切换到公钥期间或证书更新时）',
      },
      optional,
    ),
    accountField(
      'mcc',
      'text',
      { flag: 'mcc', value: 'CODE' },
      { en: 'Merchant category code', zh: '商户类别码（MCC）' },
      { en: 'cross-border: the merchant category code (4 digits)', zh: '跨境：商户类别码（4 位数字）' },
      optional,
    ),
    accountField(
      'jsapi',
      'flag',
      { flag: 'jsapi', value: 'on|off' },
      { en: 'JSAPI inside WeChat', zh: '微信内 JSAPI 支付' },
      {
        en: "inside WeChat, pay in WeChat's own sheet (needs the official account's AppSecret)",
        zh: '在微信内用微信支付收银台付款（需要公众号 AppSecret）',
      },
      optional,
    ),
    accountField(
      'appsecret',
      'secret',
      { flag: 'appsecret-file', file: true, value: 'FILE' },
      { en: 'Official account AppSecret', zh: '公众号 AppSecret' },
      { en: "JSAPI: the official account's AppSecret", zh: 'JSAPI：公众号的 AppSecret' },
      optional,
    ),
    accountField(
      'oauth_endpoint',
      'url',
      { flag: 'oauth-endpoint', value: 'URL' },
      { en: 'OAuth endpoint', zh: 'OAuth 地址' },
      {
        en: "JSAPI: WeChat's web authorization address, for a test double on this machine only",
        zh: 'JSAPI：微信网页授权地址，仅用于本机测试替身',
      },
      optional,
    ),
    currencyModeField(),
    endpointField(),
  ],
  parseAccount(account: ChannelAccount): WechatPayAccount {
    const c = account.config;
    const s = account.secrets;
    return {
      mchid: required('mchid', c.mchid),
      appid: required('appid', c.appid),
      serial_no: required('serial_no', c.serial_no),
      private_key: required('private_key', s.private_key),
      apiv3_key: required('apiv3_key', s.apiv3_key),
      platform_public_key: required('platform_public_key', c.platform_public_key),
      platform_public_key_id: required('platform_public_key_id', c.platform_public_key_id),
      ...(c.platform_certificate && { platform_certificate: c.platform_certificate }),
      ...(c.mcc && { mcc: c.mcc }),
      jsapi: c.jsapi === 'on',
      ...(s.appsecret && { appsecret: s.appsecret }),
      ...(c.oauth_endpoint && { oauth_endpoint: c.oauth_endpoint }),
      ...(c.endpoint && { endpoint: c.endpoint }),
      currency_mode: c.currency_mode === 'cross-border' ? 'cross-border' : 'domestic',
      ...(c.currency && { currency: c.currency }),
    };
  },
  checkAccount(account: ChannelAccount): readonly string[] {
    const c = account.config;
    const s = account.secrets;
    const problems = [
      !c.mchid || !/^\d{1,32}$/.test(c.mchid) ? 'mchid must be the WeChat Pay merchant id (digits)' : undefined,
      !c.appid || !/^[0-9A-Za-z_]{1,32}$/.test(c.appid)
        ? 'appid must be the AppID bound to the merchant id (wx…)'
        : undefined,
      !c.serial_no || !/^[0-9A-Fa-f]{8,64}$/.test(c.serial_no)
        ? "serial_no must be the merchant API certificate's serial number (hex)"
        : undefined,
      pemProblem('private_key', s.private_key, 'private'),
      !s.apiv3_key || Buffer.byteLength(s.apiv3_key, 'utf8') !== 32
        ? 'the APIv3 key must be exactly 32 characters'
        : undefined,
      pemProblem('platform_public_key', c.platform_public_key, 'public'),
      c.platform_certificate ? certificateProblem(c.platform_certificate, c.platform_public_key_id) : undefined,
      !c.platform_public_key_id || !/^[0-9A-Za-z_]{1,64}$/.test(c.platform_public_key_id)
        ? "platform_public_key_id must be the key's id (PUB_KEY_ID_…) or the platform certificate's serial"
        : undefined,
      c.endpoint ? checkEndpoint(c.endpoint) : undefined,
      c.oauth_endpoint && !isLocalAddress(c.oauth_endpoint)
        ? 'oauth_endpoint is for a test double on this machine only (http://127.0.0.1 or localhost): the AppSecret goes to it'
        : undefined,
      c.currency_mode === 'cross-border' && !c.currency
        ? 'a cross-border account needs the currency it prices in'
        : undefined,
      c.jsapi === 'on' && !s.appsecret
        ? "JSAPI needs the official account's AppSecret (--appsecret-file) to learn the payer's openid"
        : undefined,
      c.currency_mode === 'cross-border' && !/^\d{4}$/.test(c.mcc ?? '')
        ? 'a cross-border account needs its merchant category code (--mcc, 4 digits)'
        : undefined,
      account.payment_method !== 'wechat'
        ? `the WeChat Pay connector serves wechat, not ${account.payment_method}`
        : undefined,
    ];
    return problems.filter((p): p is string => p !== undefined);
  },
};
