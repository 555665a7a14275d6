import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GatewayClient, GatewayError, paymentPageUrl } from './client.js';

// The fake gateway signs with node:crypto directly, independent of sdk/signing.ts, so a bug in
// the SDK's message building cannot cancel itself out.
const KEY = 'test-api-key';
const USER = 'U000000013';
const WALLET = 'W00000001';
const hmac = (message: string) => createHmac('sha256', KEY).update(message).digest('hex');

interface Seen {
  method: string;
  url: string;
  contentType: string | undefined;
  body: string;
}

type Reply = { status?: number; body: string | object };
let handler: (req: Seen) => Reply;
let seen: Seen[] = [];
let server: Server;
let baseUrl: string;

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

beforeAll(async () => {
  server = createServer((req, res) => void answer(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const request: Seen = {
    method: req.method ?? '',
    url: req.url ?? '',
    contentType: req.headers['content-type'],
    body: await readBody(req),
  };
  seen.push(request);
  const reply = handler(request);
  res.writeHead(reply.status ?? 200, { 'Content-Type': 'application/json' });
  res.end(typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body));
}

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

beforeEach(() => {
  seen = [];
  handler = () => ({ body: { code: 0, message: '' } });
});

const client = () => new GatewayClient({ baseUrl: `${baseUrl}/`, userId: USER, walletId: WALLET, apiKey: KEY });

const ORDER = {
  payment_method: 'alipay',
  amount: '120.00',
  return_url: 'https://merchantsite.com/checkout',
  callback_url: 'https://merchantsite.com/confirm',
  merchant_reference: 'dsi39ej430sks03',
  ip: '122.122.122.1',
  product_name: 'Pinot Noir, Otago',
  backPage_url: 'https://merchantsite.com/back',
};

describe('createTransaction', () => {
  it('posts signed JSON with user_id, wallet_id, version and verifies the response', async () => {
    const hostUrl = `${baseUrl}/v2/merchanthosted/gatewaydata`;
    handler = () => ({
      body: { code: 0, message: 'SUCCESS', host_url: hostUrl, nonce: 'N123', signature: hmac(`N123${hostUrl}`) },
    });
    const res = await client().createTransaction(ORDER);
    expect(res.code).toBe(0);
    expect(paymentPageUrl(res)).toBe(`${hostUrl}/N123`);

    const [req] = seen;
    expect(req.method).toBe('POST');
    expect(req.url).toBe('/v2/transaction');
    expect(req.contentType).toBe('application/json;charset=UTF-8');
    const body = JSON.parse(req.body) as Record<string, string>;
    expect(body).toMatchObject({ ...ORDER, user_id: USER, wallet_id: WALLET, version: '2.0' });
    const expected =
      `amount=120.00&backPage_url=${ORDER.backPage_url}&callback_url=${ORDER.callback_url}` +
      `&ip=122.122.122.1&merchant_reference=dsi39ej430sks03&payment_method=alipay` +
      `&product_name=Pinot Noir, Otago&return_url=${ORDER.return_url}&user_id=${USER}` +
      `&version=2.0&wallet_id=${WALLET}${KEY}`;
    expect(body.signature).toBe(hmac(expected));
  });

  it('throws GatewayError when a success response has a forged signature', async () => {
    handler = () => ({
      body: {
        code: 0,
        message: 'SUCCESS',
        host_url: 'https://evil.example',
        nonce: 'N1',
        signature: hmac('N1https://pay.example'),
      },
    });
    const err = await client()
      .createTransaction(ORDER)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as Error).message).toMatch(/did not verify.*apiKey/);
  });

  it('returns a non-zero code without throwing (no signature to check)', async () => {
    handler = () => ({ body: { code: '206', message: 'Signature from Merchant request is wrong' } });
    const res = await client().createTransaction(ORDER);
    expect(res).toMatchObject({ code: 206, message: 'Signature from Merchant request is wrong' });
  });
});

describe('getGatewayData', () => {
  it('GETs {host_url}/{nonce} and verifies data.signature', async () => {
    const data = { order_id: 'O1', organisation_id: 7, amount: '0.01', amount_cny: '', qr_code_url: 'weixin://q' };
    const signature = hmac(`amount=0.01&order_id=O1&organisation_id=7&qr_code_url=weixin://q${KEY}`);
    handler = () => ({ body: { code: 0, message: '', data: { ...data, signature } } });
    const res = await client().getGatewayData(`${baseUrl}/v2/merchanthosted/gatewaydata`, 'N 1');
    expect(res.data?.order_id).toBe('O1');
    expect(seen[0]).toMatchObject({ method: 'GET', url: '/v2/merchanthosted/gatewaydata/N%201', body: '' });

    handler = () => ({ body: { code: 0, message: '', data: { ...data, amount: '0.02', signature } } });
    await expect(client().getGatewayData(`${baseUrl}/v2/merchanthosted/gatewaydata`, 'N1')).rejects.toThrow(
      GatewayError,
    );
  });
});

describe('query', () => {
  const reply = (amount: number, signedAmount: string) => ({
    body: {
      code: 0,
      message: 'SUCCESS',
      merchant_reference: 'R/1',
      status: 'paid',
      currency: 'NZD',
      amount,
      payment_method: 'wechat',
      order_id: 'O9',
      signature: hmac(`R/1wechatpaidNZD${signedAmount}`),
    },
  });

  it('signs merchant_reference and user_id and verifies the response', async () => {
    handler = () => reply(12.5, '12.5');
    const res = await client().query('R/1');
    expect(res).toMatchObject({ code: 0, status: 'paid', amount: 12.5 });
    const url = new URL(seen[0].url, baseUrl);
    expect(seen[0].method).toBe('GET');
    expect(url.pathname).toBe('/v2/transaction/R%2F1');
    expect([...url.searchParams.keys()]).toEqual(['user_id', 'signature']);
    expect(url.searchParams.get('user_id')).toBe(USER);
    expect(url.searchParams.get('signature')).toBe(hmac(`merchant_reference=R/1&user_id=${USER}${KEY}`));
  });

  it('adds and signs is_block=1 for long polling', async () => {
    handler = () => reply(12.5, '12.5');
    await client().query('R/1', { block: true });
    const url = new URL(seen[0].url, baseUrl);
    expect(url.searchParams.get('is_block')).toBe('1');
    expect(url.searchParams.get('signature')).toBe(hmac(`is_block=1&merchant_reference=R/1&user_id=${USER}${KEY}`));
  });

  it('throws on a forged status', async () => {
    handler = () => {
      const r = reply(12.5, '12.5');
      return { body: { ...r.body, status: 'failed' } };
    };
    await expect(client().query('R/1')).rejects.toThrow(/query response signature did not verify/);
  });
});

describe('walletMethods', () => {
  it('GETs /v2/detail/{wallet_id} signed over wallet_id + user_id and gives the methods as create values', async () => {
    handler = () => ({ body: { code: 0, message: 'SUCCESS', payment_method: 'Alipay, Wechat,MoneyMore' } });
    const res = await client().walletMethods();
    expect(res).toEqual({
      code: 0,
      message: 'SUCCESS',
      payment_method: 'Alipay, Wechat,MoneyMore',
      methods: ['alipay', 'wechat', 'moneymore'],
    });
    const url = new URL(seen[0].url, baseUrl);
    expect(seen[0].method).toBe('GET');
    expect(url.pathname).toBe(`/v2/detail/${WALLET}`);
    expect(url.searchParams.get('user_id')).toBe(USER);
    expect(url.searchParams.get('signature')).toBe(hmac(`${WALLET}${USER}`));
  });

  it('returns a refusal with no methods, without throwing', async () => {
    handler = () => ({ body: { code: 450, message: 'Wallet not assign to user' } });
    expect(await client().walletMethods()).toEqual({ code: 450, message: 'Wallet not assign to user', methods: [] });
  });
});

describe('refund and cancel', () => {
  it('refund posts the signed JSON body to /refund', async () => {
    const res = await client().refund({ orderId: 'O9', refundAmount: '10.00', reference: 'damaged' });
    expect(res).toEqual({ code: 0, message: '' });
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/refund' });
    expect(JSON.parse(seen[0].body)).toEqual({
      user_id: USER,
      order_id: 'O9',
      refund_amount: '10.00',
      reference: 'damaged',
      signature: hmac(`order_id=O9&reference=damaged&refund_amount=10.00&user_id=${USER}${KEY}`),
    });
  });

  it('cancel posts to /cancel, sorted by default, user-first on request', async () => {
    handler = () => ({ body: { code: 900, message: 'transaction has been successfully completed' } });
    const res = await client().cancel('R1');
    expect(res.code).toBe(900);
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/cancel' });
    expect(JSON.parse(seen[0].body)).toEqual({
      user_id: USER,
      merchant_reference: 'R1',
      signature: hmac(`merchant_reference=R1&user_id=${USER}${KEY}`),
    });
    await client().cancel('R1', { userFirstSignature: true });
    expect(JSON.parse(seen[1].body).signature).toBe(hmac(`user_id=${USER}&merchant_reference=R1${KEY}`));
  });
});

describe('transport errors', () => {
  it('throws a GatewayError that names the problem for non-JSON and code-less answers', async () => {
    handler = () => ({ status: 502, body: '<html>Bad Gateway</html>' });
    const err = await client()
      .cancel('R1')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect(err).toMatchObject({ status: 502 });
    expect((err as Error).message).toMatch(/not JSON.*baseUrl/);

    handler = () => ({ body: { ok: true } });
    await expect(client().cancel('R1')).rejects.toThrow(/without an integer "code"/);
  });

  it('throws when the gateway cannot be reached', async () => {
    const dead = createServer();
    await new Promise<void>((resolve) => dead.listen(0, '127.0.0.1', resolve));
    const port = (dead.address() as AddressInfo).port;
    await new Promise<void>((resolve) => dead.close(() => resolve()));
    const c = new GatewayClient({ baseUrl: `http://127.0.0.1:${port}`, userId: USER, walletId: WALLET, apiKey: KEY });
    await expect(c.query('R1')).rejects.toThrow(/Could not reach the gateway/);
  });

  it('rejects missing credentials at construction', () => {
    expect(() => new GatewayClient({ baseUrl, userId: USER, walletId: WALLET, apiKey: '' })).toThrow(/apiKey/);
  });
});
