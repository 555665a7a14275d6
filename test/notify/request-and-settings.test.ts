// Pure parts of delivery: the request of one attempt, the retry schedule and the settings.
import { describe, expect, it } from 'vitest';
import {
  verifyNotification,
  verifyWebhookHeaders,
  webhookSignature as sdkWebhookSignature,
} from '../../sdk/signing.js';
import { buildNotificationRequest, payloadFields } from '../../src/notify/notification-request.js';
import {
  DEFAULT_NOTIFY_SETTINGS,
  notifySettingsFromEnv,
  parseRetrySchedule,
  resolveNotifySettings,
  retryDelay,
} from '../../src/notify/settings.js';

const fields = {
  merchant_reference: '22TEST',
  order_id: '2020033000001672',
  currency: 'AUD',
  amount: '0.01',
  amount_cny: '0.05',
  rate: '5.000000',
  payment_method: 'alipay',
  status: 'paid',
  pay_time: '2020-03-30 01:41:14',
};
const src = {
  event_id: 'evt_0123456789abcdef0123456789abcdef',
  order_id: '2020033000001672',
  seq: 1,
  payload: JSON.stringify(fields),
};

describe('buildNotificationRequest', () => {
  it('form-encodes the stored fields in order, then the signature', () => {
    const now = Math.floor(Date.now() / 1000);
    const req = buildNotificationRequest(src, '7EE1', now);
    expect(req.body).toBe(
      'merchant_reference=22TEST&order_id=2020033000001672&currency=AUD&amount=0.01&amount_cny=0.05&rate=5.000000' +
        '&payment_method=alipay&status=paid&pay_time=2020-03-30+01%3A41%3A14&signature=' +
        new URLSearchParams(req.body).get('signature'),
    );
    expect(verifyNotification(new URLSearchParams(req.body), '7EE1')).toBe(true);
    expect(req.headers).toEqual({
      'content-type': 'application/x-www-form-urlencoded',
      'user-agent': 'payment-gateway-notifier/1',
      'webhook-id': src.event_id,
      'webhook-timestamp': String(now),
      'webhook-signature': sdkWebhookSignature(src.event_id, String(now), req.body, '7EE1'),
      'x-gateway-order-id': '2020033000001672',
      'x-gateway-sequence': '1',
    });
    const h = {
      id: req.headers['webhook-id'],
      timestamp: req.headers['webhook-timestamp'],
      signature: req.headers['webhook-signature'],
    };
    expect(verifyWebhookHeaders(h, req.body, '7EE1')).toBe(true);
    expect(verifyWebhookHeaders(h, req.body, '7EE2')).toBe(false);
  });

  it('matches the docs/api.md example exactly (api_key 7EE1)', () => {
    const req = buildNotificationRequest(
      { ...src, event_id: 'evt_5d0c1e2a9b8f4c3d2e1f0a9b8c7d6e5f' },
      '7EE1',
      1585503674,
    );
    expect(req.body).toBe(
      'merchant_reference=22TEST&order_id=2020033000001672&currency=AUD&amount=0.01&amount_cny=0.05&rate=5.000000&payment_method=alipay' +
        '&status=paid&pay_time=2020-03-30+01%3A41%3A14&signature=3cd65ddfb700684c5c2918f2a19cda0ba440859f6a1253f63cbdb82d462ac959',
    );
    expect(req.headers['webhook-signature']).toBe('v1,GvidM+VMHMZcSdPIkgvKVs7P3lnlfinrI/be6nsuDnw=');
  });

  it('escapes field values and keeps the payid extras', () => {
    const payid = {
      ...fields,
      payment_method: 'payid',
      status: 'rejected',
      message: 'closed & frozen = 100%',
      msgId: 'P+1',
    };
    const req = buildNotificationRequest({ ...src, payload: JSON.stringify(payid) }, 'k3y', 1_700_000_000);
    const parsed = new URLSearchParams(req.body);
    expect(parsed.get('message')).toBe('closed & frozen = 100%');
    expect(parsed.get('msgId')).toBe('P+1');
    expect(req.body).toContain('message=closed+%26+frozen+%3D+100%25&msgId=P%2B1&signature=');
    expect(verifyNotification(parsed, 'k3y')).toBe(true);
  });

  it('refuses a corrupt payload rather than sending something else', () => {
    expect(() => payloadFields('[1]')).toThrow(/not a JSON object/);
    expect(() => payloadFields('{"amount":1}')).toThrow(/amount is not a string/);
  });
});

describe('retry schedule', () => {
  it('is data: the n-th failure waits the n-th entry, the last repeats', () => {
    const s = [1000, 2000, 30000];
    expect([1, 2, 3, 4, 50].map((n) => retryDelay(n, s, 0))).toEqual([1000, 2000, 30000, 30000, 30000]);
  });

  it('jitters by up to the given fraction either way', () => {
    expect(retryDelay(1, [30000], 0.1, 0)).toBe(27000);
    expect(retryDelay(1, [30000], 0.1, 0.5)).toBe(30000);
    expect(retryDelay(1, [30000], 0.1, 0.999999)).toBe(33000);
  });

  it('defaults to about every 30 s with 10% jitter, as the spec says', () => {
    expect(DEFAULT_NOTIFY_SETTINGS).toMatchObject({
      retryScheduleMs: [30000],
      jitter: 0.1,
      timeoutMs: 10000,
      concurrency: 64,
      hostConcurrency: 4,
    });
  });

  it('parses NOTIFY_RETRY_SCHEDULE_MS', () => {
    expect(parseRetrySchedule('1000,2000,30000')).toEqual([1000, 2000, 30000]);
    expect(parseRetrySchedule(' 500 , 750 ')).toEqual([500, 750]);
    for (const bad of ['', '1000,', 'abc', '0', '-5', '1.5', '1000;2000'])
      expect(() => parseRetrySchedule(bad), bad).toThrow(/NOTIFY_RETRY_SCHEDULE_MS must be/);
  });
});

describe('settings', () => {
  it('reads the NOTIFY_* environment', () => {
    expect(
      notifySettingsFromEnv({
        NOTIFY_RETRY_SCHEDULE_MS: '1000,2000',
        NOTIFY_TIMEOUT_MS: '5000',
        NOTIFY_LEASE_MS: '20000',
        NOTIFY_POLL_MS: '250',
        NOTIFY_CONCURRENCY: '32',
        NOTIFY_HOST_CONCURRENCY: '2',
        NOTIFY_ALLOW_CIDRS: '10.0.0.0/8,fd00::/8',
        NOTIFY_ENABLED: 'false',
      }),
    ).toMatchObject({
      retryScheduleMs: [1000, 2000],
      timeoutMs: 5000,
      leaseMs: 20000,
      pollIntervalMs: 250,
      concurrency: 32,
      hostConcurrency: 2,
      enabled: false,
      allowCidrs: [
        { family: 4, prefix: 8 },
        { family: 6, prefix: 8 },
      ],
    });
    expect(notifySettingsFromEnv({})).toEqual({});
    expect(() => notifySettingsFromEnv({ NOTIFY_TIMEOUT_MS: '10s' })).toThrow(
      'NOTIFY_TIMEOUT_MS must be a positive whole number, not "10s"',
    );
    expect(() => notifySettingsFromEnv({ NOTIFY_ALLOW_CIDRS: '10.0.0.0/40' })).toThrow(
      /^NOTIFY_ALLOW_CIDRS: "10.0.0.0\/40" is not an address range/,
    );
    // The shutdown grace may be 0 (abort at once).
    expect(notifySettingsFromEnv({ NOTIFY_STOP_GRACE_MS: '0' })).toEqual({ stopGraceMs: 0 });
    expect(notifySettingsFromEnv({ NOTIFY_STOP_GRACE_MS: '2500' })).toEqual({ stopGraceMs: 2500 });
    expect(() => notifySettingsFromEnv({ NOTIFY_STOP_GRACE_MS: '-1' })).toThrow(
      'NOTIFY_STOP_GRACE_MS must be a whole number of milliseconds, 0 or more, not "-1"',
    );
    expect(resolveNotifySettings().stopGraceMs).toBe(5000);
  });

  it('refuses a lease that an attempt could outlive', () => {
    expect(() => resolveNotifySettings({ timeoutMs: 10_000, leaseMs: 15_000 })).toThrow(
      'NOTIFY_LEASE_MS (15000) must be at least twice NOTIFY_TIMEOUT_MS (10000)',
    );
    expect(resolveNotifySettings({ timeoutMs: 1000, leaseMs: 2000 }).leaseMs).toBe(2000);
    expect(resolveNotifySettings({ concurrency: 2 }).hostConcurrency).toBe(2);
  });
});
