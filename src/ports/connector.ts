import type { Charge, CurrencyMode, PaymentFlow, ProviderName } from '../domain/channel.js';
import type { BrowserKind } from '../domain/redirection.js';
import type { StatementLine } from '../domain/reconciliation.js';
import type { PaymentMethod } from '../domain/transaction.js';
import type { ProviderDescriptor } from './provider.js';

export type { Charge, CurrencyMode, PaymentFlow, ProviderName };

// A connector moves money through one payment provider (Alipay, WeChat Pay, the built-in sandbox).
// Each lives in src/connectors/<provider>/: the calls (client.ts) and a pure mapping of the
// provider's wire formats and statuses onto these types (transformers.ts). The gateway decides,
// calls the connector outside any database transaction, then persists the outcome. An outcome the
// provider did not give (a timeout, a reset connection, a 5xx, a "system error") is `unknown`,
// never a refusal: the gateway asks again with the same id.

export interface ConnectorCapabilities {
  readonly methods: readonly PaymentMethod[];
  /**
   * The flow the hosted page opens for this browser, or 'instructions' when it opens none here (the
   * customer is told where to pay instead).
   */
  hostedFlow(
    method: PaymentMethod,
    browser: BrowserKind,
    present_qr: boolean,
    account: ChannelAccount,
  ): PaymentFlow | 'instructions';
  /** Merchant-hosted QR (host_type 1): the gateway data carries the QR. */
  readonly merchantHostedQr: boolean;
  readonly refund: boolean;
  readonly partialRefund: boolean;
  readonly close: boolean;
  readonly query: boolean;
  readonly refundQuery: boolean;
  /**
   * The provider's payment can end unpaid while the order is still payable (a customer cancelling
   * at their bank): when the customer comes back, the hosted page opens another attempt of the flow.
   */
  readonly reopen: boolean;
  /**
   * The provider makes a new payment each time it is asked (no idempotency key: POLi, CoinPayments):
   * its answer, once stored, is shown again while the payment is open, and it is never asked twice.
   */
  readonly openOnce: boolean;
  /**
   * What the provider would refuse of a charge before taking it (under its minimum, a currency it
   * does not take): the create is refused with this, rather than the hosted page failing later.
   */
  refusesCharge?(charge: Charge): string | undefined;
}

/** A channel account: a wallet's contract with a provider for one method, its secrets decrypted. */
export interface ChannelAccount {
  wallet_id: string;
  payment_method: PaymentMethod;
  provider: ProviderName;
  /** Provider ids and public material: app_id, mchid, serial_no, public keys, endpoint, currency_mode. */
  config: Readonly<Record<string, string>>;
  /** Private keys and the like, decrypted only in memory. */
  secrets: Readonly<Record<string, string>>;
}

/** What the gateway stored of a provider payment. */
export interface KnownPayment {
  /** The provider's answer to its open: a QR's text, an address, parameters; null until it answered. */
  payload: string | null;
}

export interface OpenPaymentInput {
  /** The provider's idempotency key for this payment: the same one opens (or finds) the same payment. */
  out_trade_no: string;
  flow: PaymentFlow;
  charge: Charge;
  description: string;
  /** When the provider should stop taking the payment (epoch ms). */
  expires_at: number;
  notify_url: string;
  /** Where the provider sends the browser back after a redirect flow. */
  return_url: string;
  /** The customer's IPv4 address, as the merchant gave it. */
  client_ip: string;
  /** JSAPI: the payer's id for the account's app (WeChat's openid). */
  payer?: string;
  /**
   * The request is made and signed at once but sent only when this resolves true (the write that
   * records the payment, running meanwhile); false sends nothing, and the open throws NotSent.
   */
  sendWhen?: Promise<boolean>;
}

/** An open whose `sendWhen` said no: nothing reached the provider. */
export class NotSent extends Error {
  constructor() {
    super('not sent to the provider: the payment was not recorded');
    this.name = 'NotSent';
  }
}

/** Waits for a request's `sendWhen`, if it has one; throws NotSent when it says no. */
export async function whenSendable(sendWhen: Promise<boolean> | undefined): Promise<void> {
  if (sendWhen && !(await sendWhen)) throw new NotSent();
}

export type OpenOutcome =
  /** The payload is the QR text, the URL to send the browser to, or the JSAPI parameters as JSON. */
  { kind: 'opened'; payload: string } | { kind: 'refused'; reason: string } | { kind: 'unknown'; reason: string };

/**
 * A transfer flow's opened payload, as JSON: the PayID the customer pays and when it stops taking
 * payments (epoch ms); the connector may keep more of its own beside them (its request's id).
 */
export interface TransferPayload {
  payId: string;
  expiresAt: number;
}

/** A form flow's opened payload, as JSON: the provider's address the browser posts to, and the fields (signed). */
export interface FormPayload {
  action: string;
  fields: Readonly<Record<string, string>>;
}

/** A stored form flow's payload, read back; undefined when there is none or it is not one. */
export function formPayloadOf(payload: string | null | undefined): FormPayload | undefined {
  const f = jsonOf(payload) as Partial<FormPayload> | undefined;
  return typeof f?.action === 'string' && typeof f.fields === 'object' && f.fields !== null
    ? { action: f.action, fields: f.fields }
    : undefined;
}

/** A stored transfer flow's payload, read back (its PayID and expiry); undefined when it is not one. */
export function transferPayloadOf(payload: string | null | undefined): TransferPayload | undefined {
  const t = jsonOf(payload) as Partial<TransferPayload> | undefined;
  return typeof t?.payId === 'string' && typeof t.expiresAt === 'number'
    ? { payId: t.payId, expiresAt: t.expiresAt }
    : undefined;
}

function jsonOf(payload: string | null | undefined): unknown {
  if (!payload) return undefined;
  try {
    return JSON.parse(payload) as unknown;
  } catch {
    return undefined;
  }
}

/** What the provider says of a payment. */
export type PaymentState =
  /** `attention`: why an operator should look (POLi does not know whether the bank paid). */
  | { kind: 'pending'; attention?: string }
  | { kind: 'paid'; provider_ref: string; charge: Charge }
  | { kind: 'closed' }
  /** Ended unpaid in a way that ends the order `failed` (CoinPayments' timed-out invoice). */
  | { kind: 'failed'; reason: string }
  /**
   * The provider returned the customer's money by itself (a PayID payment of the wrong amount):
   * the spec's `rejected`, with the reason and the PayID it was paid to (its `message` and `msgId`).
   */
  | { kind: 'rejected'; reason: string; msgId: string }
  | { kind: 'not_found' }
  | { kind: 'unknown'; reason: string };

export type CloseOutcome =
  /** `note`: what an operator should know of how it closed (a paid trade refunded by the close). */
  | { kind: 'closed'; note?: string }
  /** It cannot be closed: the customer is paying, or has paid. */
  | { kind: 'refused'; reason: string }
  | { kind: 'unknown'; reason: string };

export interface RefundRequest {
  /** The payment refunded (its out_trade_no) and what it charged. */
  out_trade_no: string;
  charge: Charge;
  /** The refund's idempotency key at the provider: the gateway's refund_id. */
  refund_id: string;
  /** The provider's id of the payment refunded (UnionPay's queryId, its refund's origQryId). */
  provider_ref?: string;
  /** When the refund was asked for (epoch ms): a provider that names a transaction by its time (UnionPay's txnTime) uses it. */
  requested_at?: number;
  /** In the charge's currency and minor units. */
  amount: number;
  reason: string;
  notify_url: string;
}

export type RefundOutcome =
  | { kind: 'succeeded' }
  /** Accepted; the provider finishes it later (its refund query or notification says how). */
  | { kind: 'processing' }
  | { kind: 'refused'; reason: string }
  /** Refund query only: the provider has no refund with this id. */
  | { kind: 'not_found' }
  | { kind: 'unknown'; reason: string };

/**
 * A provider's asynchronous notification of a payment, verified and read. (Refund notifications are
 * acknowledged and not read: a refund's outcome is learned by asking, resume-refunds.ts.)
 */
export interface ProviderEvent {
  /** The account whose keys verified it. */
  account: ChannelAccount;
  out_trade_no: string;
  state: PaymentState;
}

/** The answer a provider expects to its notification, in its own format. */
export interface NotificationReply {
  status: number;
  contentType: string;
  body: string;
}

export interface InboundNotification {
  headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The body as received, byte for byte: signatures cover it. */
  body: string;
  /** The notification address the provider was given, as given (CoinPayments signs over it). */
  url?: string;
}

export type NotificationRead =
  | { kind: 'event'; event: ProviderEvent }
  /** Verified but nothing to act on (another event type): acknowledged. */
  | { kind: 'ignored'; reason: string }
  | { kind: 'refused'; reason: string };

export type ProbeOutcome = { ok: true; detail: string } | { ok: false; reason: string };

/**
 * Identifying the payer for an in-app flow (WeChat's JSAPI needs the payer's openid): the browser
 * is sent to the provider, which sends it back to `return_to` with a code; the code gives the id.
 */
export interface PayerIdentity {
  authorizeUrl(account: ChannelAccount, return_to: string, state: string): string;
  payerFromCode(
    account: ChannelAccount,
    code: string,
  ): Promise<{ ok: true; payer: string } | { ok: false; reason: string }>;
}

/** A day's statement asked of a provider. */
export type StatementFetch =
  | { kind: 'ready'; raw: Uint8Array }
  /** The provider has no statement of the day because nothing happened: an empty statement. */
  | { kind: 'empty' }
  /** Not published yet (or the provider cannot tell it from none): asked again later. */
  | { kind: 'not_ready'; reason: string }
  | { kind: 'unknown'; reason: string };

/** A provider's daily statements, for reconciliation (usecases/reconciliation.ts). */
export interface StatementSource {
  /** The raw file's format, as recorded with it. */
  readonly format: string;
  /** The provider's day: the IANA time zone its statements' days are in (Asia/Shanghai for Beijing time). */
  readonly timeZone: string;
  /**
   * Whether a day's statement lists the day's refunds: when it does not (the provider's file is of
   * payments only), a refund the gateway made that day is not missing from it.
   */
  readonly listsRefunds: boolean;
  /** How long after its day's end a statement is published: the import job asks from then on. */
  readonly publishedAfterMs: number;
  fetch(account: ChannelAccount, date: string): Promise<StatementFetch>;
  /**
   * The file's lines, read as they are taken (a large file is never all in memory as lines); a
   * StatementFormatError, at any line or at the end (totals that disagree), when it is not the
   * format. `account`: the account it is of, for a format that leaves something to it (UnionPay's
   * ZM has no currency).
   */
  read(raw: Uint8Array, account?: ChannelAccount): Iterable<StatementLine>;
}

export interface Connector<Config = unknown> {
  readonly provider: ProviderName;
  /** The provider and its accounts' fields; absent for the sandbox, which has no accounts. */
  readonly descriptor?: ProviderDescriptor<Config>;
  /**
   * The payment lives in the gateway itself (the sandbox): opening it has no effect outside this
   * process, so it is opened at create and needs no record of its own.
   */
  readonly local: boolean;
  readonly capabilities: ConnectorCapabilities;
  /** The merchant identity an account acts as (Alipay's app_id, WeChat Pay's mchid): notifications are matched on it. */
  merchantId(account: ChannelAccount): string;
  /** Opens the payment at the provider, or finds the one opened before with the same out_trade_no. */
  open(account: ChannelAccount, input: OpenPaymentInput): Promise<OpenOutcome>;
  /**
   * What the provider says of a payment. `known`: what the gateway stored of it (the provider's
   * answer to its open), for a provider that is asked by something in that answer (POLi's token).
   */
  query(account: ChannelAccount, out_trade_no: string, known?: KnownPayment): Promise<PaymentState>;
  close(account: ChannelAccount, out_trade_no: string): Promise<CloseOutcome>;
  refund(account: ChannelAccount, input: RefundRequest): Promise<RefundOutcome>;
  queryRefund(account: ChannelAccount, input: RefundRequest): Promise<RefundOutcome>;
  /**
   * Verifies and reads a notification the provider POSTed, trying each of the provider's accounts
   * that could have sent it. Never throws for a bad request: it is refused.
   */
  readNotification(inbound: InboundNotification, accounts: readonly ChannelAccount[]): Promise<NotificationRead>;
  /** The provider's answer to a notification: taken, or to be sent again. */
  notificationReply(accepted: boolean): NotificationReply;
  /** A signed call that proves the account's credentials and endpoint (a query of an order that does not exist). */
  probe(account: ChannelAccount): Promise<ProbeOutcome>;
  /** The provider's daily statements; absent when the gateway reads none of its. */
  readonly statements?: StatementSource;
  /** How a flow that needs the payer's id gets it; absent when no flow does. */
  readonly payerIdentity?: PayerIdentity;
}
