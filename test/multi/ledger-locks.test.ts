// Payments and refunds of one wallet at the same moment, through two instances: each unit takes
// its row locks in one order (the wallet's balances, then their days), so none deadlocks. Before,
// PostgreSQL's settle statement took the days first and a refund took the balances first: some
// requests failed with "deadlock detected" as an internal error.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refundBody } from '../support/api.js';
import { startPair, type GatewayPair } from './pair.js';

let pair: GatewayPair;
beforeAll(async () => {
  pair = await startPair();
});
afterAll(async () => pair?.close());

describe('one wallet paid and refunded at once on two instances', () => {
  it('answers every pay and every refund (no deadlock)', async () => {
    const { a, b } = pair;
    const paid = await Promise.all(Array.from({ length: 30 }, () => a.create({ amount: '40.00' }, a.merchant)));
    for (const o of paid) expect((await a.pay(o.order_id)).status).toBe('paid');
    const fresh = await Promise.all(Array.from({ length: 30 }, () => b.create({ amount: '40.00' }, a.merchant)));
    const answers = await Promise.all([
      ...paid.map((o, i) =>
        (i % 2 ? a : b).post('/refund', refundBody(a, o.order_id, '15.00', `locks ${o.order_id}`, a.merchant)),
      ),
      ...fresh.map((o, i) => (i % 2 ? b : a).pay(o.order_id)),
    ]);
    expect(answers.filter((r) => r.code !== 0).map((r) => JSON.stringify(r))).toEqual([]);
  });
});
