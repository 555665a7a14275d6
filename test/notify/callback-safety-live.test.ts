// Callback safety at connect time, in live mode, against a receiver on 127.0.0.1 only: refused
// without an allow-list (and retried, with the reason recorded), delivered when allow-listed.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { verifyNotification } from '../../sdk/signing.js';
import { parseCidrList } from '../../src/notify/callback-safety.js';
import { settlePayment } from '../../src/usecases/settle-payment.js';
import { alipayAccount, useAccount } from '../support/channels.js';
import { ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';
import { Receiver } from './receiver.js';

const FAST = { retryScheduleMs: [100], pollIntervalMs: 100 };

describe.each(ENGINES)('callback safety in live mode on %s', (engine) => {
  let rx: Receiver;
  let refusing: TestGateway;
  let allowing: TestGateway;
  beforeAll(async () => {
    rx = await Receiver.start();
    refusing = await startTestGateway(engine, { mode: 'live', notify: FAST });
    allowing = await startTestGateway(engine, {
      mode: 'live',
      notify: { ...FAST, allowCidrs: parseCidrList('127.0.0.1/32') },
    });
    // Live mode serves a method only through a channel account: the hosted create never reaches Alipay.
    for (const gw of [refusing, allowing]) await useAccount(gw, alipayAccount(gw.merchant.wallet_id, undefined));
  });
  afterAll(async () => {
    await refusing?.close();
    await allowing?.close();
    await rx?.close();
  });

  /** Creates and pays (live mode has no sandbox page: the use case settles, as a provider's notification would). */
  async function paidTo(gw: TestGateway, callback_url: string): Promise<string> {
    const { order_id } = await gw.create({ callback_url });
    await settlePayment(gw.ctx, order_id, 'paid');
    return order_id;
  }

  async function attemptsAfter(gw: TestGateway, order_id: string, n: number) {
    return vi.waitFor(
      async () => {
        const [row] = await gw.store.outbox.listByOrder(order_id);
        const attempts = await gw.store.outbox.listAttempts(row.event_id);
        expect(attempts.length).toBeGreaterThanOrEqual(n);
        return { row: (await gw.store.outbox.find(row.event_id))!, attempts };
      },
      { timeout: 10_000, interval: 50 },
    );
  }

  it.each([
    [
      'an IPv4 loopback literal',
      (port: number) => `http://127.0.0.1:${port}/cb`,
      /^callback address 127\.0\.0\.1 is a loopback address \(live mode delivers only to public addresses; an operator can allow it with NOTIFY_ALLOW_CIDRS\)$/,
    ],
    [
      'an IPv6 loopback literal',
      (port: number) => `http://[::1]:${port}/cb`,
      /^callback address ::1 is a loopback address/,
    ],
    [
      'an IPv4-mapped loopback',
      (port: number) => `http://[::ffff:127.0.0.1]:${port}/cb`,
      /^callback address ::ffff:7f00:1 is a loopback address/,
    ],
    [
      'a name resolving to loopback',
      (port: number) => `http://localhost:${port}/cb`,
      /^callback host localhost resolves to (127\.0\.0\.1|::1) is a loopback address/,
    ],
  ])('refuses %s, records why, and keeps retrying', async (_what, url, reason) => {
    const before = rx.received.length;
    const order_id = await paidTo(refusing, url(rx.port));
    const { row, attempts } = await attemptsAfter(refusing, order_id, 2);
    expect(attempts[0]).toMatchObject({ http_status: null, response_excerpt: null });
    expect(attempts[0].error).toMatch(reason);
    expect(row.delivery_status).toBe('pending');
    expect(rx.received.length).toBe(before);
  });

  it('delivers to an allow-listed address', async () => {
    const order_id = await paidTo(allowing, `${rx.url}/allowed`);
    await rx.waitFor(
      (rs) => rs.some((r) => r.path === '/allowed' && r.answered === 'sent'),
      'the allow-listed delivery',
    );
    const r = rx.received.find((x) => x.path === '/allowed')!;
    expect(r.fields.get('order_id')).toBe(order_id);
    expect(verifyNotification(r.fields, allowing.merchant.api_key)).toBe(true);
    const { row } = await attemptsAfter(allowing, order_id, 1);
    await vi.waitFor(
      async () => expect((await allowing.store.outbox.find(row.event_id))?.delivery_status).toBe('delivered'),
      { timeout: 10_000 },
    );
  });

  it('the allow-list is exact: another loopback address stays refused', async () => {
    const order_id = await paidTo(allowing, `http://127.0.0.2:${rx.port}/cb`);
    const { attempts } = await attemptsAfter(allowing, order_id, 1);
    expect(attempts[0].error).toMatch(/^callback address 127\.0\.0\.2 is a loopback address/);
  });
});
