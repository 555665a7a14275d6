import { describe, expect, it } from 'vitest';
import { queryResponse, type ResultSource } from '../domain/result-fields.js';
import { hmacHex } from '../domain/signing.js';
import { queryAnswerJson, sharedAnswerJson } from './query-answer.js';

describe('the production query response (key 7EE1)', () => {
  const PRODUCTION =
    '{"code":0,"message":"SUCCESS","merchant_reference":"22TEST","status":"pending","currency":"AUD","amount":0.01,"amount_cny":null,"rate":0.00000,"signature":"22c98f90eefbd40b84aad11321a4881280b5a5ac886a6132b9990c6710212f78","payment_method":"alipay","order_id":"2020033000001672","pay_time":"2020-03-30 01:41:14"}';
  const source: ResultSource = {
    order_id: '2020033000001672',
    merchant_reference: '22TEST',
    payment_method: 'alipay',
    status: 'pending',
    currency: 'AUD',
    amount: 1,
    amount_cny: null,
    currency_rate: null,
    // 2020-03-30 01:41:14 at UTC+08:00
    created_at: Date.UTC(2020, 2, 29, 17, 41, 14),
    pay_time: null,
    status_message: null,
    msgId: null,
  };

  it('is rebuilt byte for byte', () => {
    expect(queryAnswerJson(queryResponse(source, '7EE1'))).toBe(PRODUCTION);
  });

  it('writes amount_cny and rate as numbers when there is a rate', () => {
    const json = queryAnswerJson(
      queryResponse({ ...source, amount: 12050, amount_cny: 55964, currency_rate: 4_644_300 }, '7EE1'),
    );
    expect(json).toContain('"amount":120.5,"amount_cny":559.64,"rate":4.64430,');
    expect(JSON.parse(json)).toMatchObject({ amount: 120.5, amount_cny: 559.64, rate: 4.6443 });
  });

  it('signs the amount as the JSON number text a client rebuilds', () => {
    const parsed = JSON.parse(PRODUCTION) as Record<string, unknown>;
    const message = `${String(parsed.merchant_reference)}${String(parsed.payment_method)}${String(parsed.status)}${String(parsed.currency)}${String(parsed.amount)}`;
    expect(hmacHex('7EE1', message)).toBe(parsed.signature);
  });

  it("a shared answer's text is made once and is the same text", () => {
    const r = queryResponse(source, '7EE1');
    const first = sharedAnswerJson(r);
    expect(first).toBe(PRODUCTION);
    expect(sharedAnswerJson(r)).toBe(first);
  });
});
