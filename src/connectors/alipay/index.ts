import type { ProviderEntry } from '../provider-entry.js';
import { AlipayConnector } from './connector.js';
import { alipayDescriptor } from './descriptor.js';

export const alipay: ProviderEntry = {
  descriptor: alipayDescriptor,
  connector: ({ http }) => new AlipayConnector(http),
};
