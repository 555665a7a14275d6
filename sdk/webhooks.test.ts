import { createHmac } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { README_BODY, README_KEY, failure } from './test-support/readme-notification.js';
import { verifyWebhook, verifyWebhookHeaders, webhookHeaders } from './webhooks.js';

// The notification request in docs/api.md (api_key 7EE1), signed at NOW.
const KEY = README_KEY;
const NOW = 1585503674;
const ID = 'evt_5d0c1e2a9b8f4c3d2e1f0a9b8c7d6e5f';
const BODY = README_BODY;
const SIGNATURE = 'v1,GvidM+VMHMZcSdPIkgvKVs7P3lnlfinrI/be6nsuDnw=';
const HEADERS = { id: ID, timestamp: String(NOW), signature: SIGNATURE };

// Signed independently of webhooks.ts, so a bug in its message building cannot cancel out.
const sign = (body: string, timestamp = String(NOW), key = KEY) =>
  'v1,' + createHmac('sha256', key).update(`${ID}.${timestamp}.${body}`).digest('base64');

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(NOW * 1000);
});
afterEach(() => vi.useRealTimers());

describe('verifyWebhook', () => {
  it('accepts the published request, as text or bytes, and returns its id and timestamp', () => {
    expect(verifyWebhook(HEADERS, BODY, KEY)).toEqual({ id: ID, timestamp: NOW });
    expect(verifyWebhook(HEADERS, Buffer.from(BODY), Buffer.from(KEY))).toEqual({ id: ID, timestamp: NOW });
  });

  it('missing_header names the header', () => {
    for (const header of ['id', 'timestamp', 'signature'] as const) {
      for (const absent of [undefined, null, '']) {
        const err = failure(() => verifyWebhook({ ...HEADERS, [header]: absent }, BODY, KEY));
        expect(err.code).toBe('missing_header');
        expect(err.header).toBe(`webhook-${header}`);
        expect(err.message).toContain(`webhook-${header} header is missing`);
      }
    }
  });

  it('invalid_header for a repeated header or a timestamp that is not Unix seconds', () => {
    const repeated = failure(() => verifyWebhook({ ...HEADERS, signature: [SIGNATURE, SIGNATURE] }, BODY, KEY));
    expect(repeated).toMatchObject({ code: 'invalid_header', header: 'webhook-signature' });
    expect(repeated.message).toContain('repeated (2 values)');
    const soon = failure(() => verifyWebhook({ ...HEADERS, timestamp: '2020-03-30T01:41:14Z' }, BODY, KEY));
    expect(soon).toMatchObject({ code: 'invalid_header', header: 'webhook-timestamp' });
    expect(soon.message).toContain('not Unix seconds');
  });

  it('timestamp_outside_tolerance says by how much, either way, and honours the tolerance option', () => {
    const stale = String(NOW - 400);
    const old = failure(() => verifyWebhook({ ...HEADERS, timestamp: stale, signature: sign(BODY, stale) }, BODY, KEY));
    expect(old).toMatchObject({ code: 'timestamp_outside_tolerance', header: 'webhook-timestamp', ageSeconds: 400 });
    expect(old.message).toContain('400 s old, beyond the 300 s tolerance by 100 s');

    const ahead = String(NOW + 301);
    const future = failure(() =>
      verifyWebhook({ ...HEADERS, timestamp: ahead, signature: sign(BODY, ahead) }, BODY, KEY),
    );
    expect(future).toMatchObject({ code: 'timestamp_outside_tolerance', ageSeconds: -301 });
    expect(future.message).toContain('301 s in the future, beyond the 300 s tolerance by 1 s');

    const signed = { ...HEADERS, timestamp: stale, signature: sign(BODY, stale) };
    expect(verifyWebhook(signed, BODY, KEY, { toleranceSeconds: 400 }).timestamp).toBe(NOW - 400);
  });

  it('judges the timestamp only once the signature matched', () => {
    const stale = String(NOW - 400);
    const forged = { ...HEADERS, timestamp: stale, signature: sign(BODY, stale, 'other') };
    expect(failure(() => verifyWebhook(forged, BODY, KEY)).code).toBe('no_matching_signature');
  });

  it('body_not_raw for a parsed body, whatever its shape', () => {
    const parsed = Object.fromEntries(new URLSearchParams(BODY));
    for (const body of [parsed, new URLSearchParams(BODY), null, [BODY]]) {
      const err = failure(() => verifyWebhook(HEADERS, body as never, KEY));
      expect(err.code).toBe('body_not_raw');
      expect(err.message).toContain('are you passing a parsed body?');
    }
    // An object turned into text by mistake is what this refusal is for.
    // eslint-disable-next-line @typescript-eslint/no-base-to-string
    expect(failure(() => verifyWebhook(HEADERS, String(parsed), KEY)).code).toBe('body_not_raw');
  });

  it('body_not_raw for a notification re-encoded as JSON, otherwise encoded or reordered, when its own signature proves the key', () => {
    const fields = Object.fromEntries(new URLSearchParams(BODY));
    const reencoded = [
      JSON.stringify(fields),
      new URLSearchParams(Object.entries(fields).sort()).toString(),
      BODY.replace('+01%3A41%3A14', '%2001:41:14'),
    ];
    for (const body of reencoded) {
      const err = failure(() => verifyWebhook(HEADERS, body, KEY));
      expect(err.code).toBe('body_not_raw');
      expect(err.message).toContain('re-encoded');
      // Without that evidence (the key is wrong too) it is a plain mismatch.
      expect(failure(() => verifyWebhook(HEADERS, body, 'other')).code).toBe('no_matching_signature');
    }
  });

  it('a genuine body under changed headers is a mismatch, not body_not_raw', () => {
    const stale = String(NOW - 400);
    const changed = [
      { ...HEADERS, id: 'evt_other' },
      { ...HEADERS, timestamp: String(NOW - 1) },
      { ...HEADERS, timestamp: stale, signature: sign(BODY, stale, 'other') },
    ];
    for (const headers of changed) {
      expect(failure(() => verifyWebhook(headers, BODY, KEY)).code).toBe('no_matching_signature');
    }
  });

  it('no_v1_signature when only other versions are present', () => {
    const v1 = SIGNATURE.slice(3);
    for (const signature of [`v2,${v1}`, `v1a,${v1} junk`, v1]) {
      const err = failure(() => verifyWebhook({ ...HEADERS, signature }, BODY, KEY));
      expect(err).toMatchObject({ code: 'no_v1_signature', header: 'webhook-signature' });
    }
  });

  it('no_matching_signature for a wrong key, a changed body or id, and names the usual causes', () => {
    const cases: [typeof HEADERS, string, string][] = [
      [HEADERS, BODY, 'other-key'],
      [HEADERS, BODY.replace('status=paid', 'status=failed'), KEY],
      [{ ...HEADERS, id: 'evt_other' }, BODY, KEY],
      [{ ...HEADERS, signature: `v1,${Buffer.alloc(32).toString('base64')} v1,short` }, BODY, KEY],
    ];
    for (const [headers, body, key] of cases) {
      const err = failure(() => verifyWebhook(headers, body, key));
      expect(err).toMatchObject({ code: 'no_matching_signature', header: 'webhook-signature' });
      expect(err.message).toMatch(/api_key.*raw request body/);
    }
  });

  it('accepts a matching v1 entry among others', () => {
    const signature = `v1,${Buffer.alloc(32).toString('base64')} v2,abc ${SIGNATURE}`;
    expect(verifyWebhook({ ...HEADERS, signature }, BODY, KEY).id).toBe(ID);
  });
});

describe('verifyWebhookHeaders, on top of verifyWebhook', () => {
  it('is true exactly when verifyWebhook returns', () => {
    expect(verifyWebhookHeaders(HEADERS, BODY, KEY)).toBe(true);
    expect(verifyWebhookHeaders(HEADERS, JSON.stringify(Object.fromEntries(new URLSearchParams(BODY))), KEY)).toBe(
      false,
    );
    expect(verifyWebhookHeaders({ ...HEADERS, id: undefined }, BODY, KEY)).toBe(false);
    vi.setSystemTime((NOW + 301) * 1000);
    expect(verifyWebhookHeaders(HEADERS, BODY, KEY)).toBe(false);
    expect(verifyWebhookHeaders(HEADERS, BODY, KEY, 301)).toBe(true);
  });
});

describe('webhookHeaders', () => {
  it('reads Node request headers and fetch Headers', () => {
    const node = { 'webhook-id': ID, 'webhook-timestamp': String(NOW), 'webhook-signature': SIGNATURE, host: 'x' };
    expect(webhookHeaders(node)).toEqual(HEADERS);
    expect(webhookHeaders(new Headers(node))).toEqual(HEADERS);
    expect(webhookHeaders(new Headers())).toEqual({ id: undefined, timestamp: undefined, signature: undefined });
  });
});
