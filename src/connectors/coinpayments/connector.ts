import { exponentOf } from '../../domain/money.js';
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
import { coinpaymentsStatements } from './statement.js';
import { CoinPaymentsClient, endpointOf } from './client.js';
import { coinpaymentsDescriptor, type CoinPaymentsAccount } from './descriptor.js';
import { signatureMatches } from './sign.js';
import {
  coinValue,
  createOutcome,
  errorOf,
  fiatCurrencyOf,
  invoiceBody,
  invoiceIdOf,
  invoiceState,
  webhookInvoice,
  type FiatCurrency,
} from './transformers.js';

// CoinPayments (API v1 invoices): the customer's browser goes to CoinPayments' checkout for an
// invoice in the wallet's currency and pays in the coin they choose; CoinPayments signs its
// webhooks as it signs requests, and the gateway settles from the invoice as a GET of it says (the
// webhook's own copy is not trusted). No refund API and no cancel. Facts and their sources:
// docs/providers/protocols/coinpayments.md.

const invoicePath = (id: string) => `/api/v1/merchant/invoices/${encodeURIComponent(id)}`;
const header = (h: InboundNotification['headers'], name: string) => {
  const v = h[name];
  return Array.isArray(v) ? (v[0] ?? '') : (v ?? '');
};

export class CoinPaymentsConnector implements Connector<CoinPaymentsAccount> {
  readonly provider = 'coinpayments';
  readonly descriptor = coinpaymentsDescriptor;
  readonly local = false;
  readonly capabilities: ConnectorCapabilities = {
    methods: ['coin_payments'],
    hostedFlow: () => 'redirect',
    merchantHostedQr: false,
    refund: false,
    partialRefund: false,
    close: false,
    query: true,
    refundQuery: false,
    // An invoice that times out or is cancelled ends the order failed: nothing to try again on.
    reopen: false,
    // CoinPayments has no idempotency key: asked twice, it makes two invoices.
    openOnce: true,
  };
  private readonly client: CoinPaymentsClient;
  readonly statements: StatementSource;
  /** CoinPayments' ids of fiat currencies, per endpoint: they do not change. */
  private readonly currencies = new Map<string, FiatCurrency>();

  constructor(
    http: ProviderHttp,
    private readonly now: () => number = Date.now,
  ) {
    this.client = new CoinPaymentsClient(http, now);
    this.statements = coinpaymentsStatements(this.client, (account, code) => this.fiat(account, code));
  }

  merchantId(account: ChannelAccount): string {
    return account.config.client_id ?? '';
  }

  /** The wallet currency's id at CoinPayments (GET /api/v1/currencies), asked once per endpoint. */
  private async fiat(
    account: ChannelAccount,
    code: string,
  ): Promise<FiatCurrency | { kind: 'refused' | 'unknown'; reason: string }> {
    const key = `${endpointOf(account)} ${code}`;
    const known = this.currencies.get(key);
    if (known) return known;
    const r = await this.client.call(account, 'GET', `/api/v1/currencies?types=fiat&q=${encodeURIComponent(code)}`);
    if (r.kind === 'unknown') return r;
    if (r.status !== 200)
      return {
        kind: r.status >= 500 ? 'unknown' : 'refused',
        reason: `currencies: HTTP ${r.status} ${errorOf(r.body)}`,
      };
    const found = fiatCurrencyOf(r.body, code);
    if (!found) return { kind: 'refused', reason: `CoinPayments has no fiat currency ${code}` };
    this.currencies.set(key, found);
    return found;
  }

  async open(account: ChannelAccount, input: OpenPaymentInput): Promise<OpenOutcome> {
    if (input.flow !== 'redirect') return { kind: 'refused', reason: `CoinPayments has no ${input.flow} payment` };
    const currency = await this.fiat(account, input.charge.currency);
    if ('kind' in currency) return currency;
    const value = coinValue(input.charge.amount, exponentOf(input.charge.currency), currency);
    if (value === undefined)
      return { kind: 'refused', reason: `CoinPayments counts ${input.charge.currency} in fewer decimals than it has` };
    const body = invoiceBody({
      out_trade_no: input.out_trade_no,
      description: input.description,
      value,
      currency,
      notify_url: input.notify_url,
    });
    await whenSendable(input.sendWhen);
    return createOutcome(await this.client.call(account, 'POST', '/api/v1/merchant/invoices', body), input.return_url);
  }

  async query(account: ChannelAccount, out_trade_no: string, known?: KnownPayment): Promise<PaymentState> {
    const id = invoiceIdOf(known?.payload);
    // No answer to the invoice's creation: nobody was sent to its checkout, so nothing can be paid there.
    if (!id) return { kind: 'not_found' };
    return this.invoice(account, id, out_trade_no);
  }

  /** The invoice as CoinPayments has it now, checked to be the payment's. */
  private async invoice(account: ChannelAccount, id: string, out_trade_no: string): Promise<PaymentState> {
    const r = await this.client.call(account, 'GET', invoicePath(id));
    if (r.kind === 'unknown') return r;
    if (r.status === 404) return { kind: 'not_found' };
    if (r.status !== 200) return { kind: 'unknown', reason: `HTTP ${r.status} ${errorOf(r.body)}` };
    const invoice = r.body as Record<string, unknown>;
    if (textOf(invoice.invoiceId) !== out_trade_no)
      return { kind: 'unknown', reason: `invoice ${id} is of another payment (${textOf(invoice.invoiceId)})` };
    const code = account.config.currency ?? '';
    const currency = await this.fiat(account, code);
    if ('kind' in currency) return { kind: 'unknown', reason: currency.reason };
    return invoiceState(invoice, { charge: { currency: code }, exponent: exponentOf(code), currency });
  }

  close(): Promise<CloseOutcome> {
    return Promise.resolve({
      kind: 'refused',
      reason: 'CoinPayments invoices cannot be cancelled through its API: one not paid times out there',
    });
  }

  refund(): Promise<RefundOutcome> {
    return Promise.resolve({ kind: 'refused', reason: NO_REFUND });
  }

  queryRefund(): Promise<RefundOutcome> {
    return Promise.resolve({ kind: 'refused', reason: NO_REFUND });
  }

  /**
   * A webhook: signed like a request, over the notification address as the gateway gave it. The
   * account is the one whose client id it names; what it says is only a prompt: the invoice is
   * asked for, and that is the event.
   */
  async readNotification(inbound: InboundNotification, accounts: readonly ChannelAccount[]): Promise<NotificationRead> {
    const clientId = header(inbound.headers, 'x-coinpayments-client');
    const timestamp = header(inbound.headers, 'x-coinpayments-timestamp');
    const signature = header(inbound.headers, 'x-coinpayments-signature');
    if (!clientId || !timestamp || !signature)
      return { kind: 'refused', reason: 'a webhook without the three X-CoinPayments headers' };
    const account = accounts.find((a) => a.config.client_id === clientId);
    if (!account) return { kind: 'refused', reason: `no CoinPayments account has client id ${clientId.slice(0, 64)}` };
    if (!inbound.url) return { kind: 'refused', reason: 'the notification address is not known' };
    const parts = { method: 'POST', url: inbound.url, clientId, timestamp, body: inbound.body };
    if (!signatureMatches(signature, account.secrets.client_secret ?? '', parts))
      return { kind: 'refused', reason: 'the webhook signature does not verify' };
    const told = webhookInvoice(inbound.body);
    if (!told) return { kind: 'ignored', reason: 'a webhook without an invoice id and invoiceId' };
    return {
      kind: 'event',
      event: {
        account,
        out_trade_no: told.out_trade_no,
        state: await this.invoice(account, told.id, told.out_trade_no),
      },
    };
  }

  notificationReply(accepted: boolean): NotificationReply {
    // Only a 200 acknowledges it; anything else is sent again.
    return plainNotificationReply(accepted);
  }

  async probe(account: ChannelAccount): Promise<ProbeOutcome> {
    const r = await this.client.call(account, 'GET', '/api/v1/merchant/invoices');
    if (r.kind === 'unknown') return { ok: false, reason: r.reason };
    if (r.status === 200) return { ok: true, detail: 'CoinPayments took the signed request (its invoice list)' };
    return { ok: false, reason: `HTTP ${r.status}: ${errorOf(r.body)}` };
  }
}

const NO_REFUND =
  'CoinPayments has no refund API: send the coins back from the CoinPayments wallet (the buyer gave a refund address)';
