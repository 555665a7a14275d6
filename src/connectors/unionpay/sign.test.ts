import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readSigningCredential } from './pkcs12.js';
import { acpTime, signFields, signingText, verifyFields } from './sign.js';
import { consumeFields, consumeState, parseAnswer } from './transformers.js';

// Genuine material (test/fixtures/unionpay-genuine): a real ACP 5.1.0 consume notification from
// UnionPay's test environment, UnionPay's test root and middle certificates and the test merchant's
// signing .pfx (password 000000) from UnionPay's own Java sample; notification.json names its source.
const dir = new URL('../../../test/fixtures/unionpay-genuine/', import.meta.url);
const genuine = JSON.parse(readFileSync(new URL('notification.json', dir), 'utf8')) as {
  fields: Record<string, string>;
};
const trust = {
  root: readFileSync(new URL('acp_test_root.cer', dir), 'utf8'),
  middle: readFileSync(new URL('acp_test_middle.cer', dir), 'utf8'),
};
/** Within the notification certificate's validity (2020-07-31 to 2025-07-31): the day it was sent. */
const SENT = Date.UTC(2022, 8, 8, 5, 22, 6);

describe('ACP 5.1.0 signatures, on a genuine UnionPay notification', () => {
  it('verifies: UnionPay-owned certificate, chained to the middle and root, signature over the sorted fields', () => {
    expect(verifyFields(genuine.fields, trust, SENT)).toBeUndefined();
  });

  it('refuses a changed field, a certificate out of its validity, and another trust chain', () => {
    expect(verifyFields({ ...genuine.fields, txnAmt: '100' }, trust, SENT)).toBe('the signature does not verify');
    expect(verifyFields(genuine.fields, trust, Date.UTC(2026, 10, 29))).toMatch(/not valid now/);
    expect(verifyFields(genuine.fields, { root: trust.middle, middle: trust.middle }, SENT)).toMatch(
      /middle certificate is not issued by the root/,
    );
    const { signature: _s, ...unsigned } = genuine.fields;
    expect(verifyFields(unsigned, trust, SENT)).toBe('no signPubKeyCert or signature');
  });

  it('signs as it verifies: sorted `k=v&`, empty values kept, certId signed', () => {
    expect(signingText({ b: '2', a: '', signature: 'x' })).toBe('a=&b=2');
  });

  it("reads UnionPay's test .pfx: its key, and its certificate's serial as a decimal certId", () => {
    const pfx = readFileSync(new URL('acp_test_sign.pfx', dir)).toString('base64');
    const credential = readSigningCredential(pfx, '000000');
    expect(credential.certId).toBe('68759663125');
    expect(credential.privateKeyPem).toMatch(/^-----BEGIN RSA PRIVATE KEY-----/);
    const signed = signFields({ merId: '777290058110048', txnType: '00' }, credential.privateKeyPem, credential.certId);
    expect(signed).toMatchObject({
      certId: '68759663125',
      signature: expect.stringMatching(/^[A-Za-z0-9+/]+=*$/) as string,
    });
    expect(() => readSigningCredential(pfx, 'wrong')).toThrow(/cannot be opened with its password/);
  });

  it('writes times in Beijing time whatever the zone', () => {
    expect(acpTime(Date.UTC(2026, 10, 29, 18, 30, 5))).toBe('20261130023005');
  });
});

describe("ACP's answers", () => {
  it('are split on & outside braces and brackets, and not URL-decoded', () => {
    expect(parseAnswer('respCode=00&reserved={a=1&b=2}&list=[x&y]&respMsg=成功+ok')).toEqual({
      respCode: '00',
      reserved: '{a=1&b=2}',
      list: '[x&y]',
      respMsg: '成功+ok',
    });
  });

  it("a consume charges CNY (domestic) or the wallet's currency (cross-border) by its ISO 4217 number, in minor units", () => {
    const consume = (currency: string, amount: number) =>
      consumeFields({
        merId: '777290058110048',
        out_trade_no: '2026112900000001F',
        charge: { amount, currency },
        now: Date.UTC(2026, 10, 29, 1),
        expires_at: Date.UTC(2026, 10, 29, 3),
        return_url: 'https://pay.example/v2/checkout/N1',
        notify_url: 'https://pay.example/channels/unionpay/notify',
        phone: false,
      });
    expect(consume('CNY', 55732)).toMatchObject({ currencyCode: '156', txnAmt: '55732' });
    expect(consume('NZD', 12000)).toMatchObject({
      currencyCode: '554',
      txnAmt: '12000',
      txnTime: '20261129090000',
      payTimeout: '20261129110000',
    });
    expect(consume('AUD', 100)).toMatchObject({ currencyCode: '036' });
  });

  it("map a consume's query: 00 and A6 paid, 03/04/05 pending, another failure closed, 34 not found", () => {
    const q = (f: Record<string, string>) => consumeState({ kind: 'answer', fields: { respCode: '00', ...f } });
    const paid = { txnAmt: '557', currencyCode: '156', queryId: '782209081322060674028' };
    expect(q({ origRespCode: '00', ...paid })).toEqual({
      kind: 'paid',
      provider_ref: '782209081322060674028',
      charge: { amount: 557, currency: 'CNY' },
    });
    expect(q({ origRespCode: 'A6', ...paid }).kind).toBe('paid');
    expect(q({ origRespCode: '00', ...paid, currencyCode: '999' }).kind).toBe('unknown');
    for (const c of ['03', '04', '05']) expect(q({ origRespCode: c }).kind).toBe('pending');
    expect(q({ origRespCode: '01' }).kind).toBe('closed');
    expect(consumeState({ kind: 'answer', fields: { respCode: '34' } }).kind).toBe('not_found');
    expect(consumeState({ kind: 'answer', fields: { respCode: '06', respMsg: '系统繁忙' } }).kind).toBe('unknown');
  });
});
