import type { ProviderEntry } from '../provider-entry.js';
import { PoliConnector } from './connector.js';
import { poliDescriptor } from './descriptor.js';

export const poli: ProviderEntry = {
  descriptor: poliDescriptor,
  connector: ({ http }) => new PoliConnector(http),
};
