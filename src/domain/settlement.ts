// A line of the settlement report: one day (UTC), wallet, currency and method. Amounts in minor units.
export interface SettlementLine {
  /** The day's start, epoch ms (UTC). */
  day: number;
  /** Whose money: the report is per wallet (each wallet is one merchant's, in one currency). */
  wallet_id: string;
  currency: string;
  payment_method: string;
  /** Orders paid that day, and their amount. */
  count: number;
  gross: number;
  /** Refunds that succeeded that day, and their amount. */
  refund_count: number;
  refunds: number;
  /** gross - refunds */
  net: number;
}
