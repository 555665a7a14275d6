import { createHash } from 'node:crypto';
import type { ChannelAccount } from '../../ports/connector.js';
import type { ProviderHttp } from '../http.js';
import { readSigningCredential, type SigningCredential } from './pkcs12.js';
import { signFields, verifyFields } from './sign.js';
import { parseAnswer, type AcpReply } from './transformers.js';

// Calls to UnionPay's ACP gateway: every request signed with the merchant's key from its .pfx,
// sent as a form; every answer verified (its certificate chained to the account's root and middle
// certificates, and UnionPay's) before a field of it counts. An answer that does not verify is no
// answer. Business meaning is transformers.ts's.

export const ACP_GATEWAY = 'https://gateway.95516.com';
export const PATHS = {
  front: '/gateway/api/frontTransReq.do',
  back: '/gateway/api/backTransReq.do',
  query: '/gateway/api/queryTrans.do',
} as const;

export function endpointOf(account: ChannelAccount): string {
  return (account.config.endpoint || ACP_GATEWAY).replace(/\/+$/, '');
}

export class AcpClient {
  /** Opened .pfx files, by a hash of the file and its password (opening one is slow). */
  private readonly credentials = new Map<string, SigningCredential>();

  constructor(
    private readonly http: ProviderHttp,
    private readonly now: () => number,
  ) {}

  credential(account: ChannelAccount): SigningCredential {
    const pfx = account.secrets.sign_cert ?? '';
    const password = account.secrets.sign_cert_password ?? '';
    const key = createHash('sha256').update(pfx).update('\0').update(password).digest('hex');
    let c = this.credentials.get(key);
    if (!c) {
      c = readSigningCredential(pfx, password);
      if (this.credentials.size > 100) this.credentials.clear();
      this.credentials.set(key, c);
    }
    return c;
  }

  sign(account: ChannelAccount, fields: Record<string, string>): Record<string, string> {
    const c = this.credential(account);
    return signFields(fields, c.privateKeyPem, c.certId);
  }

  /** Whether a message (an answer, a notification) is UnionPay's for this account; why not otherwise. */
  verify(account: ChannelAccount, fields: Readonly<Record<string, string>>): string | undefined {
    return verifyFields(
      fields,
      { root: account.config.root_cert ?? '', middle: account.config.middle_cert ?? '' },
      this.now(),
    );
  }

  /** A signed form to the account's gateway (or `base`: the file download host), its answer verified. */
  async post(
    account: ChannelAccount,
    path: string,
    fields: Record<string, string>,
    base = endpointOf(account),
  ): Promise<AcpReply> {
    const body = new URLSearchParams(this.sign(account, fields)).toString();
    const answer = await this.http.send(`${base}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded;charset=UTF-8',
        'user-agent': 'payment-gateway (node)',
      },
      body,
    });
    if (answer.kind === 'unknown') return answer;
    if (answer.status !== 200) return { kind: 'unknown', reason: `HTTP ${answer.status}` };
    const parsed = parseAnswer(answer.body.trim());
    const why = this.verify(account, parsed);
    if (why)
      return {
        kind: 'unknown',
        reason: `an answer that is not UnionPay's: ${why} (${parsed.respCode ?? '-'} ${parsed.respMsg ?? ''})`,
      };
    return { kind: 'answer', fields: parsed };
  }
}
