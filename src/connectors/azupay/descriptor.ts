import type { ChannelAccount } from '../../ports/connector.js';
import type { ProviderDescriptor } from '../../ports/provider.js';
import { accountField, currencyModeField, endpointField, required } from '../fields.js';
import { checkEndpoint } from '../http.js';

// A wallet's client at Azupay (PayID payment requests on Australia's New Payments Platform): its
// client id, its secret API key, and optionally the PayID domain its PayIDs are made under.
// Azupay takes AUD only.

export interface AzupayAccount {
  client_id: string;
  api_key: string;
  payid_suffix?: string;
  endpoint?: string;
}

export const azupayDescriptor: ProviderDescriptor<AzupayAccount> = {
  name: 'azupay',
  label: { en: 'Azupay (PayID)', zh: 'Azupay（PayID）' },
  methods: ['payid'],
  currencyModes: ['cross-border'],
  fields: [
    accountField(
      'client_id',
      'text',
      { flag: 'client-id', value: 'ID' },
      { en: 'Client ID', zh: '客户 ID' },
      { en: 'the client id Azupay allocated (it differs in UAT)', zh: 'Azupay 分配的客户 ID（UAT 环境不同）' },
    ),
    accountField(
      'api_key',
      'secret',
      { flag: 'api-key-file', file: true, value: 'FILE' },
      { en: 'API key', zh: 'API 密钥' },
      { en: "a file holding the client's secret API key (SECR…)", zh: '存有客户 Secret API 密钥（SECR…）的文件' },
    ),
    accountField(
      'payid_suffix',
      'text',
      { flag: 'payid-suffix', value: 'SUFFIX' },
      { en: 'PayID domain', zh: 'PayID 域名' },
      {
        en: "the domain of the PayIDs made for payments (one Azupay validated for the client); empty for the client's default",
        zh: '为付款生成的 PayID 所用域名（须经 Azupay 验证）；留空则用客户默认域名',
      },
      { required: false },
    ),
    currencyModeField(['cross-border']),
    endpointField(),
  ],
  parseAccount(account: ChannelAccount): AzupayAccount {
    return {
      client_id: required('client_id', account.config.client_id),
      api_key: required('api_key', account.secrets.api_key),
      ...(account.config.payid_suffix && { payid_suffix: account.config.payid_suffix }),
      ...(account.config.endpoint && { endpoint: account.config.endpoint }),
    };
  },
  checkAccount(account: ChannelAccount): readonly string[] {
    const c = account.config;
    const problems = [
      !c.client_id || !/^[A-Za-z0-9_-]{5,50}$/.test(c.client_id)
        ? "client_id must be the client id Azupay allocated (5 to 50 letters, digits, '-' or '_')"
        : undefined,
      !account.secrets.api_key ? 'the API key is empty' : undefined,
      c.payid_suffix && !/^(?=.{5,50}$)[a-z0-9_.-]+\.[a-z]+$/.test(c.payid_suffix)
        ? `payid_suffix ${c.payid_suffix} is not a PayID domain (lower-case, like pay.example.com.au)`
        : undefined,
      c.currency !== 'AUD'
        ? `Azupay takes AUD only: a wallet in ${c.currency ?? 'no currency'} cannot use it`
        : undefined,
      c.endpoint ? checkEndpoint(c.endpoint) : undefined,
      account.payment_method !== 'payid'
        ? `the Azupay connector serves payid, not ${account.payment_method}`
        : undefined,
    ];
    return problems.filter((p): p is string => p !== undefined);
  },
};
