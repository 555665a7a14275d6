import type { ChannelAccount } from '../../ports/connector.js';
import type { ProviderHttp } from '../http.js';
import { signatureOf, timestampOf } from './sign.js';
import type { CoinReply } from './transformers.js';

// Calls to CoinPayments' API: each signed with the integration's client id and secret (sign.ts),
// JSON both ways. Business meaning is transformers.ts's.

export const COINPAYMENTS_API = 'https://api.coinpayments.com';

export function endpointOf(account: ChannelAccount): string {
  return (account.config.endpoint || COINPAYMENTS_API).replace(/\/+$/, '');
}

export class CoinPaymentsClient {
  constructor(
    private readonly http: ProviderHttp,
    private readonly now: () => number,
  ) {}

  async call(
    account: ChannelAccount,
    method: 'GET' | 'POST',
    pathAndQuery: string,
    body?: Readonly<Record<string, unknown>>,
  ): Promise<CoinReply> {
    const url = `${endpointOf(account)}${pathAndQuery}`;
    const clientId = account.config.client_id ?? '';
    const timestamp = timestampOf(this.now());
    // Serialized once: the bytes sent are the bytes signed.
    const text = body === undefined ? '' : JSON.stringify(body);
    const signature = signatureOf(account.secrets.client_secret ?? '', {
      method,
      url,
      clientId,
      timestamp,
      body: text,
    });
    const answer = await this.http.send(url, {
      method,
      headers: {
        accept: 'application/json',
        'user-agent': 'payment-gateway (node)',
        'x-coinpayments-client': clientId,
        'x-coinpayments-timestamp': timestamp,
        'x-coinpayments-signature': signature,
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      ...(body !== undefined && { body: text }),
    });
    if (answer.kind === 'unknown') return answer;
    if (answer.body === '') return { kind: 'answer', status: answer.status, body: {} };
    try {
      return { kind: 'answer', status: answer.status, body: JSON.parse(answer.body) as unknown };
    } catch {
      // An error page: the status says what it is; a 2xx that is not JSON is not CoinPayments'.
      if (answer.status >= 400 && answer.status < 500) return { kind: 'answer', status: answer.status, body: {} };
      return { kind: 'unknown', reason: `HTTP ${answer.status} with a body that is not JSON` };
    }
  }
}
