import { PAYMENT_METHODS } from '../../domain/transaction.js';
import type {
  ChannelPaymentStatus,
  CloseResult,
  CreatePaymentInput,
  CreatedPayment,
  PaymentChannel,
  PaymentSnapshot,
  RefundInput,
  RefundResult,
} from '../../ports/channel.js';

/** channel_state the sandbox records when the customer opens its payment page ("scans the QR"). */
export const SANDBOX_SCANNED = 'scanned';
/** channel_state of a paid sandbox payment whose refunds the sandbox "bank" refuses (set at /sandbox/refunds/{order_id}). */
export const SANDBOX_REFUSES_REFUNDS = 'refuses-refunds';

/**
 * Simulates every payment method. The QR text points at the gateway's own sandbox payment page,
 * `{base}/sandbox/pay/{order_id}`, where a person (or a test, with a form POST) decides the outcome.
 * Like WeChat Pay's close-order call, closing fails once the customer has opened the payment.
 */
export class SandboxChannel implements PaymentChannel {
  readonly name = 'sandbox';
  readonly methods = PAYMENT_METHODS;
  /** createPayment only builds two strings from the order_id. */
  readonly createPaymentIsLocal = true;

  /** publicUrl is read per payment: it is known only once the server listens. */
  constructor(private readonly publicUrl: () => string) {}

  async createPayment(input: CreatePaymentInput): Promise<CreatedPayment> {
    return {
      channel_ref: `sandbox-${input.order_id}`,
      qr_code_url: `${this.publicUrl()}/sandbox/pay/${input.order_id}`,
    };
  }

  async queryPayment(payment: PaymentSnapshot): Promise<ChannelPaymentStatus> {
    return payment.channel_state === 'closed' ? 'closed' : 'pending';
  }

  async refund(input: RefundInput): Promise<RefundResult> {
    if (input.payment.channel_state === SANDBOX_REFUSES_REFUNDS) {
      return { ok: false, reason: 'the sandbox bank refuses refunds of this payment (POST /sandbox/refunds/{order_id} answer=accept to change that)' };
    }
    return { ok: true, channel_refund_ref: `sandbox-refund-${input.refund_id}` };
  }

  async close(payment: PaymentSnapshot): Promise<CloseResult> {
    if (payment.channel_state === SANDBOX_SCANNED) {
      return { closed: false, reason: 'the customer has opened the payment and may be paying' };
    }
    return { closed: true };
  }
}
