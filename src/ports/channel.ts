import type { PaymentMethod } from '../domain/transaction.js';

// A payment channel is the provider that actually moves the money (WeChat Pay, Alipay, a bank).
// Connectors implement this narrow interface; the gateway decides, calls the channel outside any
// database transaction, then persists the result.

export interface CreatePaymentInput {
  order_id: string;
  payment_method: PaymentMethod;
  amount: number;
  currency: string;
  product_name: string;
}

export interface CreatedPayment {
  /** The channel's id for the payment. */
  channel_ref: string;
  /** Text to encode as a QR code (wallet apps), or the address to send the customer to. */
  qr_code_url: string;
}

/** What the channel knows of a payment (used when the gateway needs the truth, e.g. before cancel). */
export type ChannelPaymentStatus = 'pending' | 'paid' | 'failed' | 'rejected' | 'closed';

export interface PaymentSnapshot {
  order_id: string;
  channel_ref: string | null;
  channel_state: string | null;
  payment_method: string;
  amount: number;
  currency: string;
}

export type CloseResult = { closed: true } | { closed: false; reason: string };

export interface RefundInput {
  refund_id: string;
  payment: PaymentSnapshot;
  refund_amount: number;
  reference: string;
}

export type RefundResult = { ok: true; channel_refund_ref: string } | { ok: false; reason: string };

export interface PaymentChannel {
  readonly name: string;
  readonly methods: readonly PaymentMethod[];
  /**
   * True when `createPayment` has no effect outside this process (no request to the provider, no
   * payment opened anywhere), so calling it for a merchant_reference that turns out to exist already
   * costs nothing and leaves nothing behind. The gateway then creates optimistically: it calls
   * createPayment and inserts, and only on a conflicting merchant_reference deals with the existing
   * order. When false, it first looks the reference up and calls createPayment only for a new one.
   * A real provider's connector that opens a payment at the provider must say false.
   */
  readonly createPaymentIsLocal: boolean;
  createPayment(input: CreatePaymentInput): Promise<CreatedPayment>;
  queryPayment(payment: PaymentSnapshot): Promise<ChannelPaymentStatus>;
  /**
   * Refunds part of a payment. `refund_id` is the idempotency key (WeChat Pay's out_refund_no,
   * Alipay's out_request_no): the gateway asks again with the same refund_id when it does not know
   * the outcome of an earlier call (a crash in between), and must get that outcome, not a second refund.
   */
  refund(input: RefundInput): Promise<RefundResult>;
  /** Closes an unpaid payment so it can no longer be paid; refuses when the customer is mid-payment. */
  close(payment: PaymentSnapshot): Promise<CloseResult>;
}

export class UnsupportedOperation extends Error {
  constructor(channel: string, operation: string) {
    super(`payment channel ${channel} does not support ${operation}`);
    this.name = 'UnsupportedOperation';
  }
}
