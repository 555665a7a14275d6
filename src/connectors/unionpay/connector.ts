import { textOf } from '../../domain/text.js';
import {
  formPayloadOf,
  whenSendable,
  type ChannelAccount,
  type CloseOutcome,
  type Connector,
  type ConnectorCapabilities,
  type InboundNotification,
  type KnownPayment,
  type NotificationRead,
  type NotificationReply,
  type OpenOutcome,
  type OpenPaymentInput,
  type PaymentState,
  type ProbeOutcome,
  type RefundOutcome,
  type StatementSource,
  type RefundRequest,
} from '../../ports/connector.js';
import { plainNotificationReply } from '../fields.js';
import type { ProviderHttp } from '../http.js';
import { AcpClient, endpointOf, PATHS } from './client.js';
import { unionpayStatements } from './statement.js';
import { unionpayDescriptor, type UnionpayAccount } from './descriptor.js';
import { acpTime } from './sign.js';
import {
  CURRENCY_NUMBERS,
  backFields,
  backOutcome,
  backState,
  consumeFields,
  consumeState,
  formOpened,
  queryFields,
  wantsRevoke,
  type AcpReply,
} from './transformers.js';

// UnionPay online payment through the ACP gateway, version 5.1.0: the hosted page posts the signed
// consume to UnionPay's cashier, which sends the customer back to the page (a POST the gateway
// answers by asking UnionPay) and sends its signed back notification; the gateway settles from
// queryTrans, whose answer is verified like every answer. Refunds (04, partial) and same-day
// revokes (31) are transactions of their own, learned by querying them. Facts and their sources:
// docs/providers/protocols/unionpay.md.

export class UnionpayConnector implements Connector<UnionpayAccount> {
  readonly provider = 'unionpay';
  readonly descriptor = unionpayDescriptor;
  readonly local = false;
  readonly capabilities: ConnectorCapabilities = {
    methods: ['upi_upop'],
    // The browser posts the signed form to UnionPay's cashier, on a phone as on a desktop.
    hostedFlow: () => 'form',
    merchantHostedQr: false,
    refund: true,
    partialRefund: true,
    // ACP has no close of a consume: one not paid ends at its payTimeout.
    close: false,
    query: true,
    refundQuery: true,
    // A consume the card's bank refused ends there; the customer may try again.
    reopen: true,
    // A consume is its orderId and txnTime: the form made once is the one shown, and asked about.
    openOnce: true,
    refusesCharge: (charge) =>
      CURRENCY_NUMBERS[charge.currency] ? undefined : `UnionPay has no currency code here for ${charge.currency}`,
  };
  private readonly client: AcpClient;
  readonly statements: StatementSource;

  constructor(
    http: ProviderHttp,
    private readonly now: () => number = Date.now,
  ) {
    this.client = new AcpClient(http, now);
    this.statements = unionpayStatements(this.client, now);
  }

  merchantId(account: ChannelAccount): string {
    return account.config.mer_id ?? '';
  }

  async open(account: ChannelAccount, input: OpenPaymentInput): Promise<OpenOutcome> {
    if (input.flow !== 'form') return { kind: 'refused', reason: `UnionPay has no ${input.flow} payment here` };
    if (!CURRENCY_NUMBERS[input.charge.currency])
      return { kind: 'refused', reason: `UnionPay has no currency code here for ${input.charge.currency}` };
    const fields = consumeFields({
      merId: account.config.mer_id ?? '',
      out_trade_no: input.out_trade_no,
      charge: input.charge,
      now: this.now(),
      expires_at: input.expires_at,
      return_url: input.return_url,
      notify_url: input.notify_url,
      phone: false,
    });
    let signed: Record<string, string>;
    try {
      signed = this.client.sign(account, fields);
    } catch (e) {
      return { kind: 'refused', reason: (e as Error).message };
    }
    // Nothing is sent from here: the browser posts the form, once the payment is recorded.
    await whenSendable(input.sendWhen);
    return formOpened(`${endpointOf(account)}${PATHS.front}`, signed);
  }

  /** queryTrans.do of one transaction (a consume, a refund, a revoke), by its orderId and its own txnTime. */
  private ask(account: ChannelAccount, orderId: string, txnTime: string): Promise<AcpReply> {
    return this.client.post(account, PATHS.query, queryFields(account.config.mer_id ?? '', orderId, txnTime));
  }

  /** A consume as UnionPay has it now, checked to be the one asked about. */
  private async consume(account: ChannelAccount, out_trade_no: string, txnTime: string): Promise<PaymentState> {
    const r = await this.ask(account, out_trade_no, txnTime);
    if (r.kind === 'answer' && r.fields.respCode === '00' && r.fields.orderId !== out_trade_no)
      return { kind: 'unknown', reason: `the answer is of another order (${r.fields.orderId ?? '-'})` };
    return consumeState(r);
  }

  async query(account: ChannelAccount, out_trade_no: string, known?: KnownPayment): Promise<PaymentState> {
    const txnTime = formPayloadOf(known?.payload)?.fields.txnTime;
    // No form was made (its open did not finish): nobody posted a consume to UnionPay.
    if (!txnTime) return { kind: 'not_found' };
    return this.consume(account, out_trade_no, txnTime);
  }

  close(): Promise<CloseOutcome> {
    return Promise.resolve({
      kind: 'refused',
      reason: 'UnionPay consumes cannot be closed: one not paid ends at its payTimeout',
    });
  }

  /**
   * A refund (04) of part or all of the consume, under the refund's id as its orderId and the
   * refund's time as its txnTime (so that asking again is the same transaction). When UnionPay
   * answers that the consume is to be revoked instead (a whole refund on the day it was paid), a
   * revoke (31) of the whole amount is made under the refund's id and `V`.
   */
  async refund(account: ChannelAccount, input: RefundRequest): Promise<RefundOutcome> {
    if (!input.provider_ref) return { kind: 'refused', reason: 'no UnionPay queryId is recorded for the consume' };
    const base = {
      merId: account.config.mer_id ?? '',
      txnTime: acpTime(input.requested_at ?? this.now()),
      amount: input.amount,
      currency: input.charge.currency,
      origQryId: input.provider_ref,
      notify_url: input.notify_url,
    };
    const r = await this.client.post(
      account,
      PATHS.back,
      backFields({ ...base, txnType: '04', orderId: input.refund_id }),
    );
    if (!wantsRevoke(r) || input.amount !== input.charge.amount) return backOutcome(r);
    return backOutcome(
      await this.client.post(
        account,
        PATHS.back,
        backFields({ ...base, txnType: '31', orderId: `${input.refund_id}V` }),
      ),
    );
  }

  async queryRefund(account: ChannelAccount, input: RefundRequest): Promise<RefundOutcome> {
    const txnTime = acpTime(input.requested_at ?? this.now());
    const refund = backState(await this.ask(account, input.refund_id, txnTime));
    if (refund.kind !== 'not_found' || input.amount !== input.charge.amount) return refund;
    // Made as a same-day revoke, perhaps.
    return backState(await this.ask(account, `${input.refund_id}V`, txnTime));
  }

  /**
   * The back notification: a form, signed with the certificate it carries, which must be
   * UnionPay's and chain to the account's certificates. A consume's is confirmed by queryTrans;
   * a refund's or revoke's is taken and not read (its outcome is asked for).
   */
  async readNotification(inbound: InboundNotification, accounts: readonly ChannelAccount[]): Promise<NotificationRead> {
    const fields = Object.fromEntries(new URLSearchParams(inbound.body));
    const account = accounts.find((a) => a.config.mer_id === fields.merId);
    if (!account)
      return {
        kind: 'refused',
        reason: `no UnionPay account has merId ${textOf(fields.merId).slice(0, 20) || '(none)'}`,
      };
    const why = this.client.verify(account, fields);
    if (why) return { kind: 'refused', reason: why };
    if (fields.txnType !== '01')
      return {
        kind: 'ignored',
        reason: `a notification of txnType ${fields.txnType ?? '-'} (refunds are asked about)`,
      };
    if (!fields.orderId || !fields.txnTime)
      return { kind: 'refused', reason: 'a consume notification without orderId or txnTime' };
    return {
      kind: 'event',
      event: {
        account,
        out_trade_no: fields.orderId,
        state: await this.consume(account, fields.orderId, fields.txnTime),
      },
    };
  }

  notificationReply(accepted: boolean): NotificationReply {
    // A 200 within 10 s acknowledges it; anything else is sent again (5 times in all).
    return plainNotificationReply(accepted, 'ok');
  }

  async probe(account: ChannelAccount): Promise<ProbeOutcome> {
    let r: AcpReply;
    try {
      r = await this.ask(account, `probe${this.now()}`, acpTime(this.now()));
    } catch (e) {
      return { ok: false, reason: (e as Error).message };
    }
    if (r.kind === 'unknown') return { ok: false, reason: r.reason };
    if (r.fields.respCode === '34')
      return {
        ok: true,
        detail:
          "UnionPay took the signature, and its answer verified with the account's certificates (34: no such transaction)",
      };
    return { ok: false, reason: `UnionPay answered ${r.fields.respCode ?? '-'} ${r.fields.respMsg ?? ''}` };
  }
}
