import { PAYMENT_METHODS } from '../../domain/transaction.js';
import type {
  ChannelAccount,
  CloseOutcome,
  Connector,
  ConnectorCapabilities,
  NotificationRead,
  NotificationReply,
  OpenOutcome,
  PaymentState,
  ProbeOutcome,
  RefundOutcome,
  RefundRequest,
} from '../../ports/connector.js';
import { whenSendable } from '../../ports/connector.js';

/** channel_state the sandbox records when the customer opens its payment page ("scans the QR"). */
export const SANDBOX_SCANNED = 'scanned';
/** channel_state of a paid sandbox payment whose refunds the sandbox "bank" refuses (set at /sandbox/refunds/{order_id}). */
export const SANDBOX_REFUSES_REFUNDS = 'refuses-refunds';

/** The account every wallet has with the sandbox: nothing to configure. */
export const SANDBOX_ACCOUNT: Omit<ChannelAccount, 'wallet_id' | 'payment_method'> = {
  provider: 'sandbox',
  config: {},
  secrets: {},
};

/**
 * Simulates every payment method, in sandbox mode, for the methods a wallet has no channel account
 * for. The payment is the gateway's own sandbox payment page, `{base}/sandbox/pay/{order_id}`,
 * where a person (or a test, with a form POST) decides the outcome (app-routes.ts); its out_trade_no
 * is the order_id. Like WeChat Pay's close-order call, closing fails once the customer has opened
 * the payment. The sandbox's state is the order's channel_state, read through `stateOf`.
 */
export class SandboxConnector implements Connector {
  readonly provider = 'sandbox' as const;
  readonly local = true;
  readonly capabilities: ConnectorCapabilities = {
    methods: PAYMENT_METHODS,
    // The hosted page shows the sandbox app on every browser (pages/method-panels.ts).
    hostedFlow: () => 'qr',
    merchantHostedQr: true,
    refund: true,
    partialRefund: true,
    close: true,
    query: true,
    refundQuery: true,
    reopen: false,
    openOnce: false,
  };

  constructor(
    /** The gateway's public URL, read per payment: it is known only once the server listens. */
    private readonly publicUrl: () => string,
    /** The order's channel_state: what the sandbox knows of its payment. */
    private readonly stateOf: (order_id: string) => Promise<string | null | undefined>,
  ) {}

  merchantId(account: ChannelAccount): string {
    return account.wallet_id;
  }

  /** The sandbox payment app's page of an order: the "QR code" of every sandbox payment. */
  appUrl(order_id: string): string {
    return `${this.publicUrl()}/sandbox/pay/${order_id}`;
  }

  async open(
    _account: ChannelAccount,
    input: { out_trade_no: string; sendWhen?: Promise<boolean> },
  ): Promise<OpenOutcome> {
    await whenSendable(input.sendWhen);
    return { kind: 'opened', payload: this.appUrl(input.out_trade_no) };
  }

  async query(_account: ChannelAccount, out_trade_no: string): Promise<PaymentState> {
    const state = await this.stateOf(out_trade_no);
    if (state === undefined) return { kind: 'not_found' };
    return state === 'closed' ? { kind: 'closed' } : { kind: 'pending' };
  }

  async close(_account: ChannelAccount, out_trade_no: string): Promise<CloseOutcome> {
    if ((await this.stateOf(out_trade_no)) === SANDBOX_SCANNED) {
      return { kind: 'refused', reason: 'the customer has opened the payment and may be paying' };
    }
    return { kind: 'closed' };
  }

  async refund(_account: ChannelAccount, input: RefundRequest): Promise<RefundOutcome> {
    if ((await this.stateOf(input.out_trade_no)) === SANDBOX_REFUSES_REFUNDS) {
      return {
        kind: 'refused',
        reason:
          'the sandbox bank refuses refunds of this payment (POST /sandbox/refunds/{order_id} answer=accept to change that)',
      };
    }
    return { kind: 'succeeded' };
  }

  /** The sandbox keeps no refunds of its own: asking again is making it again, which it allows. */
  queryRefund(account: ChannelAccount, input: RefundRequest): Promise<RefundOutcome> {
    return this.refund(account, input);
  }

  /** Outcomes reach the gateway through the sandbox app's own routes, not as notifications. */
  async readNotification(): Promise<NotificationRead> {
    return { kind: 'refused', reason: 'the sandbox sends no notifications' };
  }

  notificationReply(accepted: boolean): NotificationReply {
    return {
      status: accepted ? 200 : 400,
      contentType: 'text/plain; charset=utf-8',
      body: accepted ? 'success' : 'fail',
    };
  }

  async probe(): Promise<ProbeOutcome> {
    return { ok: true, detail: 'the sandbox needs no credentials' };
  }
}
