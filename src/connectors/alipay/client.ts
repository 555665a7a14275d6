import { textOf } from '../../domain/text.js';
import { whenSendable, type ChannelAccount } from '../../ports/connector.js';
import type { ProviderHttp } from '../http.js';
import { rsaSha256Sign } from '../pem.js';
import { certSns } from './cert.js';
import { alipayTime, extractSignedObject, requestSignContent, rsa2Verify } from './sign.js';
import type { AlipayReply } from './transformers.js';

// Calls to Alipay's OpenAPI gateway (gateway.do, protocol v2, RSA2): the signed request, the
// verified answer. Business meaning is transformers.ts's.

export const ALIPAY_GATEWAY = 'https://openapi.alipay.com/gateway.do';

/** The common parameters Alipay expects in the URL; biz_content goes in the form body. */
function commonParams(
  account: ChannelAccount,
  method: string,
  now: number,
  extra: Record<string, string>,
): Record<string, string> {
  const sns = certSns(account);
  return {
    app_id: account.config.app_id ?? '',
    method,
    format: 'JSON',
    charset: 'utf-8',
    sign_type: 'RSA2',
    timestamp: alipayTime(now),
    version: '1.0',
    // Certificate mode: the app's certificate and Alipay's roots, named by their SNs (signed with the rest).
    ...(sns && { app_cert_sn: sns.app_cert_sn, alipay_root_cert_sn: sns.alipay_root_cert_sn }),
    ...extra,
  };
}

async function signed(account: ChannelAccount, params: Record<string, string>): Promise<Record<string, string>> {
  return { ...params, sign: await rsaSha256Sign(account.secrets.private_key ?? '', requestSignContent(params)) };
}

export function endpointOf(account: ChannelAccount): string {
  return account.config.endpoint || ALIPAY_GATEWAY;
}

export class AlipayClient {
  constructor(
    private readonly http: ProviderHttp,
    private readonly now: () => number = Date.now,
  ) {}

  /** One API call; the answer verified with the account's Alipay public key. */
  async call(
    account: ChannelAccount,
    method: string,
    biz: Readonly<Record<string, unknown>>,
    extra: Record<string, string> = {},
    sendWhen?: Promise<boolean>,
  ): Promise<AlipayReply> {
    const biz_content = JSON.stringify(biz);
    const params = await signed(account, { ...commonParams(account, method, this.now(), extra), biz_content });
    await whenSendable(sendWhen);
    const { biz_content: body, ...query } = params;
    const answer = await this.http.send(`${endpointOf(account)}?${new URLSearchParams(query).toString()}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded;charset=utf-8', accept: 'application/json' },
      body: new URLSearchParams({ biz_content: body }).toString(),
    });
    if (answer.kind === 'unknown') return answer;
    if (answer.status !== 200) return { kind: 'unknown', reason: `HTTP ${answer.status} from Alipay` };
    return readAnswer(account, method, answer.body);
  }

  /**
   * A page flow (alipay.trade.wap.pay): no call from here, a signed address the customer's browser
   * is sent to. Alipay creates the trade when the customer pays there.
   */
  async pageUrl(
    account: ChannelAccount,
    method: string,
    biz: Readonly<Record<string, unknown>>,
    extra: Record<string, string>,
  ): Promise<string> {
    const params = await signed(account, {
      ...commonParams(account, method, this.now(), extra),
      biz_content: JSON.stringify(biz),
    });
    return `${endpointOf(account)}?${new URLSearchParams(params).toString()}`;
  }
}

/** Reads and verifies an answer body: its `<method>_response` (or `error_response`) object, signed by Alipay. */
export function readAnswer(account: ChannelAccount, method: string, text: string): AlipayReply {
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return { kind: 'unknown', reason: 'Alipay answered with something that is not JSON' };
  }
  const responseKey = `${method.replaceAll('.', '_')}_response`;
  const root = responseKey in parsed ? responseKey : 'error_response';
  const content = parsed[root];
  if (typeof content !== 'object' || content === null)
    return { kind: 'unknown', reason: `Alipay's answer has no ${responseKey}` };
  const fields = content as Record<string, unknown>;
  const raw = extractSignedObject(text, root);
  const sign = parsed.sign;
  const publicKey = account.config.alipay_public_key ?? '';
  const signedBy = (content: string) =>
    typeof sign === 'string' &&
    // Some answers escape / as \/ in the signed text: the official SDKs try both.
    (rsa2Verify(publicKey, content, sign) ||
      (content.includes('\\/') && rsa2Verify(publicKey, content.replaceAll('\\/', '/'), sign)));
  const code = textOf(fields.code);
  // A success must be signed; a failure may not be (Alipay signs business failures, not every
  // gateway error), but one that carries a signature must verify, as the official SDKs check.
  if (code === '10000' || typeof sign === 'string') {
    if (raw === undefined || !signedBy(raw))
      return { kind: 'unknown', reason: unverified(account, parsed.alipay_cert_sn) };
  }
  if (code === '10000') return { kind: 'success', body: fields };
  return {
    kind: 'failure',
    code,
    sub_code: textOf(fields.sub_code),
    sub_msg: textOf(fields.sub_msg) || textOf(fields.msg),
    signed: typeof sign === 'string',
  };
}

function unverified(account: ChannelAccount, named: unknown): string {
  const expected = certSns(account)?.alipay_cert_sn;
  // Alipay renews its certificate from time to time and then signs with the new one's key.
  if (expected && typeof named === 'string' && named !== expected) {
    return `Alipay signed its answer with the key of its certificate ${named}, not of the configured alipay_cert (${expected}): download Alipay's new public key certificate (alipayCertPublicKey_RSA2.crt) from the Open Platform and set the account with it`;
  }
  return `Alipay's answer does not verify with the configured Alipay ${expected ? 'certificate' : 'public key'}`;
}
