import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  cancelSigningMessageUserFirst,
  createResponseMessage,
  gatewayDataMessage,
  hmacSha256Hex,
  paymentResultMessage,
  requestSigningMessage,
  signRequest,
  verifyCreateResponse,
  verifyGatewayData,
  verifyNotification,
  verifyQueryResponse,
  verifyRedirection,
  verifyWebhookHeaders,
  webhookSignature,
} from './signing.js';

// Published vectors: HMAC-SHA256 keyed with the API key 111222333.
const KEY = '111222333';

describe('published request vectors', () => {
  it('creation request: sorted params, key appended', () => {
    const params = {
      user_id: 'U000334333',
      wallet_id: 'W00000001',
      version: '2.0',
      product_name: 'Pinot Noir, Otago',
      return_url: 'https://merchantsite.com/checkout',
      callback_url: 'https://merchantsite.com/confirm',
      payment_method: 'alipay',
      merchant_reference: 'dsi39ej430sks03',
      ip: '122.122.122.1',
      amount: '120.00',
    };
    const message = requestSigningMessage(params, KEY);
    expect(message).toBe(
      'amount=120.00&callback_url=https://merchantsite.com/confirm&ip=122.122.122.1' +
        '&merchant_reference=dsi39ej430sks03&payment_method=alipay&product_name=Pinot Noir, Otago' +
        '&return_url=https://merchantsite.com/checkout&user_id=U000334333&version=2.0' +
        '&wallet_id=W00000001111222333',
    );
    const expected = '8d1bea078eaacdae8388852851ec39e2e8561cdce64f359421d85ed4844496ec';
    expect(hmacSha256Hex(KEY, message)).toBe(expected);
    expect(signRequest({ ...params, signature: 'ignored' }, KEY)).toBe(expected);
  });

  it('query request', () => {
    const message = requestSigningMessage({ user_id: 'U000000013', merchant_reference: '6000324' }, KEY);
    expect(message).toBe('merchant_reference=6000324&user_id=U000000013111222333');
    expect(hmacSha256Hex(KEY, message)).toBe('58f93f458880120d650611f2452917a25a39edc2f5e3a03baac73a7a49bc81f4');
  });

  it('refund request', () => {
    const params = {
      user_id: 'U000334333',
      order_id: '23479798sdf7987234',
      refund_amount: '120.00',
      reference: 'notes about this refund',
    };
    expect(requestSigningMessage(params, KEY)).toBe(
      'order_id=23479798sdf7987234&reference=notes about this refund&refund_amount=120.00' +
        '&user_id=U000334333111222333',
    );
    expect(signRequest(params, KEY)).toBe('3052b51072570b743bf9a12a20a45b0adf280aee84907ef0e54d1079fb3f961c');
  });

  it('cancel request, legacy user_id-first order', () => {
    const message = cancelSigningMessageUserFirst('U000000013', '9872428736782682', KEY);
    expect(message).toBe('user_id=U000000013&merchant_reference=9872428736782682111222333');
    expect(hmacSha256Hex(KEY, message)).toBe('da3b80be09665913e632f1bc0822e3d98d8dd235aebeb6f532b6bb7e329b9635');
  });
});

const NOTIFICATION = {
  merchant_reference: 'dsi39ej430sks03',
  payment_method: 'alipay',
  status: 'paid',
  currency: 'NZD',
  amount: '120.00',
  signature: '840151e0dc39496e22b410b83058b4ddd633b786936c505ae978fae029a1e0f1',
};

describe('notification and redirection', () => {
  it('builds the published message (no key appended) and verifies it', () => {
    expect(paymentResultMessage(NOTIFICATION)).toBe('dsi39ej430sks03alipaypaidNZD120.00');
    expect(verifyNotification(NOTIFICATION, KEY)).toBe(true);
  });

  it('accepts extra fields, URLSearchParams and raw form text', () => {
    const withExtras = { ...NOTIFICATION, order_id: 'X1', pay_time: '2020-03-30 01:41:14' };
    expect(verifyNotification(withExtras, KEY)).toBe(true);
    const form = new URLSearchParams({ ...withExtras, amount_cny: '0.05', rate: '5.000000' });
    expect(verifyNotification(form, KEY)).toBe(true);
    expect(verifyNotification(form.toString(), KEY)).toBe(true);
    expect(verifyRedirection(form, KEY)).toBe(true);
  });

  it('rejects tampering, a wrong key, and malformed input without throwing', () => {
    expect(verifyNotification({ ...NOTIFICATION, amount: '1200.00' }, KEY)).toBe(false);
    expect(verifyNotification({ ...NOTIFICATION, status: 'failed' }, KEY)).toBe(false);
    expect(verifyNotification(NOTIFICATION, 'other-key')).toBe(false);
    const upper = { ...NOTIFICATION, signature: NOTIFICATION.signature.toUpperCase() };
    expect(verifyNotification(upper, KEY)).toBe(true);
    expect(verifyNotification({ ...NOTIFICATION, signature: 'abc' }, KEY)).toBe(false);
    expect(verifyNotification({ ...NOTIFICATION, signature: 'zz'.repeat(32) }, KEY)).toBe(false);
    expect(verifyNotification({ ...NOTIFICATION, signature: undefined }, KEY)).toBe(false);
    expect(verifyNotification({ ...NOTIFICATION, currency: ['NZD', 'AUD'] }, KEY)).toBe(false);
    const { amount: _amount, ...noAmount } = NOTIFICATION;
    expect(verifyNotification(noAmount, KEY)).toBe(false);
    const repeated = new URLSearchParams(NOTIFICATION);
    repeated.append('status', 'paid');
    expect(verifyNotification(repeated, KEY)).toBe(false);
    expect(verifyNotification(null as never, KEY)).toBe(false);
    expect(verifyNotification('', KEY)).toBe(false);
  });
});

describe('query response', () => {
  // Production response from the original service (README): key 7EE1, said to be valid.
  const PRODUCTION =
    '{"code":0,"message":"SUCCESS","merchant_reference":"22TEST","status":"pending",' +
    '"currency":"AUD","amount":0.01,"amount_cny":null,"rate":0.00000,' +
    '"signature":"22c98f90eefbd40b84aad11321a4881280b5a5ac886a6132b9990c6710212f78",' +
    '"payment_method":"alipay","order_id":"2020033000001672","pay_time":"2020-03-30 01:41:14"}';

  it('accepts the production response: signed over "22TESTalipaypendingAUD0.01", no key appended', () => {
    const json: unknown = JSON.parse(PRODUCTION);
    expect(verifyQueryResponse(json, '7EE1')).toBe(true);
    expect(hmacSha256Hex('7EE1', '22TESTalipaypendingAUD0.01')).toBe(
      '22c98f90eefbd40b84aad11321a4881280b5a5ac886a6132b9990c6710212f78',
    );
  });

  it('rejects a tampered amount or status, a wrong key, and a non-numeric amount', () => {
    const json = JSON.parse(PRODUCTION) as Record<string, unknown>;
    expect(verifyQueryResponse({ ...json, amount: 0.02 }, '7EE1')).toBe(false);
    expect(verifyQueryResponse({ ...json, status: 'paid' }, '7EE1')).toBe(false);
    expect(verifyQueryResponse(json, '7EE2')).toBe(false);
    expect(verifyQueryResponse({ ...json, amount: null }, '7EE1')).toBe(false);
    expect(verifyQueryResponse({ ...json, amount: { v: 1 } }, '7EE1')).toBe(false);
    expect(verifyQueryResponse('not json', '7EE1')).toBe(false);
    expect(verifyQueryResponse([json], '7EE1')).toBe(false);
  });
});

describe('creation response and gateway data', () => {
  it('creation response signs nonce + host_url', () => {
    const host = 'https://pay.example.com/v2/merchanthosted/gatewaydata';
    expect(createResponseMessage({ nonce: 'N1', host_url: host })).toBe(`N1${host}`);
    const json = { code: 0, nonce: 'N1', host_url: host, signature: hmacSha256Hex(KEY, `N1${host}`) };
    expect(verifyCreateResponse(json, KEY)).toBe(true);
    expect(verifyCreateResponse({ ...json, host_url: 'https://evil.example' }, KEY)).toBe(false);
    expect(verifyCreateResponse({ ...json, nonce: 42 }, KEY)).toBe(false);
    expect(verifyCreateResponse(undefined, KEY)).toBe(false);
  });

  it('gateway data: sorted, empties dropped, numbers via String(), key appended', () => {
    const data = {
      order_id: 'O1',
      organisation_id: 42,
      amount: '0.01',
      amount_cny: '',
      currency_rate: null,
      qr_code_url: 'weixin://x?a=1&b=2',
      signature: 'x',
    };
    const message = gatewayDataMessage(data, KEY);
    expect(message).toBe(`amount=0.01&order_id=O1&organisation_id=42&qr_code_url=weixin://x?a=1&b=2${KEY}`);
    const signed = { ...data, signature: hmacSha256Hex(KEY, message) };
    expect(verifyGatewayData(signed, KEY)).toBe(true);
    expect(verifyGatewayData({ ...signed, organisation_id: 43 }, KEY)).toBe(false);
    expect(verifyGatewayData({ ...signed, amount_cny: '0.05' }, KEY)).toBe(false);
    expect(verifyGatewayData({ ...signed, nested: { a: 1 } }, KEY)).toBe(false);
    expect(verifyGatewayData(null, KEY)).toBe(false);
  });
});

describe('request message rules', () => {
  it('drops null, undefined and empty-string values but keeps "0"', () => {
    const message = requestSigningMessage({ b: '', c: null, d: undefined, e: '0', a: 'x', signature: 'sig' }, 'K');
    expect(message).toBe('a=x&e=0K');
  });

  it('sorts by code unit: uppercase before lowercase, unlike localeCompare', () => {
    // 'P' (0x50) < '_' (0x5f): a locale-aware sort would put back_url first.
    expect(requestSigningMessage({ back_url: '2', backPage_url: '1' }, '')).toBe('backPage_url=1&back_url=2');
    expect(requestSigningMessage({ a: '1', Z: '2', b: '3', B: '4' }, '')).toBe('B=4&Z=2&a=1&b=3');
    expect(requestSigningMessage({ callback_url: 'c', backPage_url: 'b' }, '')).toBe('backPage_url=b&callback_url=c');
  });

  it('writes values raw, without URL encoding', () => {
    expect(requestSigningMessage({ u: 'https://x.test/?a=1&b=ü' }, 'K')).toBe('u=https://x.test/?a=1&b=üK');
  });
});

describe('Standard Webhooks', () => {
  const body = '{"type":"payment.paid","merchant_reference":"R1"}';
  const id = 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W';
  const now = () => String(Math.floor(Date.now() / 1000));
  const sign = (ts: string, secret: string) =>
    'v1,' + createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${id}.${ts}.${body}`).digest('base64');

  it('accepts a valid signature keyed with the api_key as UTF-8 bytes', () => {
    const ts = now();
    expect(webhookSignature(id, ts, body, KEY)).toBe(sign(ts, KEY));
    expect(verifyWebhookHeaders({ id, timestamp: ts, signature: sign(ts, KEY) }, body, KEY)).toBe(true);
    expect(verifyWebhookHeaders({ id, timestamp: ts, signature: sign(ts, KEY) }, Buffer.from(body), KEY)).toBe(true);
  });

  it('rejects a wrong secret, a changed body or id', () => {
    const ts = now();
    const headers = { id, timestamp: ts, signature: sign(ts, 'wrong') };
    expect(verifyWebhookHeaders(headers, body, KEY)).toBe(false);
    const good = { id, timestamp: ts, signature: sign(ts, KEY) };
    expect(verifyWebhookHeaders(good, body + ' ', KEY)).toBe(false);
    expect(verifyWebhookHeaders({ ...good, id: 'msg_other' }, body, KEY)).toBe(false);
  });

  it('rejects timestamps outside the tolerance, in either direction', () => {
    const stale = String(Math.floor(Date.now() / 1000) - 301);
    const future = String(Math.floor(Date.now() / 1000) + 301);
    expect(verifyWebhookHeaders({ id, timestamp: stale, signature: sign(stale, KEY) }, body, KEY)).toBe(false);
    expect(verifyWebhookHeaders({ id, timestamp: future, signature: sign(future, KEY) }, body, KEY)).toBe(false);
    expect(verifyWebhookHeaders({ id, timestamp: stale, signature: sign(stale, KEY) }, body, KEY, 600)).toBe(true);
  });

  it('accepts any matching v1 entry among several, ignores other versions', () => {
    const ts = now();
    const real = sign(ts, KEY);
    const signature = `v1,${Buffer.alloc(32).toString('base64')} v1a,abc ${real} junk`;
    expect(verifyWebhookHeaders({ id, timestamp: ts, signature }, body, KEY)).toBe(true);
    const v2 = real.replace('v1,', 'v2,');
    expect(verifyWebhookHeaders({ id, timestamp: ts, signature: v2 }, body, KEY)).toBe(false);
  });

  it('returns false on malformed headers', () => {
    const ts = now();
    const signature = sign(ts, KEY);
    expect(verifyWebhookHeaders({ id: undefined, timestamp: ts, signature }, body, KEY)).toBe(false);
    expect(verifyWebhookHeaders({ id, timestamp: 'soon', signature }, body, KEY)).toBe(false);
    expect(verifyWebhookHeaders({ id, timestamp: ts, signature: [signature] }, body, KEY)).toBe(false);
    expect(verifyWebhookHeaders({ id, timestamp: ts, signature: '' }, body, KEY)).toBe(false);
  });
});
