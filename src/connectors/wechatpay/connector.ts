import { textOf } from '../../domain/text.js';
import type { BrowserKind } from '../../domain/redirection.js';
import type {
  ChannelAccount,
  CloseOutcome,
  Connector,
  ConnectorCapabilities,
  InboundNotification,
  NotificationRead,
  NotificationReply,
  OpenOutcome,
  OpenPaymentInput,
  PayerIdentity,
  PaymentState,
  ProbeOutcome,
  RefundOutcome,
  RefundRequest,
} from '../../ports/connector.js';
import { checkEndpoint, isLocalAddress, type ProviderHttp } from '../http.js';
import { pemProblem } from '../pem.js';
import { parseObject, WechatPayClient } from './client.js';
import {
  certificateKey,
  decryptResource,
  nonceStr,
  paySign,
  platformKeys,
  signedHeaders,
  verifyProblem,
} from './sign.js';
import {
  closeOutcome,
  openOutcome,
  orderBody,
  paths,
  probeOutcome,
  queryState,
  refundBody,
  refundOutcome,
  refundQueryOutcome,
  tradeState,
} from './transformers.js';

/** Why a platform certificate cannot stand beside the configured key, or undefined. */
function certificateProblem(pem: string, primaryId: string | undefined): string | undefined {
  let id: string;
  try {
    const key = certificateKey(pem);
    if (pemProblem('platform_certificate', key.pem, 'public'))
      return 'platform_certificate must hold an RSA public key';
    id = key.id;
  } catch {
    return 'platform_certificate must be a WeChat Pay platform certificate (PEM, BEGIN CERTIFICATE)';
  }
  return id === primaryId?.toUpperCase() ? `platform_certificate is the configured key ${id} itself` : undefined;
}

const WECHAT_OAUTH = 'https://open.weixin.qq.com';
const WECHAT_SNS = 'https://api.weixin.qq.com';

// WeChat Pay through API v3. A desktop browser gets the Native QR (when the merchant asked for
// present_qr, else it is told to pay in WeChat on the phone, as the original service did); a
// phone's browser is sent to WeChat Pay's H5 page; WeChat's own browser gets JSAPI when the
// account has it on (jsapi=on: the merchant's official account passes the payer's openid), else
// the QR, which WeChat reads from the page with a long press. Merchant-hosted QR is Native.
// Account config: mchid, appid, serial_no (the merchant API certificate's), platform_public_key
// and platform_public_key_id (WeChat Pay's key and its id, PUB_KEY_ID_… or a certificate serial),
// endpoint (the API's base: a provider sandbox, a relay, a test fake), oauth_endpoint (the base of
// WeChat's web authorization, which customers' browsers visit: only for a test double), currency_mode,
// currency, mcc (cross-border), jsapi (on|off); secrets: private_key, apiv3_key, appsecret (JSAPI).

export class WechatPayConnector implements Connector {
  readonly provider = 'wechatpay' as const;
  readonly local = false;
  readonly capabilities: ConnectorCapabilities = {
    methods: ['wechat'],
    hostedFlow: (_method, browser: BrowserKind, present_qr: boolean, account: ChannelAccount) => {
      switch (browser) {
        case 'desktop':
          return present_qr ? 'qr' : 'instructions';
        case 'mobile':
          return 'redirect';
        case 'wechat':
          return account.config.jsapi === 'on' ? 'jsapi' : 'qr';
        case 'alipay':
          return 'qr';
      }
    },
    merchantHostedQr: true,
    refund: true,
    partialRefund: true,
    close: true,
    query: true,
    refundQuery: true,
  };
  private readonly client: WechatPayClient;

  constructor(
    private readonly http: ProviderHttp,
    private readonly now: () => number = Date.now,
  ) {
    this.client = new WechatPayClient(http, now);
  }

  /**
   * JSAPI's payer: WeChat's web authorization (snsapi_base, silent) on the account's official
   * account (appid, whose AppSecret is the secret `appsecret`) gives the payer's openid.
   */
  readonly payerIdentity: PayerIdentity = {
    authorizeUrl: (account, return_to, state) => {
      // WeChat reads these in this order, and wants the #wechat_redirect fragment.
      const q = `appid=${encodeURIComponent(account.config.appid ?? '')}&redirect_uri=${encodeURIComponent(return_to)}&response_type=code&scope=snsapi_base&state=${encodeURIComponent(state)}`;
      return `${account.config.oauth_endpoint || WECHAT_OAUTH}/connect/oauth2/authorize?${q}#wechat_redirect`;
    },
    payerFromCode: async (account, code) => {
      const q = new URLSearchParams({
        appid: account.config.appid ?? '',
        secret: account.secrets.appsecret ?? '',
        code,
        grant_type: 'authorization_code',
      });
      const answer = await this.http.send(
        `${account.config.oauth_endpoint || WECHAT_SNS}/sns/oauth2/access_token?${q.toString()}`,
        { method: 'GET', headers: { accept: 'application/json' } },
      );
      if (answer.kind === 'unknown') return { ok: false, reason: answer.reason };
      const body = parseObject(answer.body) ?? {};
      if (answer.status === 200 && typeof body.openid === 'string' && body.openid !== '')
        return { ok: true, payer: body.openid };
      return {
        ok: false,
        reason: `HTTP ${answer.status} errcode ${textOf(body.errcode) || '-'}: ${textOf(body.errmsg) || 'no openid'}`,
      };
    },
  };

  checkAccount(account: ChannelAccount): readonly string[] {
    const c = account.config;
    const s = account.secrets;
    const problems = [
      !c.mchid || !/^\d{1,32}$/.test(c.mchid) ? 'mchid must be the WeChat Pay merchant id (digits)' : undefined,
      !c.appid || !/^[0-9A-Za-z_]{1,32}$/.test(c.appid)
        ? 'appid must be the AppID bound to the merchant id (wx…)'
        : undefined,
      !c.serial_no || !/^[0-9A-Fa-f]{8,64}$/.test(c.serial_no)
        ? "serial_no must be the merchant API certificate's serial number (hex)"
        : undefined,
      pemProblem('private_key', s.private_key, 'private'),
      !s.apiv3_key || Buffer.byteLength(s.apiv3_key, 'utf8') !== 32
        ? 'the APIv3 key must be exactly 32 characters'
        : undefined,
      pemProblem('platform_public_key', c.platform_public_key, 'public'),
      c.platform_certificate ? certificateProblem(c.platform_certificate, c.platform_public_key_id) : undefined,
      !c.platform_public_key_id || !/^[0-9A-Za-z_]{1,64}$/.test(c.platform_public_key_id)
        ? "platform_public_key_id must be the key's id (PUB_KEY_ID_…) or the platform certificate's serial"
        : undefined,
      c.endpoint ? checkEndpoint(c.endpoint) : undefined,
      c.oauth_endpoint && !isLocalAddress(c.oauth_endpoint)
        ? 'oauth_endpoint is for a test double on this machine only (http://127.0.0.1 or localhost): the AppSecret goes to it'
        : undefined,
      c.currency_mode === 'cross-border' && !c.currency
        ? 'a cross-border account needs the currency it prices in'
        : undefined,
      c.jsapi === 'on' && !s.appsecret
        ? "JSAPI needs the official account's AppSecret (--appsecret-file) to learn the payer's openid"
        : undefined,
      c.currency_mode === 'cross-border' && !/^\d{4}$/.test(c.mcc ?? '')
        ? 'a cross-border account needs its merchant category code (--mcc, 4 digits)'
        : undefined,
      account.payment_method !== 'wechat'
        ? `the WeChat Pay connector serves wechat, not ${account.payment_method}`
        : undefined,
    ];
    return problems.filter((p): p is string => p !== undefined);
  }

  merchantId(account: ChannelAccount): string {
    return account.config.mchid ?? '';
  }

  async open(account: ChannelAccount, input: OpenPaymentInput): Promise<OpenOutcome> {
    if (input.flow === 'jsapi' && !input.payer) return { kind: 'refused', reason: "JSAPI needs the payer's openid" };
    const opened = openOutcome(
      account,
      input.flow,
      await this.client.call(
        account,
        'POST',
        paths.open(account, input.flow),
        orderBody(account, input),
        input.sendWhen,
      ),
    );
    if (opened.kind !== 'opened') return opened;
    switch (input.flow) {
      case 'qr':
        return opened;
      case 'redirect': {
        // WeChat Pay's page sends the customer back to redirect_url (on the H5 domain registered for the account).
        const url = `${opened.payload}${opened.payload.includes('?') ? '&' : '?'}redirect_url=${encodeURIComponent(input.return_url)}`;
        return { kind: 'opened', payload: url };
      }
      case 'jsapi':
        return { kind: 'opened', payload: JSON.stringify(await this.jsapiParams(account, opened.payload)) };
    }
  }

  /** The parameters of getBrandWCPayRequest for a prepay_id, signed with the merchant's key. */
  private async jsapiParams(account: ChannelAccount, prepay_id: string): Promise<Record<string, string>> {
    const p = {
      appId: account.config.appid ?? '',
      timeStamp: String(Math.floor(this.now() / 1000)),
      nonceStr: nonceStr(),
      package: `prepay_id=${prepay_id}`,
    };
    return { ...p, signType: 'RSA', paySign: await paySign(account.secrets.private_key ?? '', p) };
  }

  async query(account: ChannelAccount, out_trade_no: string): Promise<PaymentState> {
    return queryState(await this.client.call(account, 'GET', paths.query(account, out_trade_no)));
  }

  async close(account: ChannelAccount, out_trade_no: string): Promise<CloseOutcome> {
    return closeOutcome(
      await this.client.call(account, 'POST', paths.close(account, out_trade_no), { mchid: account.config.mchid }),
    );
  }

  async refund(account: ChannelAccount, input: RefundRequest): Promise<RefundOutcome> {
    return refundOutcome(await this.client.call(account, 'POST', paths.refund(account), refundBody(account, input)));
  }

  async queryRefund(account: ChannelAccount, input: RefundRequest): Promise<RefundOutcome> {
    return refundQueryOutcome(await this.client.call(account, 'GET', paths.refundQuery(account, input.refund_id)));
  }

  /**
   * Verifies the notification's signature with the platform key its Wechatpay-Serial names (of an
   * account that has it), then opens its resource with that account's APIv3 key; the resource's
   * mchid must be the account's.
   */
  async readNotification(inbound: InboundNotification, accounts: readonly ChannelAccount[]): Promise<NotificationRead> {
    const h = signedHeaders(inbound.headers);
    if (!h) return { kind: 'refused', reason: 'no Wechatpay-Timestamp, -Nonce, -Signature and -Serial headers' };
    const keyed = accounts.filter((a) => platformKeys(a.config).some((k) => k.id === h.serial));
    if (keyed.length === 0)
      return { kind: 'refused', reason: `no WeChat Pay account has the platform key ${h.serial.slice(0, 64)}` };
    const nowS = Math.floor(this.now() / 1000);
    const problems = keyed.map((a) => verifyProblem(h, inbound.body, platformKeys(a.config), nowS));
    const verified = keyed.filter((_, i) => problems[i] === undefined);
    if (verified.length === 0) return { kind: 'refused', reason: problems[0]! };
    let note: { event_type?: unknown; resource?: { ciphertext?: unknown; nonce?: unknown; associated_data?: unknown } };
    try {
      note = JSON.parse(inbound.body) as typeof note;
    } catch {
      return { kind: 'refused', reason: 'the body is not JSON' };
    }
    if (note.event_type !== 'TRANSACTION.SUCCESS')
      return { kind: 'ignored', reason: `event_type ${String(note.event_type)}` };
    const r = note.resource;
    if (!r || typeof r.ciphertext !== 'string' || typeof r.nonce !== 'string')
      return { kind: 'refused', reason: 'no encrypted resource' };
    for (const account of verified) {
      let tx: Record<string, unknown>;
      try {
        tx = JSON.parse(
          decryptResource(account.secrets.apiv3_key ?? '', {
            ciphertext: r.ciphertext,
            nonce: r.nonce,
            associated_data: typeof r.associated_data === 'string' ? r.associated_data : '',
          }),
        ) as Record<string, unknown>;
      } catch {
        continue;
      }
      const mchid = tx.mchid ?? tx.sp_mchid;
      const match = verified.find((a) => a.config.mchid === mchid);
      if (!match)
        return {
          kind: 'refused',
          reason: `the resource is for mchid ${String(mchid)}, which no account with this key has`,
        };
      if (typeof tx.out_trade_no !== 'string') return { kind: 'refused', reason: 'the resource has no out_trade_no' };
      return { kind: 'event', event: { account: match, out_trade_no: tx.out_trade_no, state: tradeState(tx) } };
    }
    return {
      kind: 'refused',
      reason: 'the resource does not open with the APIv3 key of any account with this platform key',
    };
  }

  /** Taken: 204, no body. Not taken: an error status (WeChat Pay sends it again, for about a day). */
  notificationReply(accepted: boolean): NotificationReply {
    return accepted
      ? { status: 204, contentType: 'text/plain; charset=utf-8', body: '' }
      : { status: 500, contentType: 'application/json', body: '{"code":"FAIL","message":"not accepted"}' };
  }

  async probe(account: ChannelAccount): Promise<ProbeOutcome> {
    return probeOutcome(await this.client.call(account, 'GET', paths.query(account, `probe${Date.now()}`)));
  }
}
