import type { Connector } from '../ports/connector.js';
import type { ProviderDescriptor } from '../ports/provider.js';
import type { ProviderHttp } from './http.js';

/** A provider as its folder exports it (`index.ts`): what it is, and how its connector is made. */
export interface ProviderEntry {
  readonly descriptor: ProviderDescriptor;
  connector(deps: { http: ProviderHttp }): Connector;
}
