// JSON schemas of the merchant API's requests. Missing or empty required fields answer 204,
// malformed ones 207 (see errors.ts); cross-field rules live in the use cases.

const text = (maxLength: number) => ({ type: 'string', minLength: 1, maxLength }) as const;
const url = {
  type: 'string',
  minLength: 1,
  maxLength: 2048,
  pattern: '^[hH][tT][tT][pP][sS]?://[^\\s/?#]+[^\\s]*$',
} as const;
export const MERCHANT_REFERENCE = {
  type: 'string',
  minLength: 1,
  maxLength: 64,
  pattern: '^[A-Za-z0-9_.:-]+$',
} as const;
const amount = { type: 'string', minLength: 1, maxLength: 20, pattern: '^(0|[1-9][0-9]*)(\\.[0-9]+)?$' } as const;
// Any non-empty text: a signature that is not 64 hex characters simply does not match (206).
const signature = { type: 'string', minLength: 1, maxLength: 1024 } as const;
const ipv4 = '^((25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\\.){3}(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])$';

export const createTransactionSchema = {
  type: 'object',
  required: [
    'user_id',
    'wallet_id',
    'payment_method',
    'amount',
    'return_url',
    'callback_url',
    'merchant_reference',
    'ip',
    'version',
    'product_name',
    'signature',
  ],
  properties: {
    user_id: text(32),
    wallet_id: text(32),
    payment_method: text(32),
    amount,
    return_url: url,
    callback_url: url,
    // Optional fields may be sent empty (the signing rules leave them out): empty means not sent.
    backPage_url: { ...url, minLength: 0, pattern: `^$|${url.pattern}` },
    merchant_reference: MERCHANT_REFERENCE,
    ip: { type: 'string', minLength: 1, maxLength: 16, pattern: ipv4 },
    // A pattern, not an enum: Ajv checks enum before minLength, and an empty version must be 204.
    version: { type: 'string', minLength: 1, pattern: '^2\\.0$' },
    product_name: text(255),
    signature,
    host_type: { type: 'string', enum: ['', '1'] },
    present_qr: { type: 'string', enum: ['', '0', '1'] },
  },
} as const;

export const queryTransactionSchema = {
  params: {
    type: 'object',
    required: ['merchant_reference'],
    properties: { merchant_reference: MERCHANT_REFERENCE },
  },
  querystring: {
    type: 'object',
    required: ['user_id', 'signature'],
    properties: {
      user_id: text(32),
      signature,
      // Empty is not sent, as for the create's optional fields (the signing rules leave it out).
      is_block: { type: 'string', enum: ['', '0', '1'] },
    },
  },
} as const;

export const refundSchema = {
  type: 'object',
  required: ['user_id', 'order_id', 'refund_amount', 'signature'],
  properties: {
    user_id: text(32),
    order_id: text(32),
    // Malformed refund amounts are refused by the use case with 550, the refund code.
    refund_amount: text(20),
    reference: { type: 'string', maxLength: 255 },
    signature,
  },
} as const;

export const cancelSchema = {
  type: 'object',
  required: ['user_id', 'merchant_reference', 'signature'],
  properties: {
    user_id: text(32),
    merchant_reference: MERCHANT_REFERENCE,
    signature,
  },
} as const;

export const walletDetailSchema = {
  params: {
    type: 'object',
    required: ['wallet_id'],
    properties: { wallet_id: text(32) },
  },
  querystring: {
    type: 'object',
    required: ['user_id'],
    properties: {
      user_id: text(32),
      // Optional: the Magento plugins send none (an empty one counts as none).
      signature: { type: 'string', maxLength: 1024 },
    },
  },
} as const;
