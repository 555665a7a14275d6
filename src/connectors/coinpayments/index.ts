import type { ProviderEntry } from '../provider-entry.js';
import { CoinPaymentsConnector } from './connector.js';
import { coinpaymentsDescriptor } from './descriptor.js';

export const coinpayments: ProviderEntry = {
  descriptor: coinpaymentsDescriptor,
  connector: ({ http }) => new CoinPaymentsConnector(http),
};
