import { describe, expect, it } from 'vitest';
import { abaProblems } from '../../test/support/aba-check.js';
import { abaFile, type AbaSettings } from './aba-file.js';
import { bankAccountDetails, maskedAccount } from './bank-account.js';
import { nzAccountProblem } from './nz-bank-account.js';
import { nzCsvFile, nzFileAccount, nzHashTotal } from './nz-payment-file.js';

const settings: AbaSettings = {
  user_id: '301500',
  bank: 'WBC',
  user_name: 'Kiwi Payments Pty Ltd',
  remitter: 'KIWI PAYMENTS',
  trace_bsb: '032-000',
  trace_account: '123456',
};
const at = Date.UTC(2026, 10, 29, 22, 0); // 30 November 2026 in Sydney

describe('the ABA (Direct Entry) file', () => {
  const credits = [
    { bsb: '062-000', account_number: '12345678', title: 'Roo Pty Ltd', amount: 25000, reference: 'P0123456789' },
    { bsb: '083-170', account_number: '739827524', title: 'Émile’s Café & Co', amount: 1, reference: 'P0000000001' },
  ];

  it('has 120-character records, types 0, 1 and 7, the totals and count of its credits', () => {
    const file = abaFile(settings, credits, at);
    expect(abaProblems(file)).toEqual([]);
    const records = file.split('\r\n');
    expect(records[0]).toBe(
      `0${' '.repeat(17)}01WBC${' '.repeat(7)}${'Kiwi Payments Pty Ltd'.padEnd(26)}301500PAYOUTS     301126${' '.repeat(40)}`,
    );
    expect(records[1].slice(0, 30)).toBe('1062-000 12345678 500000025000');
    expect(records[2].slice(30, 62)).toBe(' mile s Caf  & Co'.padEnd(32)); // outside the BECS set: spaces
    expect(records[3].slice(20, 50)).toBe('000002500100000250010000000000');
  });

  it('self-balanced: a debit of the trace account for the credits, net zero', () => {
    const file = abaFile({ ...settings, self_balance: true }, credits, at);
    expect(abaProblems(file)).toEqual([]);
    const records = file.split('\r\n');
    expect(records[3].slice(0, 30)).toBe('1032-000   123456 130000025001');
    expect(records[4].slice(20, 50)).toBe('000000000000000250010000025001');
    expect(records[4].slice(74, 80)).toBe('000003');
  });

  it('the checker finds a record of the wrong length and totals that differ', () => {
    const file = abaFile(settings, credits, at);
    expect(abaProblems(file.replace('Roo Pty Ltd', 'Roo Pty Ltd '))).toContain('record 2 has 121 characters');
    expect(abaProblems(file.replace('500000025000', '500000025100'))).toContain('credit total differs');
  });

  it('refuses settings it cannot write, naming the setting', () => {
    expect(() => abaFile({ ...settings, user_id: '30150' }, credits, at)).toThrow(/PAYOUT_ABA_USER_ID/);
    expect(() => abaFile({ ...settings, trace_bsb: '032000' }, credits, at)).toThrow(/PAYOUT_ABA_TRACE_BSB/);
  });
});

describe('New Zealand bank accounts', () => {
  it('takes the published examples of each algorithm and refuses a wrong digit, bank or branch', () => {
    for (const valid of [
      '01-0902-0068389-00',
      '01-0902-0998907-00',
      '08-6523-1954512-001',
      '09-0000-0007471-02',
      '25-2500-2608486-001',
      '26-2600-0320871-032',
      '31-2800-0000001-00',
    ])
      expect(nzAccountProblem(valid), valid).toBeUndefined();
    expect(nzAccountProblem('01-0242-0100195-00')).toMatch(/check digits/);
    expect(nzAccountProblem('01-0902-0068398-00')).toMatch(/check digits/);
    expect(nzAccountProblem('07-0902-0068389-00')).toMatch(/bank 07/);
    expect(nzAccountProblem('01-2500-0068389-00')).toMatch(/branch 2500/);
    expect(nzAccountProblem('01-902-68389-00')).toMatch(/BB-bbbb-AAAAAAA-SS/);
  });

  it('keeps 7 account digits and masks a verified account', () => {
    const nz = bankAccountDetails({ currency: 'NZD', holder: 'Kiwi Cafe', nz_account: '01-0902-00068389-00' });
    expect(nz).toMatchObject({ ok: true, details: { account_number: '01-0902-0068389-00', bsb: null } });
    expect(maskedAccount({ bsb: null, account_number: '01-0902-0068389-00' })).toBe('01-0902-****389-00');
    expect(maskedAccount({ bsb: '062-000', account_number: '12345678' })).toBe('062-000 *****678');
    expect(bankAccountDetails({ currency: 'AUD', holder: 'Roo', bsb: '062000', account_number: '1234' })).toMatchObject(
      {
        ok: true,
        details: { bsb: '062-000' },
      },
    );
    expect(bankAccountDetails({ currency: 'AUD', holder: 'Roo', nz_account: '01-0902-0068389-00' })).toMatchObject({
      ok: false,
    });
    expect(
      bankAccountDetails({ currency: 'CNY', holder: 'Roo', bsb: '062-000', account_number: '1234' }),
    ).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/AUD and NZD only/),
    });
  });
});

describe('the NZ bulk credit file (IB4B CSV)', () => {
  it("hash total: the sum of each payee's branch and account digits, its rightmost 11 digits (the guide's example)", () => {
    expect(nzHashTotal(['3890160725779000', '3890160704505000'])).toBe('80321430284');
    expect(nzFileAccount('09-0000-0007471-02')).toBe('0900000007471002');
  });

  it('header, one transaction record per credit, trailer; CR LF after each; no comma inside a field', () => {
    const file = nzCsvFile(
      { account: '38-9016-0704505-00', name: 'Kiwi Payments' },
      [
        {
          account_number: '01-0902-0068389-00',
          name: 'Cafe, Bar & Grill Limited',
          amount: 12345,
          reference: 'P0123456789',
        },
        { account_number: '26-2600-0320871-032', name: 'Tui Ltd', amount: 500, reference: 'P9876543210' },
      ],
      at,
    );
    expect(file.split('\r\n')).toEqual([
      '1,,,,3890160704505000,7,261130,261130,',
      '2,0109020068389000,50,12345,Cafe  Bar & Grill Li,P0123456789,,,,Kiwi Payments,,P0123456789,',
      '2,2626000320871032,50,500,Tui Ltd,P9876543210,,,,Kiwi Payments,,P9876543210,',
      `3,12845,2,${nzHashTotal(['0109020068389000', '2626000320871032'])}`,
      '',
    ]);
  });
});
