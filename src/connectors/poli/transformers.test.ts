import { describe, expect, it } from 'vitest';
import {
  TRANSACTION_STATUSES,
  amountOf,
  initiateBody,
  initiateOutcome,
  tokenOf,
  transactionState,
  transactionStatus,
} from './transformers.js';

// The examples are POLi's manual's and its clients' (docs/providers/protocols/poli.md).

describe("POLi's statuses", () => {
  it('maps every status of the list: Completed paid, the ends without payment closed, the rest open', () => {
    const kinds = Object.fromEntries(
      TRANSACTION_STATUSES.map((s) => [
        s,
        transactionState({
          TransactionStatusCode: s,
          AmountPaid: 12.3,
          CurrencyCode: 'NZD',
          TransactionRefNo: '596464607245',
        }).kind,
      ]),
    );
    expect(kinds).toEqual({
      Initiated: 'pending',
      FinancialInstitutionSelected: 'pending',
      EulaAccepted: 'pending',
      InProcess: 'pending',
      Unknown: 'pending',
      Completed: 'paid',
      Cancelled: 'closed',
      Failed: 'closed',
      ReceiptUnverified: 'pending',
      TimedOut: 'closed',
      PaymentPending: 'pending',
    });
  });

  it('ReceiptUnverified stays pending and asks for an operator, naming the POLi ID', () => {
    expect(transactionState({ TransactionStatusCode: 'ReceiptUnverified', TransactionRefNo: '596464607245' })).toEqual({
      kind: 'pending',
      attention: expect.stringContaining('ReceiptUnverified, POLi ID 596464607245') as string,
    });
    expect(transactionState({ TransactionStatusCode: 'InProcess' })).toEqual({ kind: 'pending' });
  });

  it('reads a status whatever its casing, and an unlisted one as unknown, never a default', () => {
    expect(transactionStatus('EULAAccepted')).toBe('EulaAccepted');
    expect(transactionStatus('completed')).toBe('Completed');
    expect(transactionState({ TransactionStatusCode: 'Refunded' })).toEqual({
      kind: 'unknown',
      reason: 'unknown TransactionStatusCode Refunded',
    });
    expect(transactionState({})).toMatchObject({ kind: 'unknown' });
  });

  it('a Completed transaction is paid with what was paid, and its POLi ID; without them it is unknown', () => {
    expect(
      transactionState({
        TransactionStatusCode: 'Completed',
        AmountPaid: 1.1,
        CurrencyCode: 'AUD',
        TransactionRefNo: '596464607245',
      }),
    ).toEqual({ kind: 'paid', provider_ref: '596464607245', charge: { amount: 110, currency: 'AUD' } });
    expect(
      transactionState({ TransactionStatusCode: 'Completed', AmountPaid: 1.1, CurrencyCode: 'AUD' }),
    ).toMatchObject({
      kind: 'unknown',
    });
    expect(amountOf('12.30', 'NZD')).toBe(1230);
    expect(amountOf(12.3, 'XYZ')).toBeUndefined();
  });
});

describe("POLi's Initiate", () => {
  const now = Date.parse('2026-11-29T00:00:00Z');
  it('sends the amount as a number, the out_trade_no as the reference, the hosted page as every return', () => {
    expect(
      initiateBody({
        out_trade_no: '2026112900000001R',
        charge: { amount: 12030, currency: 'NZD' },
        return_url: 'https://pay.example.com/v2/checkout/abc?x=1',
        notify_url: 'https://pay.example.com/channels/poli/notify',
        expires_at: now + 86_400_000,
        now,
      }),
    ).toEqual({
      Amount: 120.3,
      CurrencyCode: 'NZD',
      MerchantReference: '2026112900000001R',
      MerchantHomepageURL: 'https://pay.example.com',
      SuccessURL: 'https://pay.example.com/v2/checkout/abc?x=1',
      FailureURL: 'https://pay.example.com/v2/checkout/abc?x=1',
      CancellationURL: 'https://pay.example.com/v2/checkout/abc?x=1',
      NotificationURL: 'https://pay.example.com/channels/poli/notify',
      Timeout: 900,
    });
  });

  it('opens with the NavigateURL; refuses what POLi refused; a 5xx or a back-end timeout is no answer', () => {
    const navigate = 'https://txn.apac.paywithpoli.com/?token=ix3dphBp7oPMGCKSjH%2flf0OQSFipYvej';
    expect(
      initiateOutcome({
        kind: 'answer',
        status: 200,
        body: {
          Success: true,
          TransactionRefNo: '596464607245',
          NavigateURL: navigate,
          ErrorCode: 0,
          ErrorMessage: '',
        },
      }),
    ).toEqual({ kind: 'opened', payload: navigate });
    expect(
      initiateOutcome({
        kind: 'answer',
        status: 200,
        body: { Success: false, ErrorCode: 1025, ErrorMessage: 'Transaction cannot be initiated under than $1.00' },
      }),
    ).toMatchObject({ kind: 'refused', reason: expect.stringContaining('1025: Transaction cannot be initiated') });
    expect(initiateOutcome({ kind: 'answer', status: 200, body: { Success: false, ErrorCode: 3007 } })).toMatchObject({
      kind: 'unknown',
    });
    expect(initiateOutcome({ kind: 'answer', status: 503, body: {} })).toMatchObject({ kind: 'unknown' });
    expect(
      initiateOutcome({ kind: 'answer', status: 401, body: { Message: 'Authorization has been denied' } }),
    ).toMatchObject({
      kind: 'refused',
      reason: expect.stringContaining('Authorization has been denied'),
    });
    // A NavigateURL that is not an https address is not one to send a customer to.
    expect(
      initiateOutcome({ kind: 'answer', status: 200, body: { Success: true, NavigateURL: 'javascript:alert(1)' } }),
    ).toMatchObject({ kind: 'refused' });
    expect(tokenOf(navigate)).toBe('ix3dphBp7oPMGCKSjH/lf0OQSFipYvej');
  });
});
