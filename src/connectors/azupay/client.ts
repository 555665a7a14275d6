import type { ChannelAccount } from '../../ports/connector.js';
import type { ProviderHttp } from '../http.js';
import type { AzupayReply } from './transformers.js';

// Calls to Azupay's API: the secret API key as the Authorization header itself (no scheme), JSON
// both ways. Business meaning is transformers.ts's.

export const AZUPAY_API = 'https://api.azupay.com.au/v1';

export function endpointOf(account: ChannelAccount): string {
  return (account.config.endpoint || AZUPAY_API).replace(/\/+$/, '');
}

export class AzupayClient {
  constructor(private readonly http: ProviderHttp) {}

  async call(
    account: ChannelAccount,
    method: 'GET' | 'POST' | 'DELETE',
    pathAndQuery: string,
    body?: Readonly<Record<string, unknown>>,
  ): Promise<AzupayReply> {
    const answer = await this.http.send(`${endpointOf(account)}${pathAndQuery}`, {
      method,
      headers: {
        authorization: account.secrets.api_key ?? '',
        accept: 'application/json',
        'user-agent': 'payment-gateway (node)',
        // Azupay refuses a call without it, even one with no body.
        'content-type': 'application/json',
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    if (answer.kind === 'unknown') return answer;
    if (answer.body === '') return { kind: 'answer', status: answer.status, body: {} };
    try {
      const parsed = JSON.parse(answer.body) as unknown;
      const object = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? parsed : {};
      return { kind: 'answer', status: answer.status, body: object as Record<string, unknown> };
    } catch {
      if (answer.status >= 400 && answer.status < 500) return { kind: 'answer', status: answer.status, body: {} };
      return { kind: 'unknown', reason: `HTTP ${answer.status} with a body that is not JSON` };
    }
  }
}
