import { describe, expect, it } from 'vitest';
import { azupayDescriptor } from './descriptor.js';
import { notificationAuthorization, notificationAuthorized } from './sign.js';
import {
  REQUEST_STATUSES,
  centsOf,
  createBody,
  createOutcome,
  paymentDescription,
  refundOutcome,
  refundState,
  requestIdOf,
  requestState,
} from './transformers.js';

const ID = 'K+9p4EE0rJnMtomRfWKWEDRh82BnAboHP2KwgIPyEIA=';
const record = (status: Record<string, unknown>, request: Record<string, unknown> = {}) => ({
  PaymentRequest: { clientTransactionId: '2026112900000001T', payID: 'a1b2c3@pay.example.com.au', ...request },
  PaymentRequestStatus: { paymentRequestId: ID, ...status },
});

describe("Azupay's payment requests", () => {
  it('maps every status: COMPLETE paid, EXPIRED failed, an automatic return rejected, a manual one paid; an unlisted one unknown', () => {
    const kinds = Object.fromEntries(
      REQUEST_STATUSES.map((s) => [
        s,
        requestState(record({ status: s, amountReceived: 45.5, returnInitiator: 'AUTOMATIC' })).kind,
      ]),
    );
    expect(kinds).toEqual({
      WAITING: 'pending',
      COMPLETE: 'paid',
      EXPIRED: 'failed',
      RETURN_IN_PROGRESS: 'rejected',
      RETURN_COMPLETE: 'rejected',
      RETURN_FAILED: 'rejected',
    });
    // After the merchant's own refund (MANUAL) the request was paid: not rejected.
    expect(
      requestState(record({ status: 'RETURN_COMPLETE', amountReceived: 45.5, returnInitiator: 'MANUAL' })),
    ).toEqual({
      kind: 'paid',
      provider_ref: ID,
      charge: { amount: 4550, currency: 'AUD' },
    });
    expect(requestState(record({ status: 'RETURN_REJECTED' }))).toEqual({
      kind: 'unknown',
      reason: 'unknown payment request status RETURN_REJECTED',
    });
    expect(requestState(record({ status: 'RETURN_COMPLETE' })).kind).toBe('unknown');
  });

  it("an automatic return carries Azupay's reason and the PayID paid to", () => {
    expect(
      requestState(
        record({
          status: 'RETURN_COMPLETE',
          returnInitiator: 'AUTOMATIC',
          failedPaymentAttempts: [{ attemptAmount: 40, attemptFailureReason: 'Amount mismatch' }],
        }),
      ),
    ).toEqual({ kind: 'rejected', reason: 'Amount mismatch', msgId: 'a1b2c3@pay.example.com.au' });
  });

  it('a COMPLETE request without what it received is unknown, never paid', () => {
    expect(requestState(record({ status: 'COMPLETE' })).kind).toBe('unknown');
    expect(requestState(record({ status: 'COMPLETE', amountReceived: 'lots' })).kind).toBe('unknown');
  });

  it('reads amounts as cents, from numbers and from strings', () => {
    expect(centsOf(45.5)).toBe(4550);
    expect(centsOf('10.00')).toBe(1000);
    expect(centsOf(0.1 + 0.2)).toBe(30);
    expect(centsOf('1.005')).toBeUndefined();
  });

  it("create's body: only the schema's fields, dollars as a number, the webhook's own Authorization", () => {
    const body = createBody({
      clientId: 'CLIENT1TEST',
      out_trade_no: '2026112900000001T',
      description: 'Wine',
      amount: 4550,
      expires_at: Date.UTC(2026, 10, 29, 12),
      notify_url: 'https://pay.example/channels/azupay/notify',
      authorization: 'per-request',
    });
    expect(body).toEqual({
      PaymentRequest: {
        clientId: 'CLIENT1TEST',
        clientTransactionId: '2026112900000001T',
        // 'Wine' is under Azupay's 5 characters.
        paymentDescription: 'Order 2026112900000001T',
        paymentAmount: 45.5,
        paymentExpiryDatetime: '2026-11-29T12:00:00.000Z',
        paymentNotification: {
          paymentNotificationEndpointUrl: 'https://pay.example/channels/azupay/notify',
          paymentNotificationAuthorizationHeaderValue: 'per-request',
        },
      },
    });
    expect(paymentDescription(`Pinot\nNoir ${'x'.repeat(200)}`, 'X').length).toBe(110);
  });

  it("opens with the PayID and the request's id; a 5xx is no answer, a 400 a refusal", () => {
    const opened = createOutcome(
      {
        kind: 'answer',
        status: 200,
        body: record({ status: 'WAITING' }, { paymentExpiryDatetime: '2026-11-29T12:00:00Z' }),
      },
      0,
    );
    expect(opened).toEqual({
      kind: 'opened',
      payload: JSON.stringify({
        payId: 'a1b2c3@pay.example.com.au',
        paymentRequestId: ID,
        expiresAt: Date.UTC(2026, 10, 29, 12),
      }),
    });
    expect(requestIdOf(opened.kind === 'opened' ? opened.payload : null)).toBe(ID);
    expect(createOutcome({ kind: 'answer', status: 502, body: {} }, 0).kind).toBe('unknown');
    expect(
      createOutcome({ kind: 'answer', status: 400, body: { message: 'An invalid request body was supplied' } }, 0),
    ).toEqual({
      kind: 'refused',
      reason: 'Azupay refused the payment request (HTTP 400) An invalid request body was supplied',
    });
  });

  it('a refund is the latest of its amount; one in flight makes a second refused with a reason to wait', () => {
    const info = (requests: unknown[]) => record({ status: 'RETURN_COMPLETE', refundInformation: { requests } });
    expect(refundState(info([{ amount: '10.00', status: 'COMPLETE' }]), 1000)).toEqual({ kind: 'succeeded' });
    expect(refundState(info([{ amount: '10.00', status: 'IN_PROGRESS' }]), 1000)).toEqual({ kind: 'processing' });
    expect(refundState(info([{ amount: '10.00', status: 'FAILED' }]), 1000).kind).toBe('refused');
    expect(refundState(info([{ amount: '10.00', status: 'COMPLETE' }]), 550)).toEqual({ kind: 'not_found' });
    expect(
      refundOutcome(
        {
          kind: 'answer',
          status: 400,
          body: { message: 'Refunds can only be done on COMPLETE', details: { failureCode: 'ERR0.08' } },
        },
        550,
      ),
    ).toMatchObject({ kind: 'refused', reason: expect.stringContaining('one refund at a time') as string });
    expect(refundOutcome({ kind: 'unknown', reason: 'no answer within 500 ms' }, 550).kind).toBe('unknown');
  });
});

describe("Azupay's webhook Authorization", () => {
  it('is one per request, made from the API key and never the key itself; compared whole', () => {
    const a = notificationAuthorization('SECRkey', '2026112900000001T');
    expect(a).not.toContain('SECRkey');
    expect(a).not.toBe(notificationAuthorization('SECRkey', '2026112900000002T'));
    expect(notificationAuthorized(a, 'SECRkey', '2026112900000001T')).toBe(true);
    expect(notificationAuthorized(a, 'SECRkey', '2026112900000002T')).toBe(false);
    expect(notificationAuthorized(a.slice(0, -1), 'SECRkey', '2026112900000001T')).toBe(false);
  });
});

describe('an Azupay account', () => {
  const account = {
    wallet_id: 'W1',
    payment_method: 'payid' as const,
    provider: 'azupay',
    config: { client_id: 'CLIENT1TEST', currency: 'AUD', currency_mode: 'cross-border' },
    secrets: { api_key: 'SECRkey' },
  };
  it('is for an AUD wallet, with a PayID domain if any', () => {
    expect(azupayDescriptor.checkAccount(account, 0)).toEqual([]);
    expect(azupayDescriptor.checkAccount({ ...account, config: { ...account.config, currency: 'NZD' } }, 0)).toEqual([
      'Azupay takes AUD only: a wallet in NZD cannot use it',
    ]);
    expect(
      azupayDescriptor.checkAccount({ ...account, config: { ...account.config, payid_suffix: 'Pay.Example' } }, 0),
    ).toEqual([expect.stringContaining('not a PayID domain')]);
  });
});
