// One error type with stable codes, as the original service published them.
// `message` is always the table's text, so clients that compare it keep working;
// `detail` says what exactly was wrong.

export const ERROR_MESSAGES = {
  1: 'FAIL',
  3: 'data error',
  110: 'User not exist',
  201: 'order not exist',
  204: 'Some fields from input are null',
  205: 'Can not find out corresponding key for the user code or user is disabled or user is not activity',
  206: 'Signature from Merchant request is wrong',
  207: 'Param is wrong',
  300: 'Gateway not exist',
  301: 'Wrong account info or currency info',
  302: 'Paycompany not exist',
  303: 'Wrong pay type from merchant',
  304: 'Wallet does not support this payment method',
  305: 'No margin plan for the merchant',
  450: 'Wallet not assign to user',
  454: 'Exceed the single payment limit of the merchant',
  550: 'Refund parameters wrong',
  551: 'Refund related order is not exist',
  556: 'Create refund order fail',
  558: 'Refund order is not exist',
  559: 'Insufficient amount in your wallet',
  562: 'This refund request has been done',
  900: 'transaction has been successfully completed',
  901: 'transaction has been failed',
} as const;

export type ErrorCode = keyof typeof ERROR_MESSAGES;

export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly detail: string;

  constructor(code: ErrorCode, detail: string) {
    super(`${ERROR_MESSAGES[code]}: ${detail}`);
    this.name = 'GatewayError';
    this.code = code;
    this.detail = detail;
  }
}

export function fail(code: ErrorCode, detail: string): never {
  throw new GatewayError(code, detail);
}
