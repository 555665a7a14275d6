// /metrics in Prometheus's text format: only to the bearer of METRICS_TOKEN on the main port, or
// on a listener of its own (METRICS_PORT); absent otherwise. Scraped as traffic flows on both
// engines: requests by route and code, notification attempts and delivery latency, backlog and
// failing hosts, long polls held, channel calls, the engine's own figures. Labels stay bounded.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';
import { until } from '../support/wait.js';
import { Receiver } from '../notify/receiver.js';

const TOKEN = 'metrics-token-0123456789abcdef';

/** The sum of the samples of `name` whose labels include `labels`. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  let found = false;
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) {
      sum += Number(m[3]);
      found = true;
    }
  }
  return found ? sum : NaN;
}

describe.each(ENGINES)('metrics on %s', (engine) => {
  let gw: TestGateway;
  let rx: Receiver;
  beforeAll(async () => {
    rx = await Receiver.start();
    gw = await startTestGateway(engine, {
      metricsToken: TOKEN,
      metricsPort: 0,
      notify: { retryScheduleMs: [60_000], pollIntervalMs: 100 },
    });
  });
  afterAll(async () => {
    await gw?.close();
    await rx?.close();
  });
  const scrape = async () => {
    const res = await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    return res.text();
  };

  it('serves the main port only to the token, and its own listener to anyone', async () => {
    expect((await fetch(`${gw.url}/metrics`)).status).toBe(401);
    expect((await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}x` } })).status).toBe(401);
    expect((await fetch(`${gw.url}/metrics`, { headers: { authorization: `Basic ${TOKEN}` } })).status).toBe(401);
    const own = await fetch(`${gw.metricsUrl!}/metrics`);
    expect(own.status).toBe(200);
    expect(await own.text()).toContain('gateway_http_request_duration_seconds_count');
    expect(gw.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await fetch(`${gw.metricsUrl!}/other`)).status).toBe(404);
  });

  it('moves as orders are created, refused, paid and notified; labels are route patterns and codes', async () => {
    const before = await scrape();
    const created =
      sample(before, 'gateway_http_request_duration_seconds_count', { route: '/v2/transaction', code: '0' }) || 0;
    const refused =
      sample(before, 'gateway_http_request_duration_seconds_count', { route: '/v2/transaction', code: '206' }) || 0;
    const delivered = sample(before, 'gateway_notification_attempts_total', { outcome: 'delivered' }) || 0;
    const refusedAttempts = sample(before, 'gateway_notification_attempts_total', { outcome: 'refused' }) || 0;

    const ok = await gw.create({ callback_url: `${rx.url}/ok` });
    expect(ok.reply.code).toBe(0);
    expect((await gw.post('/v2/transaction', { ...gw.createBody(), signature: 'f'.repeat(64) })).code).toBe(206);
    // A long poll held while the order is pending.
    const poll = gw.query(ok.merchant_reference, { block: true });
    await until('the long poll to be counted', async () => sample(await scrape(), 'gateway_long_polls_held') === 1);
    await gw.pay(ok.order_id);
    await poll;
    // One notification delivered, one to a host that refuses it.
    rx.fallback = (r) => (r.path === '/no' ? { status: 500, body: 'down' } : 'sent');
    const bad = await gw.create({ callback_url: `${rx.url}/no` });
    await gw.pay(bad.order_id);
    await until('both attempts', async () => {
      const t = await scrape();
      return (
        sample(t, 'gateway_notification_attempts_total', { outcome: 'delivered' }) === delivered + 1 &&
        sample(t, 'gateway_notification_attempts_total', { outcome: 'refused' }) === refusedAttempts + 1
      );
    });

    const after = await scrape();
    expect(
      sample(after, 'gateway_http_request_duration_seconds_count', {
        route: '/v2/transaction',
        code: '0',
        status: '200',
        method: 'POST',
      }),
    ).toBe(created + 2);
    expect(
      sample(after, 'gateway_http_request_duration_seconds_count', { route: '/v2/transaction', code: '206' }),
    ).toBe(refused + 1);
    expect(
      sample(after, 'gateway_http_request_duration_seconds_bucket', {
        route: '/v2/transaction',
        method: 'POST',
        code: '0',
        le: '+Inf',
      }),
    ).toBe(created + 2);
    expect(
      sample(after, 'gateway_http_request_duration_seconds_sum', {
        route: '/v2/transaction',
        method: 'POST',
        code: '0',
      }),
    ).toBeGreaterThan(0);
    expect(
      sample(after, 'gateway_http_request_duration_seconds_count', { route: '/v2/transaction/:merchant_reference' }),
    ).toBeGreaterThanOrEqual(1);
    expect(sample(after, 'gateway_long_polls_held')).toBe(0);
    expect(sample(after, 'gateway_notification_delivery_seconds_count')).toBeGreaterThanOrEqual(1);
    expect(sample(after, 'gateway_notifications_backlog')).toBe(1);
    expect(sample(after, 'gateway_notifications_failing')).toBe(1);
    expect(sample(after, 'gateway_notification_hosts_failing')).toBe(1);
    expect(sample(after, 'gateway_notifications_oldest_undelivered_age_seconds')).toBeGreaterThanOrEqual(0);
    expect(sample(after, 'gateway_refunds_pending')).toBe(0);
    expect(sample(after, 'gateway_reconciliation_exceptions_open', { kind: 'duplicate_payment' })).toBe(0);
    expect(sample(after, 'gateway_metrics_store_up')).toBe(1);
    // A second notification failing at the same host: two failing, still one host.
    const bad2 = await gw.create({ callback_url: `${rx.url}/no` });
    await gw.pay(bad2.order_id);
    await until(
      'the second notification failing',
      async () => sample(await scrape(), 'gateway_notifications_failing') === 2,
    );
    expect(sample(await scrape(), 'gateway_notification_hosts_failing')).toBe(1);
    expect(
      sample(after, 'gateway_channel_calls_total', { provider: 'sandbox', operation: 'open' }),
    ).toBeGreaterThanOrEqual(2);
    expect(sample(after, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    if (engine === 'sqlite') expect(sample(after, 'gateway_sqlite_commit_batch_size_count')).toBeGreaterThan(0);
    else expect(sample(after, 'gateway_db_pool_connections', { state: 'total' })).toBeGreaterThan(0);
    // A path with no route (the not-found answer, code 1) is counted under 'unmatched'; neither it
    // nor a path parameter over 100 characters (refused by the router) becomes a label.
    const unmatchedBefore =
      sample(before, 'gateway_http_request_duration_seconds_count', { route: 'unmatched', status: '404', code: '1' }) ||
      0;
    expect((await fetch(`${gw.url}/v2/nowhere-${ok.order_id}`)).status).toBe(404);
    expect(await (await fetch(`${gw.url}/v2/transaction/${'x'.repeat(150)}`)).json()).toMatchObject({
      code: expect.any(Number),
    });
    const later = await scrape();
    expect(
      sample(later, 'gateway_http_request_duration_seconds_count', { route: 'unmatched', status: '404', code: '1' }),
    ).toBe(unmatchedBefore + 1);
    expect(later).not.toContain('nowhere');
    expect(later).not.toContain('x'.repeat(150));
    // Bounded: no order id, merchant reference or callback URL in any label.
    for (const value of [ok.order_id, ok.merchant_reference, bad.order_id, rx.url]) expect(after).not.toContain(value);
  });
});

describe('metrics off', () => {
  it('has no /metrics without METRICS_TOKEN or METRICS_PORT', async () => {
    const gw = await startTestGateway('sqlite');
    try {
      const res = await fetch(`${gw.url}/metrics`);
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ code: 1 });
      expect(gw.metricsUrl).toBeUndefined();
    } finally {
      await gw.close();
    }
  });
});
