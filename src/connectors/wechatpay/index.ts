import type { ProviderEntry } from '../provider-entry.js';
import { WechatPayConnector } from './connector.js';
import { wechatpayDescriptor } from './descriptor.js';

export const wechatpay: ProviderEntry = {
  descriptor: wechatpayDescriptor,
  connector: ({ http }) => new WechatPayConnector(http),
};
