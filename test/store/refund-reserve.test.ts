// Reserving refunds in the store, raced directly (no HTTP in between to spread the calls out):
// identical reservations (one dedupe_key) end in exactly one reservation and the others
// 'duplicate', and different ones never take the order's total past its amount.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';
import { until } from '../support/wait.js';

describe.each(ENGINES)('refund reservations raced on %s', (engine) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(engine);
  });
  afterAll(async () => gw?.close());

  async function paidOrder(): Promise<string> {
    const { order_id } = await gw.create({ amount: '120.00' });
    expect((await gw.pay(order_id)).status).toBe('paid');
    return order_id;
  }
  let n = 0;
  const reservation = (order_id: string, refund_amount: number, reference: string) =>
    gw.store.refunds.reserve(
      {
        refund_id: `Rrace${++n}`,
        order_id,
        refund_amount,
        reference,
        dedupe_key: `${order_id}|${refund_amount}|${reference}`,
        created_at: Date.now(),
      },
      { refund_fee: 'none' },
    );

  it('20 identical reservations at once: one reserved, 19 duplicates, the total counted once', async () => {
    // Warm every pooled connection first (PostgreSQL), so the race is not decided by connecting.
    const warm = await paidOrder();
    await Promise.all(Array.from({ length: 20 }, (_, i) => reservation(warm, 1, `warm${i}`)));
    const order_id = await paidOrder();
    const results = await Promise.all(Array.from({ length: 20 }, () => reservation(order_id, 1000, 'same')));
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(results.filter((r) => !r.ok && r.reason === 'duplicate')).toHaveLength(19);
    expect((await gw.store.transactions.find(order_id))!.refunded_amount).toBe(1000);
    expect(await gw.store.refunds.listByOrder(order_id)).toHaveLength(1);
  });

  it.runIf(engine === 'postgres')(
    'identical reservations that all passed the duplicate check wait on the order, then one wins',
    async () => {
      // Every reservation takes its snapshot (no refund yet) and then queues on the order's row lock,
      // held here; once released, the first inserts the refund and the others fail on the unique
      // dedupe_key, which must read as 'duplicate', not as an error.
      const order_id = await paidOrder();
      let release = () => {};
      const released = new Promise<void>((r) => (release = r));
      let locked = () => {};
      const isLocked = new Promise<void>((r) => (locked = r));
      const holder = gw.store.db.connection().execute(async (conn) => {
        await sql`begin`.execute(conn);
        await sql`select 1 from transactions where order_id = ${order_id} for update`.execute(conn);
        locked();
        await released;
        await sql`commit`.execute(conn);
      });
      await isLocked;
      const racing = Promise.all(Array.from({ length: 4 }, () => reservation(order_id, 1500, 'locked')));
      const waiting = async () =>
        Number(
          (
            await sql<{
              n: string;
            }>`select count(*) as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`.execute(
              gw.store.db,
            )
          ).rows[0].n,
        );
      await until('4 reservations waiting for the order row', async () => (await waiting()) >= 4);
      release();
      await holder;
      const results = await racing;
      expect(results.filter((r) => r.ok)).toHaveLength(1);
      expect(results.filter((r) => !r.ok && r.reason === 'duplicate')).toHaveLength(3);
      expect((await gw.store.transactions.find(order_id))!.refunded_amount).toBe(1500);
    },
  );

  it('20 different reservations of 10.00 at once on 120.00: 12 reserved, 8 insufficient', async () => {
    const order_id = await paidOrder();
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => reservation(order_id, 1000, `r${i}`)));
    expect(results.filter((r) => r.ok)).toHaveLength(12);
    expect(results.filter((r) => !r.ok && r.reason === 'insufficient')).toHaveLength(8);
    expect((await gw.store.transactions.find(order_id))!.refunded_amount).toBe(12000);
  });

  it('an order that is not paid: not_paid, nothing written', async () => {
    const { order_id } = await gw.create();
    expect(await reservation(order_id, 100, 'x')).toEqual({ ok: false, reason: 'not_paid' });
    expect(await gw.store.refunds.listByOrder(order_id)).toHaveLength(0);
  });
});
