// Result notifications end to end: the real gateway (SQLite and PostgreSQL) delivering to a real
// receiver on 127.0.0.1, verified with the merchant SDK. (Over 300 lines: the delivery contract
// end to end, each case short.)
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { signRequest, verifyNotification, verifyWebhookHeaders } from '../../sdk/signing.js';
import { main } from '../../src/cli/main.js';
import { databaseFor, ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';
import { Receiver, type Received } from './receiver.js';

const FAST = { retryScheduleMs: [100, 200], pollIntervalMs: 100 };

const sentFor =
  (ref: string, count = 1) =>
  (rs: Received[]) =>
    rs.filter((r) => r.fields.get('merchant_reference') === ref && r.answered === 'sent').length >= count;

/** The order's notification once the gateway has recorded it delivered (the receiver learns first). */
async function deliveredRow(gw: TestGateway, order_id: string) {
  return vi.waitFor(
    async () => {
      const [row] = await gw.store.outbox.listByOrder(order_id);
      expect(row?.delivery_status).toBe('delivered');
      return row;
    },
    { timeout: 10_000, interval: 50 },
  );
}

async function cli(args: string[]): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void lines.push(a.join(' ')));
  const err = vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void lines.push(a.join(' ')));
  try {
    const code = await main(args);
    return { code, out: lines.join('\n') };
  } finally {
    log.mockRestore();
    err.mockRestore();
  }
}

describe.each(ENGINES)('result notifications on %s', (engine) => {
  let gw: TestGateway;
  let rx: Receiver;
  let database: string;
  let cleanup: () => void;

  beforeAll(async () => {
    rx = await Receiver.start();
    ({ database, cleanup } = await databaseFor(engine));
    gw = await startTestGateway(engine, { database, notify: FAST });
  });
  afterAll(async () => {
    await gw?.close();
    await rx?.close();
    cleanup?.();
  });
  beforeEach(() => {
    rx.answers.length = 0;
    rx.fallback = 'sent';
  });

  it('POSTs a paid notification with the spec fields, the notification signature and the webhook headers', async () => {
    const { order_id, merchant_reference } = await gw.create({ callback_url: `${rx.url}/confirm?shop=1` });
    await gw.pay(order_id);
    await rx.waitFor(sentFor(merchant_reference), 'the paid notification');
    const [r] = rx.byReference(merchant_reference);
    expect(r.path).toBe('/confirm?shop=1');
    expect(r.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect([...r.fields.keys()]).toEqual([
      'merchant_reference',
      'order_id',
      'currency',
      'amount',
      'amount_cny',
      'rate',
      'payment_method',
      'status',
      'pay_time',
      'signature',
    ]);
    const q = await gw.query(merchant_reference);
    expect(Object.fromEntries(r.fields)).toMatchObject({
      merchant_reference,
      order_id,
      currency: 'NZD',
      amount: '120.00',
      amount_cny: '557.32',
      rate: '4.644300',
      payment_method: 'alipay',
      status: 'paid',
      pay_time: q.pay_time,
    });
    expect(r.fields.get('pay_time')).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    expect(r.body).toContain(`pay_time=${encodeURIComponent(q.pay_time).replace('%20', '+')}`);
    expect(verifyNotification(r.fields, gw.merchant.api_key)).toBe(true);
    expect(verifyNotification(r.fields, 'another-key')).toBe(false);

    const row = await deliveredRow(gw, order_id);
    const headers = {
      id: r.headers['webhook-id'],
      timestamp: r.headers['webhook-timestamp'],
      signature: r.headers['webhook-signature'],
    };
    expect(headers.id).toBe(row.event_id);
    expect(headers.id).toMatch(/^evt_[0-9a-f]{32}$/);
    expect(verifyWebhookHeaders(headers, r.body, gw.merchant.api_key)).toBe(true);
    expect(verifyWebhookHeaders(headers, r.body + 'x', gw.merchant.api_key)).toBe(false);
    expect(r.headers['x-gateway-order-id']).toBe(order_id);
    expect(r.headers['x-gateway-sequence']).toBe('1');

    const attempts = await gw.store.outbox.listAttempts(row.event_id);
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({ http_status: 200, response_excerpt: 'sent', error: null });
    expect(Number(attempts[0].latency_ms)).toBeGreaterThanOrEqual(0);
    const stored = await gw.store.outbox.find(row.event_id);
    expect(stored).toMatchObject({ delivery_status: 'delivered', attempts: 1, claimed_by: null, claimed_until: null });
    expect(Number(stored!.delivered_at)).toBeGreaterThan(0);
  });

  it('notifies failed, rejected (payid, with message and msgId) and canceled', async () => {
    const failed = await gw.create({ callback_url: `${rx.url}/f` });
    await gw.pay(failed.order_id, 'failed');
    const rejected = await gw.create({ callback_url: `${rx.url}/r`, payment_method: 'payid' });
    await gw.pay(rejected.order_id, 'rejected', { message: 'Account closed & frozen', msgId: 'PAYID-77' });
    const canceled = await gw.create({ callback_url: `${rx.url}/c` });
    const { user_id, api_key } = gw.merchant;
    const reply = await gw.post('/cancel', {
      user_id,
      merchant_reference: canceled.merchant_reference,
      signature: signRequest({ user_id, merchant_reference: canceled.merchant_reference }, api_key),
    });
    expect(reply.code).toBe(0);

    for (const [t, status] of [
      [failed, 'failed'],
      [rejected, 'rejected'],
      [canceled, 'canceled'],
    ] as const) {
      await rx.waitFor(sentFor(t.merchant_reference), `the ${status} notification`);
      const [r] = rx.byReference(t.merchant_reference);
      expect(r.fields.get('status')).toBe(status);
      expect(r.fields.get('order_id')).toBe(t.order_id);
      expect(verifyNotification(r.fields, api_key)).toBe(true);
      expect(
        verifyWebhookHeaders(
          {
            id: r.headers['webhook-id'],
            timestamp: r.headers['webhook-timestamp'],
            signature: r.headers['webhook-signature'],
          },
          r.body,
          api_key,
        ),
      ).toBe(true);
    }
    const [r] = rx.byReference(rejected.merchant_reference);
    expect([...r.fields.keys()].slice(-3)).toEqual(['message', 'msgId', 'signature']);
    expect(r.fields.get('message')).toBe('Account closed & frozen');
    expect(r.fields.get('msgId')).toBe('PAYID-77');
    expect(r.fields.get('payment_method')).toBe('payid');
    expect(rx.byReference(failed.merchant_reference)[0].fields.has('msgId')).toBe(false);
  });

  it('retries every kind of failure until the merchant answers sent, recording each attempt in order', async () => {
    rx.answers.push(
      { status: 500, body: 'oops' },
      { status: 200, body: 'OK' },
      'destroy',
      { status: 302, body: '', headers: { location: '/elsewhere' } },
      { status: 200, body: ` ${'x'.repeat(300)}` },
    );
    const { order_id, merchant_reference } = await gw.create({ callback_url: `${rx.url}/retry` });
    await gw.pay(order_id);
    await rx.waitFor(sentFor(merchant_reference), 'the notification to be acknowledged');

    const got = rx.byReference(merchant_reference);
    expect(got.map((r) => r.answered?.slice(0, 3))).toEqual(['500', '200', 'des', '302', '200', 'sen']);
    expect(got.map((r) => r.path)).toEqual(Array(6).fill('/retry'));
    expect(new Set(got.map((r) => r.headers['webhook-id'])).size).toBe(1);
    const stamps = got.map((r) => Number(r.headers['webhook-timestamp']));
    expect([...stamps].sort((a, b) => a - b)).toEqual(stamps);
    expect(rx.received.some((r) => r.path === '/elsewhere')).toBe(false);

    const row = await deliveredRow(gw, order_id);
    const attempts = await gw.store.outbox.listAttempts(row.event_id);
    expect(attempts.map((a) => a.http_status)).toEqual([500, 200, null, 302, 200, 200]);
    expect(attempts.map((a) => a.response_excerpt)).toEqual(['oops', 'OK', null, '', ` ${'x'.repeat(199)}`, 'sent']);
    expect(attempts[0].error).toMatch(/HTTP 500/);
    expect(attempts[1].error).toMatch(/not "sent"/);
    expect(attempts[2].error).toMatch(/socket|closed|reset/i);
    expect(attempts[3].error).toMatch(/redirects are not followed/);
    expect(attempts[5].error).toBeNull();
    const times = attempts.map((a) => Number(a.attempted_at));
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    expect(await gw.store.outbox.find(row.event_id)).toMatchObject({ delivery_status: 'delivered', attempts: 6 });
  });

  it('signs each attempt with the wallet key current at that attempt', async () => {
    const m = await gw.newMerchant();
    rx.answers.push('hang');
    const { order_id, merchant_reference } = await gw.create({ callback_url: `${rx.url}/rotate` }, m);
    await gw.pay(order_id);
    await rx.waitFor(
      (rs) => rs.some((r) => r.fields.get('merchant_reference') === merchant_reference),
      'the first attempt',
    );
    const newKey = 'ROTATED' + m.api_key;
    await gw.store.accounts.rotateApiKey(m.wallet_id, newKey, null);
    rx.releaseHanging();
    await rx.waitFor(sentFor(merchant_reference), 'the retry');
    const [first, second] = rx.byReference(merchant_reference);
    expect(verifyNotification(first.fields, m.api_key)).toBe(true);
    expect(verifyNotification(second.fields, newKey)).toBe(true);
    expect(verifyNotification(second.fields, m.api_key)).toBe(false);
    const h = (r: Received) => ({
      id: r.headers['webhook-id'],
      timestamp: r.headers['webhook-timestamp'],
      signature: r.headers['webhook-signature'],
    });
    expect(verifyWebhookHeaders(h(second), second.body, newKey)).toBe(true);
    expect(verifyWebhookHeaders(h(second), second.body, m.api_key)).toBe(false);
  });

  it('gateway notifications resend delivers the latest notification again; list shows every attempt', async () => {
    const { order_id, merchant_reference } = await gw.create({ callback_url: `${rx.url}/resend` });
    await gw.pay(order_id);
    await rx.waitFor(sentFor(merchant_reference), 'the first delivery');
    await deliveredRow(gw, order_id);

    const resent = await cli(['notifications', 'resend', '--order-id', order_id, '--database', database]);
    expect(resent.code).toBe(0);
    const [row] = await gw.store.outbox.listByOrder(order_id);
    expect(resent.out).toContain(`queued notification ${row.event_id}`);
    expect(resent.out).toContain(`${rx.url}/resend`);
    // The CLI wrote to the database from outside the server: the worker's poll finds the row.
    await rx.waitFor(sentFor(merchant_reference, 2), 'the resent delivery');
    const got = rx.byReference(merchant_reference);
    expect(got.map((r) => r.headers['webhook-id'])).toEqual([row.event_id, row.event_id]);
    await vi.waitFor(
      async () =>
        expect(await gw.store.outbox.find(row.event_id)).toMatchObject({ delivery_status: 'delivered', attempts: 2 }),
      { timeout: 10_000 },
    );

    const listed = await cli([
      'notifications',
      'list',
      '--merchant-reference',
      merchant_reference,
      '--user-id',
      gw.merchant.user_id,
      '--database',
      database,
      '--json',
    ]);
    expect(listed.code).toBe(0);
    const json = JSON.parse(listed.out);
    expect(json).toMatchObject({ order_id, merchant_reference, order_status: 'paid' });
    expect(json.notifications).toHaveLength(1);
    expect(json.notifications[0]).toMatchObject({
      event_id: row.event_id,
      seq: 1,
      status: 'paid',
      delivery_status: 'delivered',
      attempts: 2,
    });
    expect(json.notifications[0].attempt_log.map((a: { http_status: number }) => a.http_status)).toEqual([200, 200]);

    const text = await cli([
      'notifications',
      'list',
      '--merchant-reference',
      merchant_reference,
      '--user-id',
      gw.merchant.user_id,
      '--database',
      database,
    ]);
    expect(text.out).toContain(`notification ${row.event_id}  seq 1  status paid  delivered`);
    expect(text.out).toContain('2 attempts:');

    expect((await cli(['notifications', 'resend', '--order-id', 'nope', '--database', database])).code).toBe(2);
    const pending = await gw.create({ callback_url: `${rx.url}/pending` });
    const none = await cli(['notifications', 'resend', '--order-id', pending.order_id, '--database', database]);
    expect(none).toMatchObject({ code: 2 });
    expect(none.out).toContain('has no notification to resend');
  });
});

describe.each(ENGINES)('a resend while an attempt hangs on %s', (engine) => {
  let gw: TestGateway;
  let rx: Receiver;
  let database: string;
  let cleanup: () => void;
  beforeAll(async () => {
    rx = await Receiver.start();
    ({ database, cleanup } = await databaseFor(engine));
    // The hanging attempt stays in flight, and its claim unexpired, for the whole test.
    gw = await startTestGateway(engine, {
      database,
      notify: { timeoutMs: 120_000, leaseMs: 300_000, pollIntervalMs: 100 },
    });
  });
  afterAll(async () => {
    await gw?.close();
    await rx?.close();
    cleanup?.();
  });

  it('delivers at the next poll, not when the claim the resend took over would have ended', async () => {
    const { order_id, merchant_reference } = await gw.create({ callback_url: `${rx.url}/resend-hang` });
    rx.answers.push('hang');
    await gw.pay(order_id);
    await rx.waitFor(() => rx.byReference(merchant_reference).length === 1, 'the first attempt, which hangs');
    expect((await cli(['notifications', 'resend', '--order-id', order_id, '--database', database])).code).toBe(0);
    await rx.waitFor(sentFor(merchant_reference), 'the resent delivery');
    const got = rx.byReference(merchant_reference);
    expect(new Set(got.map((r) => r.headers['webhook-id'])).size).toBe(1);
    await deliveredRow(gw, order_id);
  });
});

describe.each(ENGINES)('a status change wakes the worker on %s', (engine) => {
  let gw: TestGateway;
  let rx: Receiver;
  afterAll(async () => {
    await gw?.close();
    await rx?.close();
  });

  beforeAll(async () => {
    rx = await Receiver.start();
    // Polling every ten minutes: only the settle's poke, or the worker's own timer for a retry it
    // scheduled, can start these deliveries within the waits below.
    gw = await startTestGateway(engine, { notify: { pollIntervalMs: 600_000, retryScheduleMs: [100] } });
  });

  it('delivers at once, without waiting for a poll', async () => {
    const { order_id, merchant_reference } = await gw.create({ callback_url: `${rx.url}/poke` });
    await gw.pay(order_id);
    await rx.waitFor(sentFor(merchant_reference), 'the poked delivery');
  });

  it('retries when the retry is due, not at the next poll', async () => {
    rx.answers.push({ status: 503, body: 'busy' }, { status: 503, body: 'busy' });
    const { order_id, merchant_reference } = await gw.create({ callback_url: `${rx.url}/retry-timer` });
    await gw.pay(order_id);
    await rx.waitFor(sentFor(merchant_reference), 'the third attempt');
    expect(rx.byReference(merchant_reference).map((r) => r.answered?.slice(0, 3))).toEqual(['503', '503', 'sen']);
  });
});

describe.each(ENGINES)('no head-of-line blocking on %s', (engine) => {
  let gw: TestGateway;
  let dead: Receiver;
  let alive: Receiver;
  beforeAll(async () => {
    dead = await Receiver.start();
    alive = await Receiver.start();
    dead.fallback = 'hang';
    // Attempts to the hanging merchant stay open for the whole test.
    gw = await startTestGateway(engine, {
      notify: { concurrency: 6, hostConcurrency: 4, timeoutMs: 120_000, leaseMs: 300_000, pollIntervalMs: 100 },
    });
  });
  afterAll(async () => {
    await gw?.close();
    await dead?.close();
    await alive?.close();
  });

  it('delivers to a responsive merchant while another merchant hangs on every request', async () => {
    for (let i = 0; i < 10; i++) {
      const { order_id } = await gw.create({ callback_url: `${dead.url}/hang` });
      await gw.pay(order_id);
    }
    await dead.waitFor(() => dead.openNow === 4, 'the hanging merchant to hold its 4 connections');
    const refs: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { order_id, merchant_reference } = await gw.create({ callback_url: `${alive.url}/ok` });
      refs.push(merchant_reference);
      await gw.pay(order_id);
    }
    await alive.waitFor((rs) => refs.every((ref) => sentFor(ref)(rs)), 'the responsive merchant to get all three');
    // Still hanging: the responsive merchant did not wait for them, and the per-host cap held.
    expect(dead.openNow).toBe(4);
    expect(dead.maxOpen).toBe(4);
    expect(dead.received).toHaveLength(4);
  });
});

describe('several instances on one PostgreSQL database', () => {
  let a: TestGateway;
  let b: TestGateway;
  let rx: Receiver;
  afterEach(async () => {
    await a?.close();
    await b?.close();
    await rx?.close();
  });

  it('deliver every notification exactly once between them', async () => {
    rx = await Receiver.start();
    const { database } = await databaseFor('postgres');
    a = await startTestGateway('postgres', { database, notify: { ...FAST, instanceId: 'instance-a' } });
    b = await startTestGateway('postgres', { database, notify: { ...FAST, instanceId: 'instance-b' } });
    const refs: string[] = [];
    for (let i = 0; i < 40; i++) {
      const gw = i % 2 === 0 ? a : b;
      const { order_id, merchant_reference } = await gw.create({ callback_url: `${rx.url}/multi` });
      refs.push(merchant_reference);
      await gw.pay(order_id);
    }
    await rx.waitFor((rs) => refs.every((ref) => sentFor(ref)(rs)), 'all 40 notifications');
    await vi.waitFor(
      async () => {
        const pending = await a.store.db
          .selectFrom('outbox')
          .select('event_id')
          .where('delivery_status', '=', 'pending')
          .execute();
        expect(pending).toEqual([]);
      },
      { timeout: 10_000, interval: 50 },
    );
    const counts = new Map<string, number>();
    for (const r of rx.received)
      counts.set(String(r.headers['webhook-id']), (counts.get(String(r.headers['webhook-id'])) ?? 0) + 1);
    expect(counts.size).toBe(40);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    const rows = await a.store.db.selectFrom('outbox').select(['delivery_status', 'attempts']).execute();
    expect(rows.every((r) => r.delivery_status === 'delivered' && Number(r.attempts) === 1)).toBe(true);
  });
});
