import { whenSendable, type ChannelAccount } from '../../ports/connector.js';
import { STATEMENT_DOWNLOAD, type ProviderHttp } from '../http.js';
import { rsaSha256Sign } from '../pem.js';
import { authorization, nonceStr, platformKeys, requestMessage, signedHeaders, verifyProblem } from './sign.js';
import { isCrossBorder, type WechatReply } from './transformers.js';

// Calls to WeChat Pay API v3: the signed request (Authorization), the verified answer (Wechatpay-*
// headers, the platform public key the account names). Business meaning is transformers.ts's.

export const WECHATPAY_API = 'https://api.mch.weixin.qq.com';
export const WECHATPAY_GLOBAL_API = 'https://apihk.mch.weixin.qq.com';

export function endpointOf(account: ChannelAccount): string {
  return (account.config.endpoint || (isCrossBorder(account) ? WECHATPAY_GLOBAL_API : WECHATPAY_API)).replace(
    /\/+$/,
    '',
  );
}

export class WechatPayClient {
  constructor(
    private readonly http: ProviderHttp,
    private readonly now: () => number = Date.now,
  ) {}

  /** The Authorization header of a request, signed with the account's key. */
  private async authorize(account: ChannelAccount, method: string, pathAndQuery: string, body: string) {
    const timestamp = Math.floor(this.now() / 1000);
    const nonce = nonceStr();
    const signature = await rsaSha256Sign(
      account.secrets.private_key ?? '',
      requestMessage(method, pathAndQuery, timestamp, nonce, body),
    );
    return authorization({
      mchid: account.config.mchid ?? '',
      serial_no: account.config.serial_no ?? '',
      timestamp,
      nonce,
      signature,
    });
  }

  /**
   * A bill's file from the address WeChat Pay gave (`download_url`), signed as any request. Its
   * answer is not signed: the file is checked by the hash the signed answer gave (statement.ts).
   */
  async download(account: ChannelAccount, url: string) {
    if (!URL.canParse(url)) return { kind: 'unknown' as const, reason: 'download_url is not a URL' };
    const target = new URL(url);
    return this.http.download(
      url,
      {
        authorization: await this.authorize(account, 'GET', `${target.pathname}${target.search}`, ''),
        'user-agent': 'payment-gateway (node)',
        'wechatpay-serial': account.config.platform_public_key_id ?? '',
      },
      STATEMENT_DOWNLOAD,
    );
  }

  async call(
    account: ChannelAccount,
    method: 'GET' | 'POST',
    pathAndQuery: string,
    body?: Readonly<Record<string, unknown>>,
    sendWhen?: Promise<boolean>,
  ): Promise<WechatReply> {
    const text = body === undefined ? '' : JSON.stringify(body);
    const signedAs = await this.authorize(account, method, pathAndQuery, text);
    await whenSendable(sendWhen);
    const answer = await this.http.send(`${endpointOf(account)}${pathAndQuery}`, {
      method,
      headers: {
        authorization: signedAs,
        accept: 'application/json',
        'user-agent': 'payment-gateway (node)',
        // The key we verify answers with: WeChat Pay signs with the one named here.
        'wechatpay-serial': account.config.platform_public_key_id ?? '',
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      ...(body !== undefined && { body: text }),
    });
    if (answer.kind === 'unknown') return answer;
    const { status } = answer;
    const signed = signedHeaders(answer.headers);
    const problem =
      signed && verifyProblem(signed, answer.body, platformKeys(account.config), Math.floor(this.now() / 1000));
    if (status >= 200 && status < 300) {
      // An answer that moves money must be WeChat Pay's: unsigned or unverified, it is no answer.
      if (!signed) return { kind: 'unknown', reason: `HTTP ${status} without a WeChat Pay signature` };
      if (problem) return { kind: 'unknown', reason: `HTTP ${status} whose signature is refused: ${problem}` };
      return { kind: 'ok', status, body: parseObject(answer.body) ?? {} };
    }
    if (status >= 500) return { kind: 'unknown', reason: `HTTP ${status} ${errorOf(answer.body).code}`.trim() };
    // An error answer may be unsigned (as the official SDKs accept), but a signature it carries must verify.
    if (signed && problem) return { kind: 'unknown', reason: `HTTP ${status} whose signature is refused: ${problem}` };
    return { kind: 'error', status, ...errorOf(answer.body), signed: Boolean(signed) };
  }
}

/** The JSON object a body holds; undefined for anything else. */
export function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(text) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function errorOf(text: string): { code: string; message: string } {
  const body = parseObject(text) ?? {};
  return {
    code: typeof body.code === 'string' ? body.code : '',
    message: typeof body.message === 'string' ? body.message : '',
  };
}
