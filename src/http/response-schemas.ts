import { ERROR_MESSAGES } from '../domain/errors.js';
import { STATUSES } from '../domain/transaction.js';

// JSON schemas of the merchant API's answers, for the OpenAPI document (openapi.ts) and nothing
// else: answers are still written by JSON.stringify (app.ts keeps the serializer), so a schema
// can never change a byte of them. Black-box tests check real answers against these.

const codes = Object.keys(ERROR_MESSAGES).map(Number);

/** Every refusal: HTTP 200 with the code, the original service's message for it, and what was wrong. */
export const errorAnswer = {
  type: 'object',
  description: `A refusal or failure, answered with HTTP 200. \`code\` is one of the documented codes; \`message\` is the original service's text for it; \`detail\` says exactly what was wrong.\n\n${codes.map((c) => `- ${c}: ${ERROR_MESSAGES[c as keyof typeof ERROR_MESSAGES]}`).join('\n')}`,
  required: ['code', 'message'],
  properties: {
    code: { type: 'integer', enum: codes },
    message: { type: 'string', enum: [...new Set(Object.values(ERROR_MESSAGES))] },
    detail: { type: 'string' },
  },
  additionalProperties: false,
} as const;

const success = <P extends Record<string, unknown>>(
  message: string,
  properties: P,
  required: readonly (keyof P & string)[],
) => ({
  type: 'object',
  required: ['code', 'message', ...required],
  properties: { code: { type: 'integer', const: 0 }, message: { type: 'string', const: message }, ...properties },
  additionalProperties: false,
});

const answer = (description: string, ok: object) => ({ 200: { description, oneOf: [ok, errorAnswer] } });
const hex64 = { type: 'string', pattern: '^[0-9a-f]{64}$' } as const;
const jsonNumber = { type: 'number' } as const;

export const createAnswer = answer(
  'The order is created: `host_url` and `nonce` make the payment link (hosted: `{host_url}?nonce=...`; merchant-hosted: `GET {host_url}/{nonce}`). Or a refusal.',
  success('SUCCESS', { host_url: { type: 'string', format: 'uri' }, nonce: { type: 'string' }, signature: hex64 }, [
    'host_url',
    'nonce',
    'signature',
  ]),
);

export const gatewayDataAnswer = answer(
  "The merchant-hosted order's data and QR picture, signed; the nonce is used up. Or a refusal.",
  success(
    'SUCCESS',
    {
      data: {
        type: 'object',
        required: [
          'order_id',
          'nonce',
          'payment_method',
          'amount',
          'amount_cny',
          'currency',
          'product_name',
          'organisation_id',
          'organisation_name',
          'user_id',
          'user_name',
          'wallet_id',
          'wallet_name',
          'qr_code',
          'qr_code_url',
          'currency_rate',
          'merchant_reference',
          'signature',
        ],
        properties: {
          order_id: { type: 'string' },
          nonce: { type: 'string' },
          payment_method: { type: 'string' },
          amount: { type: 'string', description: 'In the wallet\'s currency, as text (e.g. "120.00")' },
          amount_cny: { type: ['string', 'null'] },
          currency: { type: 'string' },
          product_name: { type: 'string' },
          organisation_id: { type: 'integer' },
          organisation_name: { type: 'string' },
          user_id: { type: 'string' },
          user_name: { type: 'string' },
          wallet_id: { type: 'string' },
          wallet_name: { type: 'string' },
          qr_code: { type: 'string', description: 'A PNG data URI of qr_code_url' },
          qr_code_url: { type: 'string' },
          currency_rate: { type: ['string', 'null'] },
          merchant_reference: { type: 'string' },
          signature: hex64,
        },
        additionalProperties: false,
      },
    },
    ['data'],
  ),
);

export const queryAnswer = answer(
  "The order's state, signed (with is_block=1 after its status changes, or when the wait ends). Or a refusal.",
  success(
    'SUCCESS',
    {
      merchant_reference: { type: 'string' },
      status: { type: 'string', enum: [...STATUSES] },
      currency: { type: 'string' },
      amount: jsonNumber,
      amount_cny: { type: ['number', 'null'] },
      rate: jsonNumber,
      signature: hex64,
      payment_method: { type: 'string' },
      order_id: { type: 'string' },
      pay_time: { type: 'string' },
    },
    [
      'merchant_reference',
      'status',
      'currency',
      'amount',
      'amount_cny',
      'rate',
      'signature',
      'payment_method',
      'order_id',
      'pay_time',
    ],
  ),
);

export const refundAnswer = answer(
  'The refund was made (`message` is empty, as the original service answered). Or a refusal.',
  success('', {}, []),
);
export const cancelAnswer = answer(
  'The order is canceled. Or a refusal (1: the payment could not be closed; 900: it is paid).',
  success('success', {}, []),
);
export const walletDetailAnswer = answer(
  'The payment methods the wallet takes. Or a refusal.',
  success(
    'SUCCESS',
    {
      payment_method: {
        type: 'string',
        description: 'Comma-separated, spelled Wechat, Alipay, MoneyMore, Polipay, PayID, UPI_UPOP, Coin_Payments',
      },
    },
    ['payment_method'],
  ),
);
