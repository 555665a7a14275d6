import { describe, expect, it } from 'vitest';
import { signatureMatches, signatureOf, timestampOf } from './sign.js';
import {
  INVOICE_STATUSES,
  coinValue,
  createOutcome,
  fiatCurrencyOf,
  invoiceIdOf,
  invoiceState,
  minorOf,
  webhookInvoice,
} from './transformers.js';

// The documentation's client id and secret (its webhook example), and expected signatures made
// with openssl (`openssl dgst -sha256 -hmac SECRET -binary | base64` over the byte-order mark and the parts).
const SECRET = '9ZFHcnGMxawADeXRfDtNkQDCjFUK5998oOMhl51QvzM=';
const CLIENT = 'dc6a16e545c34187ba21a9edbbe484a5';
const URL_ = 'https://api.coinpayments.com/api/v1/merchant/invoices';
const NZD = { id: '5058', decimals: 2 };

describe("CoinPayments' signature", () => {
  it('is base64 HMAC-SHA256 over the byte-order mark, method, URL, client id, timestamp and body', () => {
    const parts = { method: 'GET', url: URL_, clientId: CLIENT, timestamp: '2024-07-01T11:04:10', body: '' };
    expect(signatureOf(SECRET, parts)).toBe('cao4cUEmtKN6kL9TrM2MK9UcSKbLjyLRQl+9SMAHWKE=');
    const post = { ...parts, method: 'POST', body: '{"a":1}' };
    expect(signatureOf(SECRET, post)).toBe('Q1F0fXa9lesdLUF2D2z9NKFAcHKl4QTxPHBcDff4MGY=');
    expect(signatureMatches('Q1F0fXa9lesdLUF2D2z9NKFAcHKl4QTxPHBcDff4MGY=', SECRET, post)).toBe(true);
    expect(signatureMatches('Q1F0fXa9lesdLUF2D2z9NKFAcHKl4QTxPHBcDff4MGY=', SECRET, { ...post, body: '{"a":2}' })).toBe(
      false,
    );
    expect(signatureMatches('', SECRET, post)).toBe(false);
  });

  it('timestamps to the second in UTC, without a zone', () => {
    expect(timestampOf(Date.UTC(2024, 6, 1, 11, 4, 10, 999))).toBe('2024-07-01T11:04:10');
  });
});

describe("CoinPayments' invoices", () => {
  const expected = { charge: { currency: 'NZD' }, exponent: 2, currency: NZD };
  const invoice = (status: string, over: Record<string, unknown> = {}) => ({
    id: 'a4c8d7f2-0000-4000-8000-000000000001',
    invoiceId: '2026112900000001R',
    status,
    amount: { currencyId: '5058', value: '4550' },
    ...over,
  });

  it('maps every status: paid ones paid, ended ones failed, the rest pending; an unknown one is unknown', () => {
    const kinds = Object.fromEntries(INVOICE_STATUSES.map((s) => [s, invoiceState(invoice(s), expected).kind]));
    expect(kinds).toEqual({
      draft: 'pending',
      scheduled: 'pending',
      unpaid: 'pending',
      pending: 'pending',
      paid: 'paid',
      scheduledForPayout: 'paid',
      completed: 'paid',
      cancelling: 'pending',
      cancelled: 'failed',
      timedOut: 'failed',
      deleted: 'failed',
    });
    // A webhook's PascalCase state reads the same.
    expect(invoiceState({ ...invoice(''), status: undefined, state: 'TimedOut' }, expected).kind).toBe('failed');
    expect(invoiceState(invoice('refunded'), expected)).toEqual({
      kind: 'unknown',
      reason: 'unknown invoice status refunded',
    });
  });

  it('a paid invoice is paid with its amount in minor units and its id; another currency or a fraction is unknown', () => {
    expect(invoiceState(invoice('paid'), expected)).toEqual({
      kind: 'paid',
      provider_ref: 'a4c8d7f2-0000-4000-8000-000000000001',
      charge: { amount: 4550, currency: 'NZD' },
    });
    expect(invoiceState(invoice('paid', { amount: { currencyId: '5057', value: '4550' } }), expected).kind).toBe(
      'unknown',
    );
    expect(invoiceState(invoice('paid', { amount: { currencyId: '5058', value: '45.50' } }), expected).kind).toBe(
      'unknown',
    );
    // The webhook's shape of amount (currency by object) reads too.
    expect(
      invoiceState(invoice('completed', { amount: { currency: { id: '5058' }, value: '100' } }), expected),
    ).toMatchObject({
      charge: { amount: 100 },
    });
  });

  it('counts amounts in the currency decimals CoinPayments gives, both ways', () => {
    expect(coinValue(4550, 2, NZD)).toBe('4550');
    expect(coinValue(4550, 2, { id: 'x', decimals: 8 })).toBe('4550000000');
    expect(coinValue(4550, 2, { id: 'x', decimals: 0 })).toBeUndefined();
    expect(minorOf('4550000000', 2, { id: 'x', decimals: 8 })).toBe(4550);
    expect(minorOf('4550000001', 2, { id: 'x', decimals: 8 })).toBeUndefined();
    expect(minorOf('-1', 2, NZD)).toBeUndefined();
  });

  it('finds a fiat currency by its code in a list, or a list under items', () => {
    const list = [
      { id: 5057, symbol: 'USD', decimalPlaces: 2 },
      { id: '5058', symbol: 'NZD', decimalPlaces: 2 },
    ];
    expect(fiatCurrencyOf(list, 'NZD')).toEqual(NZD);
    expect(fiatCurrencyOf({ items: list }, 'usd')).toEqual({ id: '5057', decimals: 2 });
    expect(fiatCurrencyOf(list, 'AUD')).toBeUndefined();
    expect(fiatCurrencyOf({ nothing: true }, 'NZD')).toBeUndefined();
  });

  it("opens at the invoice's checkout, coming back to the page; a 5xx is no answer, a 4xx a refusal", () => {
    const body = {
      invoices: [{ id: 'inv-1', checkoutLink: 'https://a-checkout.coinpayments.net/checkout/?invoice-id=inv-1' }],
    };
    const opened = createOutcome({ kind: 'answer', status: 200, body }, 'https://pay.example/v2/checkout/N1');
    expect(opened.kind).toBe('opened');
    const url = new URL(opened.kind === 'opened' ? opened.payload : '');
    expect(url.origin).toBe('https://a-checkout.coinpayments.net');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      'invoice-id': 'inv-1',
      'success-url': 'https://pay.example/v2/checkout/N1',
      'cancel-url': 'https://pay.example/v2/checkout/N1',
    });
    expect(invoiceIdOf(url.href)).toBe('inv-1');
    // Without a checkoutLink (the older schema): CoinPayments' own checkout.
    const plain = createOutcome(
      { kind: 'answer', status: 200, body: { invoices: [{ id: 'inv-2' }] } },
      'https://p.example/',
    );
    expect(plain).toMatchObject({
      payload: expect.stringMatching(/^https:\/\/checkout\.coinpayments\.com\/checkout\/\?invoice-id=inv-2&/) as string,
    });
    expect(createOutcome({ kind: 'answer', status: 503, body: {} }, 'https://p.example/').kind).toBe('unknown');
    expect(createOutcome({ kind: 'answer', status: 200, body: { invoices: [] } }, 'https://p.example/').kind).toBe(
      'unknown',
    );
    expect(
      createOutcome(
        { kind: 'answer', status: 400, body: { title: 'Bad Request', detail: 'amount' } },
        'https://p.example/',
      ),
    ).toEqual({ kind: 'refused', reason: 'CoinPayments refused the invoice (HTTP 400) Bad Request: amount' });
  });

  it("reads a webhook's invoice ids, and nothing from a body without them", () => {
    expect(webhookInvoice(JSON.stringify({ invoice: { id: 'inv-1', invoiceId: 'X1R', state: 'Paid' } }))).toEqual({
      id: 'inv-1',
      out_trade_no: 'X1R',
    });
    expect(webhookInvoice('{"invoice":{}}')).toBeUndefined();
    expect(webhookInvoice('not json')).toBeUndefined();
  });
});
