import { X509Certificate } from 'node:crypto';
import type { ChannelAccount } from '../../ports/connector.js';
import type { ProviderDescriptor } from '../../ports/provider.js';
import { accountField, currencyModeField, endpointField, required } from '../fields.js';
import { checkEndpoint } from '../http.js';
import { readSigningCredential } from './pkcs12.js';
import { CURRENCY_NUMBERS } from './transformers.js';

// A wallet's merchant at UnionPay's ACP gateway (online payment, 5.1.0): its merchant number, the
// signing certificate (.pfx) CFCA issued it with the file's password, and UnionPay's root and
// middle certificates that its answers' certificates must chain to.

export interface UnionpayAccount {
  mer_id: string;
  sign_cert: string;
  sign_cert_password: string;
  root_cert: string;
  middle_cert: string;
  endpoint?: string;
}

export const unionpayDescriptor: ProviderDescriptor<UnionpayAccount> = {
  name: 'unionpay',
  label: { en: 'UnionPay', zh: '银联' },
  methods: ['upi_upop'],
  currencyModes: ['domestic', 'cross-border'],
  fields: [
    accountField(
      'mer_id',
      'text',
      { flag: 'mer-id', value: 'ID' },
      { en: 'Merchant number', zh: '商户号' },
      { en: 'the 15-digit merchant number (merId)', zh: '15 位商户号（merId）' },
    ),
    accountField(
      'sign_cert',
      'binary',
      { flag: 'sign-cert-file', file: true, value: 'PFX' },
      { en: 'Signing certificate (.pfx)', zh: '签名证书（.pfx）' },
      {
        en: 'the PKCS#12 file with the signing key and certificate CFCA issued',
        zh: 'CFCA 签发的含签名私钥和证书的 PKCS#12 文件',
      },
    ),
    accountField(
      'sign_cert_password',
      'secret',
      { flag: 'sign-cert-password-file', file: true, value: 'FILE' },
      { en: "Signing certificate's password", zh: '签名证书密码' },
      { en: "a file holding the .pfx file's password", zh: '存有 .pfx 文件密码的文件' },
    ),
    accountField(
      'root_cert',
      'certificate',
      { flag: 'root-cert-file', file: true, value: 'CER' },
      { en: 'Root certificate', zh: '根证书' },
      { en: "UnionPay's root certificate (acp_prod_root.cer)", zh: '银联根证书（acp_prod_root.cer）' },
    ),
    accountField(
      'middle_cert',
      'certificate',
      { flag: 'middle-cert-file', file: true, value: 'CER' },
      { en: 'Middle certificate', zh: '中级证书' },
      { en: "UnionPay's middle certificate (acp_prod_middle.cer)", zh: '银联中级证书（acp_prod_middle.cer）' },
    ),
    currencyModeField(['domestic', 'cross-border']),
    endpointField(),
  ],
  parseAccount(account: ChannelAccount): UnionpayAccount {
    return {
      mer_id: required('mer_id', account.config.mer_id),
      sign_cert: required('sign_cert', account.secrets.sign_cert),
      sign_cert_password: required('sign_cert_password', account.secrets.sign_cert_password),
      root_cert: required('root_cert', account.config.root_cert),
      middle_cert: required('middle_cert', account.config.middle_cert),
      ...(account.config.endpoint && { endpoint: account.config.endpoint }),
    };
  },
  checkAccount(account: ChannelAccount, now: number): readonly string[] {
    const c = account.config;
    const problems: (string | undefined)[] = [
      !c.mer_id || !/^[0-9A-Za-z]{15}$/.test(c.mer_id) ? 'mer_id must be the 15-character merchant number' : undefined,
      c.endpoint ? checkEndpoint(c.endpoint) : undefined,
      account.payment_method !== 'upi_upop'
        ? `the UnionPay connector serves upi_upop, not ${account.payment_method}`
        : undefined,
      c.currency_mode === 'cross-border' && !CURRENCY_NUMBERS[c.currency ?? '']
        ? `UnionPay has no currency code here for ${c.currency ?? 'no currency'}: use domestic (CNY)`
        : undefined,
    ];
    try {
      const credential = readSigningCredential(
        account.secrets.sign_cert ?? '',
        account.secrets.sign_cert_password ?? '',
      );
      if (credential.notAfter < now)
        problems.push(`the signing certificate expired on ${new Date(credential.notAfter).toISOString().slice(0, 10)}`);
    } catch (e) {
      problems.push((e as Error).message);
    }
    try {
      const root = new X509Certificate(c.root_cert ?? '');
      const middle = new X509Certificate(c.middle_cert ?? '');
      if (!middle.checkIssued(root) || !middle.verify(root.publicKey))
        problems.push('the middle certificate is not issued by the root certificate');
      if (Date.parse(middle.validTo) < now) problems.push('the middle certificate has expired');
    } catch {
      problems.push('the root or middle certificate cannot be read');
    }
    return problems.filter((p): p is string => p !== undefined);
  },
};
