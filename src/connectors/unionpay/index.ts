import type { ProviderEntry } from '../provider-entry.js';
import { UnionpayConnector } from './connector.js';
import { unionpayDescriptor } from './descriptor.js';

export const unionpay: ProviderEntry = {
  descriptor: unionpayDescriptor,
  connector: ({ http }) => new UnionpayConnector(http),
};
