import { textOf } from '../../domain/text.js';
import {
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
import { azupayStatements } from './statement.js';
import { AzupayClient } from './client.js';
import { azupayDescriptor, type AzupayAccount } from './descriptor.js';
import { notificationAuthorization, notificationAuthorized } from './sign.js';
import {
  azupayAmount,
  createBody,
  createOutcome,
  errorOf,
  isDuplicate,
  payloadOf,
  refundOutcome,
  refundState,
  requestIdOf,
  requestState,
  searchRecords,
  type AzupayReply,
} from './transformers.js';

// Azupay's PaymentRequest API (PayID on Australia's New Payments Platform): each payment is a
// PayID made for it, which the customer pays from their banking app before it expires. Azupay's
// webhook carries the Authorization value given with the request (sign.ts) and is confirmed by a
// GET of the request before anything settles. Facts and their sources: docs/providers/protocols/azupay.md.

type Json = Readonly<Record<string, unknown>>;
/** Azupay's request ids are base64 (`+`, `/`, `=`): encoded wherever they go in an address. */
const byId = (path: string, id: string) => `${path}?id=${encodeURIComponent(id)}`;

export class AzupayConnector implements Connector<AzupayAccount> {
  readonly provider = 'azupay';
  readonly descriptor = azupayDescriptor;
  readonly local = false;
  readonly capabilities: ConnectorCapabilities = {
    methods: ['payid'],
    // Paid from the customer's banking app, on any device: the page shows the PayID.
    hostedFlow: () => 'transfer',
    merchantHostedQr: false,
    refund: true,
    partialRefund: true,
    close: true,
    query: true,
    refundQuery: true,
    // An expired request ends the order failed.
    reopen: false,
    // Azupay refuses a clientTransactionId twice: the request made is the one shown.
    openOnce: true,
    refusesCharge: (charge) =>
      charge.currency === 'AUD' ? undefined : `Azupay takes AUD only, not ${charge.currency}`,
  };
  private readonly client: AzupayClient;
  readonly statements: StatementSource;

  constructor(http: ProviderHttp) {
    this.client = new AzupayClient(http);
    this.statements = azupayStatements(this.client);
  }

  merchantId(account: ChannelAccount): string {
    return account.config.client_id ?? '';
  }

  async open(account: ChannelAccount, input: OpenPaymentInput): Promise<OpenOutcome> {
    if (input.flow !== 'transfer') return { kind: 'refused', reason: `Azupay has no ${input.flow} payment` };
    if (input.charge.currency !== 'AUD')
      return { kind: 'refused', reason: `Azupay takes AUD only, not ${input.charge.currency}` };
    const body = createBody({
      clientId: account.config.client_id ?? '',
      out_trade_no: input.out_trade_no,
      description: input.description,
      amount: input.charge.amount,
      expires_at: input.expires_at,
      notify_url: input.notify_url,
      authorization: notificationAuthorization(account.secrets.api_key ?? '', input.out_trade_no),
      ...(account.config.payid_suffix && { payIdSuffix: account.config.payid_suffix }),
    });
    await whenSendable(input.sendWhen);
    const r = await this.client.call(account, 'POST', '/paymentRequest', body);
    if (!isDuplicate(r)) return createOutcome(r, input.expires_at);
    // Made before, its answer lost: the request made then is the one.
    const found = await this.find(account, input.out_trade_no);
    if (found.kind !== 'found')
      return {
        kind: 'unknown',
        reason: `the request exists at Azupay but was not found by its id: ${found.kind === 'unknown' ? found.reason : 'none'}`,
      };
    const payload = payloadOf(found.record, input.expires_at);
    return payload
      ? { kind: 'opened', payload: JSON.stringify(payload) }
      : { kind: 'unknown', reason: 'the request found has no PayID' };
  }

  /** The payment request of an out_trade_no (its clientTransactionId), searched for. */
  private async find(
    account: ChannelAccount,
    out_trade_no: string,
  ): Promise<{ kind: 'found'; record: Json } | { kind: 'none' } | { kind: 'unknown'; reason: string }> {
    const r = await this.client.call(account, 'POST', '/paymentRequest/search', {
      PaymentRequestSearch: { clientTransactionId: out_trade_no },
    });
    if (r.kind === 'unknown') return r;
    if (r.status !== 200) return { kind: 'unknown', reason: `search: HTTP ${r.status} ${errorOf(r.body)}` };
    const record = searchRecords(r.body).find(
      (x) => textOf((x.PaymentRequest as Json | undefined)?.clientTransactionId) === out_trade_no,
    );
    return record ? { kind: 'found', record } : { kind: 'none' };
  }

  /** The request as Azupay has it now, by its id when the gateway has it, else by our id. */
  private async record(
    account: ChannelAccount,
    out_trade_no: string,
    id: string | undefined,
  ): Promise<{ kind: 'found'; record: Json } | { kind: 'none' } | { kind: 'unknown'; reason: string }> {
    if (!id) return this.find(account, out_trade_no);
    const r: AzupayReply = await this.client.call(account, 'GET', byId('/paymentRequest', id));
    if (r.kind === 'unknown') return r;
    if (r.status === 404 || (r.status === 400 && /not found/i.test(errorOf(r.body)))) return { kind: 'none' };
    if (r.status !== 200) return { kind: 'unknown', reason: `HTTP ${r.status} ${errorOf(r.body)}` };
    const theirs = textOf((r.body.PaymentRequest as Json | undefined)?.clientTransactionId);
    if (theirs !== out_trade_no) return { kind: 'unknown', reason: `request ${id} is of another payment (${theirs})` };
    return { kind: 'found', record: r.body };
  }

  async query(account: ChannelAccount, out_trade_no: string, known?: KnownPayment): Promise<PaymentState> {
    const found = await this.record(account, out_trade_no, requestIdOf(known?.payload));
    if (found.kind === 'unknown') return found;
    return found.kind === 'none' ? { kind: 'not_found' } : requestState(found.record);
  }

  /** Deletes a request still waiting, which de-registers its PayID; one paid or returned is not deleted. */
  async close(account: ChannelAccount, out_trade_no: string): Promise<CloseOutcome> {
    const found = await this.find(account, out_trade_no);
    if (found.kind === 'unknown') return found;
    if (found.kind === 'none') return { kind: 'closed' };
    const state = requestState(found.record);
    if (state.kind === 'failed') return { kind: 'closed' };
    if (state.kind !== 'pending') return { kind: 'refused', reason: `the payment request is ${state.kind}` };
    const id = textOf((found.record.PaymentRequestStatus as Json | undefined)?.paymentRequestId);
    const r = await this.client.call(account, 'DELETE', byId('/paymentRequest', id));
    if (r.kind === 'unknown') return r;
    if (r.status === 204 || r.status === 200) return { kind: 'closed' };
    if (r.status >= 500) return { kind: 'unknown', reason: `HTTP ${r.status} ${errorOf(r.body)}` };
    return { kind: 'refused', reason: `Azupay did not delete the request (HTTP ${r.status}) ${errorOf(r.body)}` };
  }

  async refund(account: ChannelAccount, input: RefundRequest): Promise<RefundOutcome> {
    const found = await this.find(account, input.out_trade_no);
    if (found.kind === 'unknown') return found;
    if (found.kind === 'none')
      return { kind: 'refused', reason: `Azupay has no payment request ${input.out_trade_no}` };
    const id = textOf((found.record.PaymentRequestStatus as Json | undefined)?.paymentRequestId);
    const query = new URLSearchParams({
      id,
      refundAmount: String(azupayAmount(input.amount)),
      clientRefundID: input.refund_id,
    });
    const r = await this.client.call(
      account,
      'POST',
      `/paymentRequest/refund?${query.toString().replaceAll('+', '%20')}`,
    );
    return refundOutcome(r, input.amount);
  }

  async queryRefund(account: ChannelAccount, input: RefundRequest): Promise<RefundOutcome> {
    const found = await this.find(account, input.out_trade_no);
    if (found.kind === 'unknown') return found;
    if (found.kind === 'none') return { kind: 'not_found' };
    return refundState(found.record, input.amount);
  }

  /**
   * A webhook: {PaymentRequest, PaymentRequestStatus} with the Authorization value made for its
   * request. Only an account whose value matches may have sent it; what it says is a prompt, and
   * the request as a GET returns it is the event.
   */
  async readNotification(inbound: InboundNotification, accounts: readonly ChannelAccount[]): Promise<NotificationRead> {
    let body: Json;
    try {
      const parsed = JSON.parse(inbound.body) as unknown;
      body = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Json) : {};
    } catch {
      return { kind: 'refused', reason: 'a webhook whose body is not JSON' };
    }
    const request = (body.PaymentRequest ?? {}) as Json;
    const out_trade_no = textOf(request.clientTransactionId);
    const id = textOf((body.PaymentRequestStatus as Json | undefined)?.paymentRequestId);
    if (!out_trade_no) return { kind: 'refused', reason: 'a webhook without a clientTransactionId' };
    const given = inbound.headers.authorization;
    const authorization = Array.isArray(given) ? (given[0] ?? '') : (given ?? '');
    const clientId = textOf(request.clientId);
    const account = accounts.find(
      (a) =>
        (!clientId || a.config.client_id === clientId) &&
        notificationAuthorized(authorization, a.secrets.api_key ?? '', out_trade_no),
    );
    if (!account) return { kind: 'refused', reason: 'the webhook Authorization is not the one given for its request' };
    const found = await this.record(account, out_trade_no, id || undefined);
    const state: PaymentState =
      found.kind === 'found' ? requestState(found.record) : found.kind === 'none' ? { kind: 'not_found' } : found;
    return { kind: 'event', event: { account, out_trade_no, state } };
  }

  notificationReply(accepted: boolean): NotificationReply {
    // Only a 200 acknowledges it: anything else is sent again.
    return plainNotificationReply(accepted);
  }

  async probe(account: ChannelAccount): Promise<ProbeOutcome> {
    const r = await this.client.call(account, 'POST', '/paymentRequest/search', {
      PaymentRequestSearch: { clientTransactionId: `probe${Date.now()}` },
    });
    if (r.kind === 'unknown') return { ok: false, reason: r.reason };
    if (r.status === 200)
      return {
        ok: true,
        detail: `Azupay took the API key (a search for a request that does not exist found ${searchRecords(r.body).length})`,
      };
    return { ok: false, reason: `HTTP ${r.status}: ${errorOf(r.body)}` };
  }
}
