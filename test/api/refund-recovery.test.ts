// A refund reserved but never confirmed, because the gateway stopped between reserving the amount
// and recording the channel's answer, is settled later by asking the channel again with the same
// refund_id (its idempotency key).
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway } from '../../src/server.js';
import { resumePendingRefunds, startRefundRecovery } from '../../src/usecases/resume-refunds.js';
import type { Connector, RefundOutcome } from '../../src/ports/connector.js';
import { refundBody } from '../support/api.js';
import { databaseFor, ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';
import { until } from '../support/wait.js';

const silent = pino({ level: 'silent' });
const MINUTE = 60_000;

describe.each(ENGINES)('refunds left pending on %s', (engine) => {
  let gw: TestGateway;
  let cleanup = () => {};
  let database = '';
  beforeAll(async () => {
    const db = await databaseFor(engine);
    cleanup = db.cleanup;
    database = db.database;
    gw = await startTestGateway(engine, { database: db.database });
  });
  afterAll(async () => {
    await gw?.close();
    cleanup();
  });

  async function paidOrder(): Promise<string> {
    const { order_id } = await gw.create({ amount: '120.00' });
    expect((await gw.pay(order_id)).status).toBe('paid');
    return order_id;
  }
  /** What a refund request does before it asks the channel, as of `ageMs` ago. */
  async function reserved(order_id: string, refund_amount: number, reference: string, ageMs: number): Promise<string> {
    const refund_id = `R${randomBytes(10).toString('hex')}`;
    const reservation = await gw.store.refunds.reserve(
      {
        refund_id,
        order_id,
        refund_amount,
        reference,
        dedupe_key: `${order_id}|${refund_amount}|${reference}`,
        created_at: Date.now() - ageMs,
      },
      { refund_fee: 'none' },
    );
    expect(reservation).toEqual({ ok: true });
    return refund_id;
  }
  const statusOf = async (order_id: string, refund_id: string) =>
    (await gw.store.refunds.listByOrder(order_id)).find((r) => r.refund_id === refund_id)?.refund_status;
  const refunded = async (order_id: string) => (await gw.store.transactions.find(order_id))!.refunded_amount;
  const sandbox = (order_id: string, answer: string) =>
    fetch(`${gw.url}/sandbox/refunds/${order_id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `answer=${answer}`,
    }).then((r) => r.json());

  it('one older than the grace period is confirmed when the channel made it; a recent one is left to its request', async () => {
    const order_id = await paidOrder();
    const old = await reserved(order_id, 2000, 'old', 2 * MINUTE);
    const recent = await reserved(order_id, 500, 'recent', 0);
    expect(await resumePendingRefunds(gw.ctx, silent, MINUTE)).toBeGreaterThanOrEqual(1);
    expect(await statusOf(order_id, old)).toBe('succeeded');
    expect(await statusOf(order_id, recent)).toBe('pending');
    expect(await refunded(order_id)).toBe(2500);
    // The merchant retrying the settled refund is told it was done.
    expect(await gw.post('/refund', refundBody(gw, order_id, '20.00', 'old'))).toMatchObject({ code: 562 });
  });

  it('one the channel refuses is failed and its amount released, so the merchant can make it again', async () => {
    const order_id = await paidOrder();
    const left = await reserved(order_id, 3000, 'again', 5 * MINUTE);
    expect(await sandbox(order_id, 'refuse')).toMatchObject({ code: 0 });
    await resumePendingRefunds(gw.ctx, silent, MINUTE);
    expect(await statusOf(order_id, left)).toBe('failed');
    expect(await refunded(order_id)).toBe(0);
    expect(await sandbox(order_id, 'accept')).toMatchObject({ code: 0 });
    expect(await gw.post('/refund', refundBody(gw, order_id, '30.00', 'again'))).toMatchObject({ code: 0 });
    expect(await refunded(order_id)).toBe(3000);
  });

  it('starts no second round while one still waits for the channel', async () => {
    const order_id = await paidOrder();
    const left = await reserved(order_id, 700, 'slow', 2 * MINUTE);
    let asked = 0;
    let answer = (_: RefundOutcome) => {};
    const sandbox = Object.create(gw.ctx.connectors.sandbox) as Connector;
    sandbox.queryRefund = () => {
      asked++;
      return new Promise<RefundOutcome>((resolve) => (answer = resolve));
    };
    // A round every 5 ms, and a provider that does not answer until told to.
    const stop = startRefundRecovery({ ...gw.ctx, connectors: { ...gw.ctx.connectors, sandbox } }, silent, MINUTE, 5);
    await new Promise((r) => setTimeout(r, 100));
    expect(asked).toBe(1);
    answer({ kind: 'succeeded' });
    await stop();
    expect(await statusOf(order_id, left)).toBe('succeeded');
  });

  it.runIf(engine === 'sqlite')(
    'a restarted gateway settles at once every refund left pending (it owns the database)',
    async () => {
      const order_id = await paidOrder();
      const left = await reserved(order_id, 1000, 'crash', 0);
      await gw.close();
      gw = undefined as unknown as TestGateway;
      const again = await startGateway({
        port: 0,
        host: '127.0.0.1',
        logLevel: 'silent',
        notify: { enabled: false },
        database,
      });
      try {
        await until(
          'the refund left pending to be settled',
          async () =>
            (await again.store.refunds.listByOrder(order_id)).find((r) => r.refund_id === left)?.refund_status ===
            'succeeded',
        );
        expect((await again.store.transactions.find(order_id))!.refunded_amount).toBe(1000);
      } finally {
        await again.close();
      }
    },
  );
});
