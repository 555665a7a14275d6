import type { ChannelAccount } from '../../ports/connector.js';
import type { ProviderDescriptor } from '../../ports/provider.js';
import { accountField, currencyModeField, endpointField, required } from '../fields.js';
import { checkEndpoint } from '../http.js';

// A wallet's integration at CoinPayments (its API's "integration" with client id and secret): the
// customer pays an invoice in the wallet's currency with the coin they choose.

export interface CoinPaymentsAccount {
  client_id: string;
  client_secret: string;
  currency: string;
  endpoint?: string;
}

export const coinpaymentsDescriptor: ProviderDescriptor<CoinPaymentsAccount> = {
  name: 'coinpayments',
  label: { en: 'CoinPayments', zh: 'CoinPayments' },
  methods: ['coin_payments'],
  currencyModes: ['cross-border'],
  fields: [
    accountField(
      'client_id',
      'text',
      { flag: 'client-id', value: 'ID' },
      { en: 'Client ID', zh: '客户端 ID' },
      { en: "the integration's client id at CoinPayments", zh: 'CoinPayments 集成的客户端 ID' },
    ),
    accountField(
      'client_secret',
      'secret',
      { flag: 'client-secret-file', file: true, value: 'FILE' },
      { en: 'Client secret', zh: '客户端密钥' },
      { en: "a file holding the integration's client secret", zh: '存有集成客户端密钥的文件' },
    ),
    currencyModeField(['cross-border']),
    endpointField(),
  ],
  parseAccount(account: ChannelAccount): CoinPaymentsAccount {
    return {
      client_id: required('client_id', account.config.client_id),
      client_secret: required('client_secret', account.secrets.client_secret),
      currency: required('currency', account.config.currency),
      ...(account.config.endpoint && { endpoint: account.config.endpoint }),
    };
  },
  checkAccount(account: ChannelAccount): readonly string[] {
    const c = account.config;
    const problems = [
      !c.client_id || !/^[0-9A-Za-z-]{8,64}$/.test(c.client_id)
        ? "client_id must be the integration's client id (letters, digits and dashes)"
        : undefined,
      !account.secrets.client_secret ? 'the client secret is empty' : undefined,
      !c.currency ? 'the wallet has no currency' : undefined,
      c.endpoint ? checkEndpoint(c.endpoint) : undefined,
      account.payment_method !== 'coin_payments'
        ? `the CoinPayments connector serves coin_payments, not ${account.payment_method}`
        : undefined,
    ];
    return problems.filter((p): p is string => p !== undefined);
  },
};
