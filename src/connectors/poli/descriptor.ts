import type { ChannelAccount } from '../../ports/connector.js';
import type { ProviderDescriptor } from '../../ports/provider.js';
import { accountField, currencyModeField, endpointField, required } from '../fields.js';
import { checkEndpoint } from '../http.js';

// A wallet's account with POLi (bank transfer in New Zealand and Australia, API v2): its merchant
// code and authentication code. POLi charges its merchant account's currency, which must be the
// wallet's. POLi closed in Australia in 2023 (shared/README.md), so that is NZD.

export interface PoliAccount {
  merchant_code: string;
  authentication_code: string;
  currency: string;
  endpoint?: string;
}

/** The currencies POLi merchant accounts are in. */
export const POLI_CURRENCIES = ['NZD'] as const;

export const poliDescriptor: ProviderDescriptor<PoliAccount> = {
  name: 'poli',
  label: { en: 'POLi', zh: 'POLi' },
  methods: ['polipay'],
  currencyModes: ['cross-border'],
  fields: [
    accountField(
      'merchant_code',
      'text',
      { flag: 'merchant-code', value: 'CODE' },
      { en: 'Merchant code', zh: '商户代码' },
      { en: "POLi's merchant code (S61…)", zh: 'POLi 商户代码（S61…）' },
    ),
    accountField(
      'authentication_code',
      'secret',
      { flag: 'authentication-code-file', file: true, value: 'FILE' },
      { en: 'Authentication code', zh: '认证码' },
      { en: "a file holding POLi's authentication code", zh: '存有 POLi 认证码的文件' },
    ),
    currencyModeField(['cross-border']),
    endpointField(),
  ],
  parseAccount(account: ChannelAccount): PoliAccount {
    return {
      merchant_code: required('merchant_code', account.config.merchant_code),
      authentication_code: required('authentication_code', account.secrets.authentication_code),
      currency: required('currency', account.config.currency),
      ...(account.config.endpoint && { endpoint: account.config.endpoint }),
    };
  },
  checkAccount(account: ChannelAccount): readonly string[] {
    const c = account.config;
    const problems = [
      !c.merchant_code || !/^[0-9A-Za-z]{1,32}$/.test(c.merchant_code)
        ? "merchant_code must be POLi's merchant code (letters and digits)"
        : undefined,
      !account.secrets.authentication_code ? 'the authentication code is empty' : undefined,
      !(POLI_CURRENCIES as readonly string[]).includes(c.currency ?? '')
        ? `POLi charges NZD (its merchant account's currency; POLi closed in Australia in 2023): a wallet in ${c.currency ?? 'no currency'} cannot use it`
        : undefined,
      c.endpoint ? checkEndpoint(c.endpoint) : undefined,
      account.payment_method !== 'polipay'
        ? `the POLi connector serves polipay, not ${account.payment_method}`
        : undefined,
    ];
    return problems.filter((p): p is string => p !== undefined);
  },
};
