// HTTP client for the Payment Gateway v2 merchant API. One file over 300 lines on purpose: it is
// what a merchant copies, one method per endpoint and the response types beside them.
//
// Contract: a response with a non-zero `code` is returned, not thrown, because the caller knows
// which codes matter (e.g. 900 on cancel means "already paid"). What is thrown, as GatewayError,
// is what the caller cannot act on per-request: the gateway was unreachable, answered something
// that is not the API's JSON, or answered success with a signature that does not verify.

import {
  cancelSigningMessageUserFirst,
  hmacSha256Hex,
  signRequest,
  verifyCreateResponse,
  verifyGatewayData,
  verifyQueryResponse,
  walletDetailSigningMessage,
} from './signing.js';

export interface GatewayClientOptions {
  /** Merchant API address, e.g. https://gateway.example.com (no trailing path). */
  baseUrl: string;
  userId: string;
  walletId: string;
  /** The wallet's API key from the management console (integration parameters). */
  apiKey: string;
  /** Replaces global fetch (tests, proxies, custom agents). */
  fetch?: typeof globalThis.fetch;
}

/** Request fields the merchant supplies; user_id, wallet_id, version and signature are added. */
export interface CreateTransactionFields {
  payment_method: string;
  amount: string;
  return_url: string;
  callback_url: string;
  merchant_reference: string;
  ip: string;
  product_name: string;
  backPage_url?: string;
  present_qr?: string;
  /** '1' for merchant-hosted QR: getGatewayData then returns the QR picture. */
  host_type?: string;
  [field: string]: string | undefined;
}

/** Every API answer: `code` is normalized to a number (the spec shows both 0 and "0"). */
export interface GatewayResponse {
  code: number;
  message: string;
  [field: string]: unknown;
}

export interface CreateTransactionResponse extends GatewayResponse {
  host_url?: string;
  nonce?: string;
  signature?: string;
}

export interface GatewayData {
  order_id?: string;
  nonce?: string;
  payment_method?: string;
  amount?: string;
  amount_cny?: string;
  currency?: string;
  product_name?: string;
  organisation_id?: number;
  merchant_reference?: string;
  qr_code?: string;
  qr_code_url?: string;
  signature?: string;
  [field: string]: unknown;
}

export interface GatewayDataResponse extends GatewayResponse {
  data?: GatewayData;
}

export interface QueryResponse extends GatewayResponse {
  merchant_reference?: string;
  order_id?: string;
  currency?: string;
  amount?: number;
  payment_method?: string;
  status?: string;
  pay_time?: string;
  signature?: string;
}

export interface WalletMethodsResponse extends GatewayResponse {
  /** As the gateway wrote it: comma-separated, capitalised (`Alipay,Wechat,MoneyMore`). */
  payment_method?: string;
  /** The same methods as createTransaction's payment_method values (`alipay`, `wechat`, ...); empty unless code is 0. */
  methods: string[];
}

export interface RefundRequest {
  /** The gateway's order_id (from the notification or query), not your merchant_reference. */
  orderId: string;
  refundAmount: string;
  /** Free-text note about the refund. */
  reference: string;
}

export class GatewayError extends Error {
  override readonly name = 'GatewayError';
  /** HTTP status, when a response was received. */
  readonly status: number | undefined;
  /** Raw response body, when one was received. */
  readonly responseBody: string | undefined;

  constructor(message: string, details: { status?: number; responseBody?: string; cause?: unknown } = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.status = details.status;
    this.responseBody = details.responseBody;
  }
}

/** Where to send the customer's browser after a successful createTransaction. */
export function paymentPageUrl(response: { host_url?: string; nonce?: string }): string {
  if (!response.host_url || !response.nonce) {
    throw new GatewayError('The creation response has no host_url/nonce; check its code first.');
  }
  return `${response.host_url.replace(/\/+$/, '')}/${response.nonce}`;
}

export class GatewayClient {
  private readonly baseUrl: string;
  private readonly userId: string;
  private readonly walletId: string;
  private readonly apiKey: string;
  private readonly fetchImpl: typeof globalThis.fetch;

  constructor(options: GatewayClientOptions) {
    for (const name of ['baseUrl', 'userId', 'walletId', 'apiKey'] as const) {
      if (typeof options[name] !== 'string' || options[name] === '') {
        throw new GatewayError(`GatewayClient needs a non-empty ${name}.`);
      }
    }
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.userId = options.userId;
    this.walletId = options.walletId;
    this.apiKey = options.apiKey;
    this.fetchImpl = options.fetch ?? globalThis.fetch;
  }

  /** POST /v2/transaction. On code 0, the response signature is verified before returning. */
  async createTransaction(fields: CreateTransactionFields): Promise<CreateTransactionResponse> {
    const params: Record<string, string | undefined> = {
      ...fields,
      user_id: this.userId,
      wallet_id: this.walletId,
      version: '2.0',
    };
    delete params.signature;
    const body = { ...params, signature: signRequest(params, this.apiKey) };
    const response = await this.send('POST', `${this.baseUrl}/v2/transaction`, body);
    if (response.code === 0 && !verifyCreateResponse(response, this.apiKey)) {
      throw this.badSignature('creation response', response, 'Do not send the customer to host_url.');
    }
    return response;
  }

  /** GET {host_url}/{nonce} for merchant-hosted QR (host_type '1'); verifies `data.signature`. */
  async getGatewayData(hostUrl: string, nonce: string): Promise<GatewayDataResponse> {
    const url = `${hostUrl.replace(/\/+$/, '')}/${encodeURIComponent(nonce)}`;
    const response = await this.send('GET', url);
    if (response.code === 0 && !verifyGatewayData(response.data, this.apiKey)) {
      throw this.badSignature('gateway data', response, 'Do not show this QR code to the customer.');
    }
    return response;
  }

  /**
   * GET /v2/transaction/{merchant_reference}. With `block: true` the gateway holds the request
   * open (long poll, up to 180 s) until the state changes; pass `signal` to give up earlier.
   */
  async query(
    merchantReference: string,
    options: { block?: boolean; signal?: AbortSignal } = {},
  ): Promise<QueryResponse> {
    const signed = {
      merchant_reference: merchantReference,
      user_id: this.userId,
      is_block: options.block ? '1' : undefined,
    };
    const search = new URLSearchParams({
      user_id: this.userId,
      signature: signRequest(signed, this.apiKey),
    });
    if (options.block) search.set('is_block', '1');
    const url = `${this.baseUrl}/v2/transaction/${encodeURIComponent(merchantReference)}?${search}`;
    const response = await this.send('GET', url, undefined, options.signal);
    if (response.code === 0 && !verifyQueryResponse(response, this.apiKey)) {
      throw this.badSignature('query response', response, 'Do not trust this status.');
    }
    return response;
  }

  /**
   * GET /v2/detail/{wallet_id}: the payment methods the wallet takes, to offer only those at
   * checkout. `methods` holds them as createTransaction's payment_method values. The answer carries
   * no signature, so nothing is verified; the request is signed.
   */
  async walletMethods(): Promise<WalletMethodsResponse> {
    const search = new URLSearchParams({
      user_id: this.userId,
      signature: hmacSha256Hex(this.apiKey, walletDetailSigningMessage(this.walletId, this.userId)),
    });
    const url = `${this.baseUrl}/v2/detail/${encodeURIComponent(this.walletId)}?${search}`;
    const response = await this.send('GET', url);
    const listed = response.code === 0 && typeof response.payment_method === 'string' ? response.payment_method : '';
    const methods = listed
      .split(',')
      .map((name) => name.trim().toLowerCase())
      .filter((name) => name !== '');
    return { ...response, methods };
  }

  /** POST /refund. The response carries no signature (spec), so nothing is verified. */
  async refund(request: RefundRequest): Promise<GatewayResponse> {
    const params = {
      user_id: this.userId,
      order_id: request.orderId,
      refund_amount: request.refundAmount,
      reference: request.reference,
    };
    const body = { ...params, signature: signRequest(params, this.apiKey) };
    return this.send('POST', `${this.baseUrl}/refund`, body);
  }

  /**
   * POST /cancel. Code 900/901 mean the transaction already succeeded/failed; after code 1 wait
   * at least 15 minutes before retrying. `userFirstSignature` signs the legacy unsorted
   * `user_id=..&merchant_reference=..` form instead of the spec's sorted one.
   */
  async cancel(merchantReference: string, options: { userFirstSignature?: boolean } = {}): Promise<GatewayResponse> {
    const params = { user_id: this.userId, merchant_reference: merchantReference };
    const signature = options.userFirstSignature
      ? hmacSha256Hex(this.apiKey, cancelSigningMessageUserFirst(this.userId, merchantReference, this.apiKey))
      : signRequest(params, this.apiKey);
    return this.send('POST', `${this.baseUrl}/cancel`, { ...params, signature });
  }

  private badSignature(what: string, response: GatewayResponse, advice: string): GatewayError {
    return new GatewayError(
      `The ${what} signature did not verify with the configured apiKey. Check that apiKey is ` +
        `the API key of wallet ${this.walletId} in the management console and that baseUrl ` +
        `(${this.baseUrl}) is the real gateway; otherwise the response may be forged. ${advice}`,
      { responseBody: JSON.stringify(response) },
    );
  }

  private async send(
    method: 'GET' | 'POST',
    url: string,
    body?: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<GatewayResponse> {
    let res: Response;
    try {
      res = await this.fetchImpl(url, {
        method,
        headers:
          body === undefined
            ? { Accept: 'application/json' }
            : { Accept: 'application/json', 'Content-Type': 'application/json;charset=UTF-8' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
      });
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      throw new GatewayError(
        `Could not reach the gateway (${method} ${url}): ${reason}. Check baseUrl and that the ` +
          `gateway is reachable from this server.`,
        { cause: err },
      );
    }
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new GatewayError(
        `The gateway answered ${method} ${url} with HTTP ${res.status} and a body that is not ` +
          `JSON (${text.slice(0, 120)}). Check that baseUrl points at the merchant API.`,
        { status: res.status, responseBody: text },
      );
    }
    const code = isRecord(parsed) ? normalizeCode(parsed.code) : undefined;
    if (!isRecord(parsed) || code === undefined) {
      throw new GatewayError(
        `The gateway answered ${method} ${url} with HTTP ${res.status} and JSON without an ` +
          `integer "code". Check that baseUrl points at the merchant API.`,
        { status: res.status, responseBody: text },
      );
    }
    return { ...parsed, code, message: typeof parsed.message === 'string' ? parsed.message : '' };
  }
}

function normalizeCode(code: unknown): number | undefined {
  if (typeof code === 'number' && Number.isInteger(code)) return code;
  if (typeof code === 'string' && /^-?\d+$/.test(code)) return Number(code);
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
