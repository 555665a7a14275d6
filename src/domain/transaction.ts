// The transaction state machine. A transaction is created pending and reaches exactly one final
// state; refunds never change a paid order's status (they are tracked as a refunded total).

export const PAYMENT_METHODS = ['wechat', 'alipay', 'moneymore', 'polipay', 'payid', 'upi_upop', 'coin_payments'] as const;
export type PaymentMethod = (typeof PAYMENT_METHODS)[number];

/**
 * How a wallet's detail (GET /v2/detail/{wallet_id}) spells each method: capitalised as the
 * original service did (Alipay, Wechat, MoneyMore). Its shop plugins lower-case the name and send
 * that back as the create's payment_method, so each name lower-cases to the method exactly.
 */
export const DETAIL_METHOD_NAMES: Readonly<Record<PaymentMethod, string>> = {
  wechat: 'Wechat',
  alipay: 'Alipay',
  moneymore: 'MoneyMore',
  polipay: 'Polipay',
  payid: 'PayID',
  upi_upop: 'UPI_UPOP',
  coin_payments: 'Coin_Payments',
};

/** Merchant-hosted QR (host_type 1) offers only the two wallet apps. */
export const MERCHANT_HOSTED_METHODS: readonly PaymentMethod[] = ['alipay', 'wechat'];

export function isPaymentMethod(v: string): v is PaymentMethod {
  return (PAYMENT_METHODS as readonly string[]).includes(v);
}

export const STATUSES = ['pending', 'paid', 'failed', 'rejected', 'canceled'] as const;
export type Status = (typeof STATUSES)[number];
export type FinalStatus = Exclude<Status, 'pending'>;

const TRANSITIONS: Readonly<Record<Status, readonly Status[]>> = {
  pending: ['paid', 'failed', 'rejected', 'canceled'],
  paid: [],
  failed: [],
  rejected: [],
  canceled: [],
};

export function canTransition(from: Status, to: Status): boolean {
  return TRANSITIONS[from].includes(to);
}

export function isFinal(s: Status): s is FinalStatus {
  return TRANSITIONS[s].length === 0;
}

/** `rejected` is a PayID outcome only: the bank refused the transfer. */
export function outcomeAllowed(method: PaymentMethod, to: FinalStatus): boolean {
  return to !== 'rejected' || method === 'payid';
}
