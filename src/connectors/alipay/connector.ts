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
  PaymentState,
  ProbeOutcome,
  RefundOutcome,
  RefundRequest,
  StatementSource,
} from '../../ports/connector.js';
import { whenSendable } from '../../ports/connector.js';
import type { ProviderHttp } from '../http.js';
import { AlipayClient } from './client.js';
import { alipayDescriptor, type AlipayAccount } from './descriptor.js';
import { notificationSignContent, rsa2Verify } from './sign.js';
import { alipayStatements } from './statement.js';
import {
  alipayAmount,
  cancelOutcome,
  closeOutcome,
  paymentFields,
  precreateOutcome,
  probeOutcome,
  queryState,
  refundOutcome,
  refundQueryOutcome,
  tradeState,
} from './transformers.js';

// Alipay through its OpenAPI (v2, RSA2). A desktop browser and merchant-hosted QR get a QR code
// (alipay.trade.precreate); a phone's browser and Alipay's own browser are sent to Alipay's mobile
// web payment (alipay.trade.wap.pay); inside WeChat, which does not open Alipay, the customer is
// told to open the page in the phone's browser. Account config: app_id, alipay_public_key,
// endpoint (optional), currency_mode, currency (the wallet's), and in certificate mode app_cert,
// alipay_cert (whose key alipay_public_key is) and alipay_root_cert (cert.ts); secrets: private_key.

export class AlipayConnector implements Connector<AlipayAccount> {
  readonly provider = 'alipay';
  readonly descriptor = alipayDescriptor;
  readonly local = false;
  readonly capabilities: ConnectorCapabilities = {
    methods: ['alipay'],
    hostedFlow: (_method, browser: BrowserKind) =>
      browser === 'wechat' ? 'instructions' : browser === 'desktop' ? 'qr' : 'redirect',
    merchantHostedQr: true,
    refund: true,
    partialRefund: true,
    close: true,
    query: true,
    refundQuery: true,
    reopen: false,
    openOnce: false,
  };
  private readonly client: AlipayClient;
  readonly statements: StatementSource;

  constructor(
    http: ProviderHttp,
    private readonly now: () => number = Date.now,
  ) {
    this.client = new AlipayClient(http, now);
    this.statements = alipayStatements(this.client, http);
  }

  merchantId(account: ChannelAccount): string {
    return account.config.app_id ?? '';
  }

  /** The currency Alipay's amounts are in when it does not name one: CNY, or a cross-border account's own. */
  private currencyOf(account: ChannelAccount): string {
    return account.config.currency_mode === 'cross-border' ? (account.config.currency ?? 'CNY') : 'CNY';
  }

  async open(account: ChannelAccount, input: OpenPaymentInput): Promise<OpenOutcome> {
    const fields = paymentFields(input);
    switch (input.flow) {
      case 'qr':
        return precreateOutcome(
          await this.client.call(
            account,
            'alipay.trade.precreate',
            fields,
            { notify_url: input.notify_url },
            input.sendWhen,
          ),
        );
      case 'redirect': {
        const payload = await this.client.pageUrl(
          account,
          'alipay.trade.wap.pay',
          { ...fields, product_code: 'QUICK_WAP_WAY', quit_url: input.return_url },
          { notify_url: input.notify_url, return_url: input.return_url },
        );
        // Nothing is sent from here; the address is only handed out once the payment is recorded.
        await whenSendable(input.sendWhen);
        return { kind: 'opened', payload };
      }
      case 'jsapi':
        return { kind: 'refused', reason: 'Alipay has no JSAPI flow' };
      case 'transfer':
      case 'form':
        return { kind: 'refused', reason: `Alipay has no ${input.flow} flow` };
    }
  }

  async query(account: ChannelAccount, out_trade_no: string): Promise<PaymentState> {
    return queryState(await this.client.call(account, 'alipay.trade.query', { out_trade_no }));
  }

  /**
   * Closes an unpaid trade. One Alipay has not created yet (a QR nobody scanned) cannot be closed:
   * it is cancelled instead, which stops it from being created and paid later.
   */
  async close(account: ChannelAccount, out_trade_no: string): Promise<CloseOutcome> {
    const closed = closeOutcome(await this.client.call(account, 'alipay.trade.close', { out_trade_no }));
    if (closed.kind !== 'cancel') return closed;
    return cancelOutcome(await this.client.call(account, 'alipay.trade.cancel', { out_trade_no }));
  }

  async refund(account: ChannelAccount, input: RefundRequest): Promise<RefundOutcome> {
    const charge = { amount: input.amount, currency: input.charge.currency };
    const outcome = refundOutcome(
      await this.client.call(account, 'alipay.trade.refund', {
        out_trade_no: input.out_trade_no,
        refund_amount: alipayAmount(charge),
        out_request_no: input.refund_id,
        ...(input.reason && { refund_reason: [...input.reason].slice(0, 256).join('') }),
        ...(charge.currency !== 'CNY' && { refund_currency: charge.currency }),
      }),
    );
    if (outcome.kind !== 'confirm') return outcome;
    // fund_change N: made before (a repeated request), or not finished; the refund query says which.
    const confirmed = await this.queryRefund(account, input);
    return confirmed.kind === 'not_found' ? { kind: 'processing' } : confirmed;
  }

  async queryRefund(account: ChannelAccount, input: RefundRequest): Promise<RefundOutcome> {
    return refundQueryOutcome(
      await this.client.call(account, 'alipay.trade.fastpay.refund.query', {
        out_trade_no: input.out_trade_no,
        out_request_no: input.refund_id,
      }),
    );
  }

  async readNotification(inbound: InboundNotification, accounts: readonly ChannelAccount[]): Promise<NotificationRead> {
    const fields: Record<string, string> = {};
    for (const [k, v] of new URLSearchParams(inbound.body)) {
      if (k in fields) return { kind: 'refused', reason: `field ${k} appears twice` };
      fields[k] = v;
    }
    if (!fields.sign) return { kind: 'refused', reason: 'no sign field (not an Alipay notification)' };
    if (fields.sign_type && fields.sign_type !== 'RSA2')
      return { kind: 'refused', reason: `sign_type ${fields.sign_type} is not RSA2` };
    const candidates = accounts.filter((a) => a.config.app_id === fields.app_id);
    if (candidates.length === 0)
      return { kind: 'refused', reason: `no Alipay account has app_id ${fields.app_id ?? '(none)'}` };
    const content = notificationSignContent(fields);
    const account = candidates.find((a) => rsa2Verify(a.config.alipay_public_key ?? '', content, fields.sign));
    if (!account)
      return {
        kind: 'refused',
        reason: `the signature does not verify with the Alipay public key of app_id ${fields.app_id}`,
      };
    if (fields.notify_type && fields.notify_type !== 'trade_status_sync')
      return { kind: 'ignored', reason: `notify_type ${fields.notify_type}` };
    if (!fields.out_trade_no) return { kind: 'refused', reason: 'no out_trade_no' };
    const state = tradeState(fields);
    // A cross-border payment's notification that does not name its currency is not taken as CNY
    // (which tradeState reads it as): whether Alipay names it there is not documented, so the trade
    // is asked about instead (the query answer names the currency of a trade opened with one). Which wallet's the trade is, the
    // app_id does not say (wallets may share an Alipay app), so any cross-border account of it counts.
    const unnamed =
      state.kind === 'paid' && !fields.trans_currency && candidates.some((a) => this.currencyOf(a) !== 'CNY');
    const read = unnamed
      ? { kind: 'unknown' as const, reason: "the notification does not name the trade's currency (trans_currency)" }
      : state;
    return { kind: 'event', event: { account, out_trade_no: fields.out_trade_no, state: read } };
  }

  /** Alipay takes exactly `success` as the answer; anything else is sent again, for about a day. */
  notificationReply(accepted: boolean): NotificationReply {
    return { status: 200, contentType: 'text/plain; charset=utf-8', body: accepted ? 'success' : 'fail' };
  }

  async probe(account: ChannelAccount): Promise<ProbeOutcome> {
    return probeOutcome(await this.client.call(account, 'alipay.trade.query', { out_trade_no: `probe${Date.now()}` }));
  }
}
