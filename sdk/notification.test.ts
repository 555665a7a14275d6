import { describe, expect, it } from 'vitest';
import { parseNotification, parseRedirection } from './notification.js';
import { verifyNotification, verifyRedirection } from './signing.js';
import { README_BODY, README_KEY, failure } from './test-support/readme-notification.js';

// The notification body in docs/api.md (Result notifications), api_key 7EE1.
const KEY = README_KEY;
const BODY = README_BODY;
const FIELDS = Object.fromEntries(new URLSearchParams(BODY));
const SIGNED = ['merchant_reference', 'payment_method', 'status', 'currency', 'amount', 'signature'];

describe('parseNotification', () => {
  it('returns every field, signed or not, from text, bytes, URLSearchParams or an object', () => {
    for (const body of [BODY, Buffer.from(BODY), new URLSearchParams(BODY), FIELDS]) {
      expect(parseNotification(body, KEY)).toEqual(FIELDS);
    }
    expect(parseNotification(BODY, KEY).pay_time).toBe('2020-03-30 01:41:14');
  });

  it('invalid_body for something that is not a form, naming JSON and String(object)', () => {
    for (const body of [null, 42, [BODY]]) {
      expect(failure(() => parseNotification(body as never, KEY)).code).toBe('invalid_body');
    }
    const json = failure(() => parseNotification(JSON.stringify(FIELDS), KEY));
    expect(json).toMatchObject({ code: 'invalid_body' });
    expect(json.message).toContain('is JSON, but the gateway sends form-urlencoded');
    // An object turned into text by mistake is what this refusal is for.
    // eslint-disable-next-line @typescript-eslint/no-base-to-string
    const text = failure(() => parseNotification(String(FIELDS), KEY));
    expect(text.message).toContain('an object turned into text');
  });

  it('missing_field names each signed field that is absent', () => {
    for (const field of SIGNED) {
      const form = new URLSearchParams(BODY);
      form.delete(field);
      const err = failure(() => parseNotification(form, KEY));
      expect(err).toMatchObject({ code: 'missing_field', field });
      expect(err.message).toContain(`has no ${field} field`);
      expect(failure(() => parseNotification({ ...FIELDS, [field]: undefined }, KEY)).field).toBe(field);
    }
  });

  it('invalid_field for a repeated field, a non-text value, or a signature that is not hex', () => {
    const repeated = new URLSearchParams(BODY);
    repeated.append('status', 'paid');
    expect(failure(() => parseNotification(repeated, KEY))).toMatchObject({ code: 'invalid_field', field: 'status' });
    const array = failure(() => parseNotification({ ...FIELDS, currency: ['AUD', 'NZD'] }, KEY));
    expect(array).toMatchObject({ code: 'invalid_field', field: 'currency' });
    expect(array.message).toContain('2 values for currency');
    const number = failure(() => parseNotification({ ...FIELDS, amount: 0.01 }, KEY));
    expect(number).toMatchObject({ code: 'invalid_field', field: 'amount' });
    expect(number.message).toContain('amount is a number, not text');
    const short = failure(() => parseNotification({ ...FIELDS, signature: 'abc' }, KEY));
    expect(short).toMatchObject({ code: 'invalid_field', field: 'signature' });
    expect(short.message).toContain('not 64 hexadecimal digits');
  });

  it('no_matching_signature for a wrong key or a changed signed field, and names both causes', () => {
    const cases = [
      [FIELDS, '7EE2'],
      [{ ...FIELDS, amount: '1.00' }, KEY],
      [{ ...FIELDS, status: 'failed' }, KEY],
    ] as const;
    for (const [body, key] of cases) {
      const err = failure(() => parseNotification(body, key));
      expect(err.code).toBe('no_matching_signature');
      expect(err.message).toMatch(/not this wallet's api_key.*was changed/);
    }
    // Unsigned fields are not covered by this signature (only by verifyWebhook over the raw body).
    expect(parseNotification({ ...FIELDS, order_id: 'X' }, KEY).order_id).toBe('X');
  });
});

describe('parseRedirection and the boolean verifiers', () => {
  it('parseRedirection checks the same way and says it is the redirection', () => {
    expect(parseRedirection(`?${BODY}`, KEY).status).toBe('paid');
    expect(failure(() => parseRedirection({ ...FIELDS, status: 'failed' }, KEY)).message).toContain(
      "redirection's signature",
    );
  });

  it('verifyNotification and verifyRedirection are true exactly when parsing succeeds', () => {
    expect(verifyNotification(BODY, KEY)).toBe(true);
    expect(verifyRedirection(FIELDS, KEY)).toBe(true);
    expect(verifyNotification(JSON.stringify(FIELDS), KEY)).toBe(false);
    expect(verifyNotification({ ...FIELDS, amount: 0.01 }, KEY)).toBe(false);
    expect(verifyRedirection({ ...FIELDS, status: 'failed' }, KEY)).toBe(false);
  });
});
