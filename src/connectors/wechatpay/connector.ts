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
  StatementSource,
} from '../../ports/connector.js';
import type { ProviderHttp } from '../http.js';
import { parseObject, WechatPayClient } from './client.js';
import { wechatpayStatements } from './statement.js';
import { wechatpayDescriptor, type WechatPayAccount } from './descriptor.js';
import { decryptResource, nonceStr, paySign, platformKeys, signedHeaders, verifyProblem } from './sign.js';
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

export class WechatPayConnector implements Connector<WechatPayAccount> {
  readonly provider = 'wechatpay';
  readonly descriptor = wechatpayDescriptor;
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
    reopen: false,
    openOnce: false,
  };
  private readonly client: WechatPayClient;
  readonly statements: StatementSource;

  constructor(
    private readonly http: ProviderHttp,
    private readonly now: () => number = Date.now,
  ) {
    this.client = new WechatPayClient(http, now);
    this.statements = wechatpayStatements(this.client);
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

  merchantId(account: ChannelAccount): string {
    return account.config.mchid ?? '';
  }

  async open(account: ChannelAccount, given: OpenPaymentInput): Promise<OpenOutcome> {
    const flow = given.flow;
    if (flow === 'transfer' || flow === 'form') return { kind: 'refused', reason: `WeChat Pay has no ${flow} flow` };
    const input = { ...given, flow };
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
