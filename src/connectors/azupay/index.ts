import type { ProviderEntry } from '../provider-entry.js';
import { AzupayConnector } from './connector.js';
import { azupayDescriptor } from './descriptor.js';

export const azupay: ProviderEntry = {
  descriptor: azupayDescriptor,
  connector: ({ http }) => new AzupayConnector(http),
};
