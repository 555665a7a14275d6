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
} from '../../ports/connector.js';
import { plainNotificationReply } from '../fields.js';
import type { ProviderHttp } from '../http.js';
import { PoliClient } from './client.js';
import { poliStatements } from './statement.js';
import { POLI_CURRENCIES, poliDescriptor, type PoliAccount } from './descriptor.js';
import {
  MINIMUM_AMOUNT,
  initiateBody,
  initiateOutcome,
  tokenOf,
  transactionState,
  type PoliReply,
} from './transformers.js';

// POLi (API v2): the customer's browser goes to POLi's NavigateURL and pays from their bank, then
// comes back to the hosted page with a token; POLi also nudges the notification address with the
// token. Neither proves anything: the gateway asks GetTransaction with the token, which the
// address it was given holds. POLi cannot close a transaction (it times out by itself) and has no
// refund API. Facts and their sources: docs/providers/protocols/poli.md.

const getTransaction = (token: string) => `/api/v2/Transaction/GetTransaction?token=${encodeURIComponent(token)}`;

/** POLi's error codes for a token it does not know, or that is another merchant's. */
const OTHER_TOKEN = new Set(['1001', '1002']);

export class PoliConnector implements Connector<PoliAccount> {
  readonly provider = 'poli';
  readonly descriptor = poliDescriptor;
  readonly local = false;
  readonly capabilities: ConnectorCapabilities = {
    methods: ['polipay'],
    // Every browser goes to POLi's pages: there is no QR and no app.
    hostedFlow: () => 'redirect',
    merchantHostedQr: false,
    refund: false,
    partialRefund: false,
    close: false,
    query: true,
    refundQuery: false,
    // A customer who cancels at POLi, or whose bank fails, may come back and try again.
    reopen: true,
    // POLi has no idempotency key: asked twice, it makes two transactions.
    openOnce: true,
    refusesCharge: (charge) =>
      charge.amount < MINIMUM_AMOUNT
        ? `POLi takes 1.00 ${charge.currency} or more`
        : (POLI_CURRENCIES as readonly string[]).includes(charge.currency)
          ? undefined
          : `POLi takes NZD, not ${charge.currency}`,
  };
  private readonly client: PoliClient;
  readonly statements: StatementSource;

  constructor(
    http: ProviderHttp,
    private readonly now: () => number = Date.now,
  ) {
    this.client = new PoliClient(http);
    this.statements = poliStatements(this.client);
  }

  merchantId(account: ChannelAccount): string {
    return account.config.merchant_code ?? '';
  }

  async open(account: ChannelAccount, input: OpenPaymentInput): Promise<OpenOutcome> {
    if (input.flow !== 'redirect') return { kind: 'refused', reason: `POLi has no ${input.flow} payment` };
    if (input.charge.amount < MINIMUM_AMOUNT) return { kind: 'refused', reason: 'POLi takes 1.00 or more' };
    await whenSendable(input.sendWhen);
    const body = initiateBody({ ...input, now: this.now() });
    return initiateOutcome(await this.client.call(account, 'POST', '/api/v2/Transaction/Initiate', body));
  }

  async query(account: ChannelAccount, out_trade_no: string, known?: KnownPayment): Promise<PaymentState> {
    const token = tokenOf(known?.payload);
    // POLi is asked by the token its answer to the open held. Without that answer nobody was sent to
    // its NavigateURL, so whatever POLi made of the request cannot be paid: nothing to find.
    if (!token) return { kind: 'not_found' };
    const r = await this.client.call(account, 'GET', getTransaction(token));
    const state = stateOf(r);
    if (r.kind === 'answer' && state.kind !== 'unknown' && textOf(r.body.MerchantReference) !== out_trade_no)
      return { kind: 'unknown', reason: `the token is of another transaction (${textOf(r.body.MerchantReference)})` };
    return state;
  }

  close(): Promise<CloseOutcome> {
    return Promise.resolve({
      kind: 'refused',
      reason: 'POLi transactions cannot be closed: one the customer does not finish times out at POLi',
    });
  }

  refund(): Promise<RefundOutcome> {
    return Promise.resolve({ kind: 'refused', reason: POLI_NO_REFUND });
  }

  queryRefund(): Promise<RefundOutcome> {
    return Promise.resolve({ kind: 'refused', reason: POLI_NO_REFUND });
  }

  /**
   * A nudge: a form with the transaction's token, and nothing else. The token is asked about with
   * each of POLi's accounts until one knows it (a token is its merchant's); what that says is the event.
   */
  async readNotification(inbound: InboundNotification, accounts: readonly ChannelAccount[]): Promise<NotificationRead> {
    const token = new URLSearchParams(inbound.body).get('Token') ?? '';
    if (!token) return { kind: 'refused', reason: 'a nudge without a Token' };
    let unanswered: string | undefined;
    for (const account of accounts) {
      const r = await this.client.call(account, 'GET', getTransaction(token));
      if (r.kind === 'unknown') {
        unanswered = r.reason;
        continue;
      }
      if (OTHER_TOKEN.has(textOf(r.body.ErrorCode)) || r.status === 401 || r.status === 403) continue;
      const out_trade_no = textOf(r.body.MerchantReference);
      if (r.status !== 200 || !out_trade_no) {
        unanswered = `HTTP ${r.status} ${textOf(r.body.ErrorCode)} ${textOf(r.body.ErrorMessage)}`;
        continue;
      }
      return { kind: 'event', event: { account, out_trade_no, state: transactionState(r.body) } };
    }
    // No account knows the token: forged, or POLi did not answer (then it is sent again).
    return {
      kind: 'refused',
      reason: unanswered ? `POLi did not answer about the token: ${unanswered}` : 'no POLi account knows the token',
    };
  }

  notificationReply(accepted: boolean): NotificationReply {
    return plainNotificationReply(accepted);
  }

  async probe(account: ChannelAccount): Promise<ProbeOutcome> {
    const r = await this.client.call(account, 'GET', getTransaction(`probe${this.now()}`));
    if (r.kind === 'unknown') return { ok: false, reason: r.reason };
    const code = textOf(r.body.ErrorCode);
    if (code === '1001')
      return {
        ok: true,
        detail: 'POLi took the merchant code and authentication code (an unknown token: Invalid token)',
      };
    return {
      ok: false,
      reason: `HTTP ${r.status} ${code || '-'}: ${textOf(r.body.ErrorMessage) || textOf(r.body.Message) || 'no message'}`,
    };
  }
}

const POLI_NO_REFUND =
  'POLi has no refund: pay the customer back from the bank account (the payer is on the POLi console)';

function stateOf(r: PoliReply): PaymentState {
  if (r.kind === 'unknown') return r;
  if (r.status !== 200)
    return { kind: 'unknown', reason: `HTTP ${r.status} ${textOf(r.body.ErrorCode)} ${textOf(r.body.ErrorMessage)}` };
  return transactionState(r.body);
}
