import type { ChannelAccount } from '../../ports/connector.js';
import type { ProviderHttp } from '../http.js';
import type { PoliReply } from './transformers.js';

// Calls to POLi's API v2: HTTP Basic with the merchant code and authentication code on every call,
// JSON both ways. Business meaning is transformers.ts's.

export const POLI_API = 'https://poliapi.apac.paywithpoli.com';

export function endpointOf(account: ChannelAccount): string {
  return (account.config.endpoint || POLI_API).replace(/\/+$/, '');
}

export class PoliClient {
  constructor(private readonly http: ProviderHttp) {}

  async call(
    account: ChannelAccount,
    method: 'GET' | 'POST',
    pathAndQuery: string,
    body?: Readonly<Record<string, unknown>>,
  ): Promise<PoliReply> {
    const answer = await this.send(account, method, pathAndQuery, body);
    if (answer.kind === 'unknown') return answer;
    let parsed: unknown;
    try {
      parsed = answer.body === '' ? {} : JSON.parse(answer.body);
    } catch {
      // A 5xx page is no answer; a 2xx that is not JSON is not POLi's either.
      return { kind: 'unknown', reason: `HTTP ${answer.status} with a body that is not JSON` };
    }
    const object = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? parsed : {};
    return { kind: 'answer', status: answer.status, body: object as Record<string, unknown> };
  }

  /** A GET whose answer is kept as POLi sent it (a day's transactions, an array, kept as the statement). */
  get(account: ChannelAccount, pathAndQuery: string) {
    return this.send(account, 'GET', pathAndQuery);
  }

  private send(
    account: ChannelAccount,
    method: 'GET' | 'POST',
    pathAndQuery: string,
    body?: Readonly<Record<string, unknown>>,
  ) {
    const credentials = `${account.config.merchant_code ?? ''}:${account.secrets.authentication_code ?? ''}`;
    return this.http.send(`${endpointOf(account)}${pathAndQuery}`, {
      method,
      headers: {
        authorization: `Basic ${Buffer.from(credentials, 'utf8').toString('base64')}`,
        accept: 'application/json',
        'user-agent': 'payment-gateway (node)',
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
  }
}
