// Races between two gateway instances on one PostgreSQL database: each request is correct on its
// own, and the database keeps them correct together.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signRequest } from '../../sdk/signing.js';
import { uniqueRef, type TestGateway } from '../support/gateway.js';
import { pgQuery, startPair, type GatewayPair } from './pair.js';

let pair: GatewayPair;
let both: TestGateway[];
beforeAll(async () => {
  pair = await startPair();
  both = [pair.a, pair.b];
});
afterAll(async () => pair?.close());

const merchant = () => pair.a.merchant;
const signed = (body: Record<string, string>) => ({ ...body, signature: signRequest(body, merchant().api_key) });

function refund(gw: TestGateway, order_id: string, refund_amount: string, reference: string) {
  return gw.post('/refund', signed({ user_id: merchant().user_id, order_id, refund_amount, reference }));
}
function cancel(gw: TestGateway, merchant_reference: string) {
  return gw.post('/cancel', signed({ user_id: merchant().user_id, merchant_reference }));
}
/** Answers of the gateway's own making: code 0 or a documented refusal, never the generic code 1 of an unexpected error. */
function expectClean(replies: any[], allowed: number[]) {
  for (const r of replies) expect(allowed, JSON.stringify(r)).toContain(r.code);
}

describe('unique merchant_reference per merchant', () => {
  it('concurrent creates of one reference through both instances make exactly one order', async () => {
    for (let round = 0; round < 5; round++) {
      const body = pair.a.createBody({ merchant_reference: uniqueRef('dup') }, merchant());
      const replies = await Promise.all(
        Array.from({ length: 16 }, (_, i) => both[i % 2].post('/v2/transaction', body)),
      );
      expectClean(replies, [0]);
      const rows = await pgQuery(
        pair.database,
        'select order_id, status from transactions where user_id = $1 and merchant_reference = $2',
        [merchant().user_id, body.merchant_reference],
      );
      expect(rows).toHaveLength(1);
      // Each create handed out its own nonce; exactly one of them (the latest) is still usable:
      // the renewals expired the others (none was used).
      const nonces = await pgQuery(
        pair.database,
        'select count(*)::int as n, count(*) filter (where used_at is null and expires_at > $2)::int as usable, count(*) filter (where used_at is not null)::int as used from nonces where order_id = $1',
        [rows[0].order_id, Date.now()],
      );
      expect(nonces[0]).toEqual({ n: 16, usable: 1, used: 0 });
    }
  });

  it('concurrent creates of one reference with different amounts: one order, the others refused with code 3', async () => {
    const merchant_reference = uniqueRef('dup-amount');
    const replies = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        both[i % 2].post(
          '/v2/transaction',
          pair.a.createBody({ merchant_reference, amount: `${10 + i}.00` }, merchant()),
        ),
      ),
    );
    expectClean(replies, [0, 3]);
    const rows = await pgQuery(
      pair.database,
      'select amount from transactions where user_id = $1 and merchant_reference = $2',
      [merchant().user_id, merchant_reference],
    );
    expect(rows).toHaveLength(1);
    const winners = replies.filter((r) => r.code === 0);
    expect(winners).toHaveLength(1);
  });

  it('a create racing the payment of the same reference answers 0 or 900, never an error', async () => {
    for (let round = 0; round < 5; round++) {
      const { merchant_reference, order_id } = await pair.a.create({}, merchant());
      const body = pair.a.createBody({ merchant_reference }, merchant());
      const [paid, ...creates] = await Promise.all([
        pair.b.pay(order_id),
        ...Array.from({ length: 6 }, (_, i) => both[i % 2].post('/v2/transaction', body)),
      ]);
      expect(paid).toMatchObject({ code: 0, status: 'paid' });
      expectClean(creates, [0, 900]);
    }
  });
});

describe('refund totals', () => {
  it('concurrent refunds through both instances never exceed the amount', async () => {
    for (const [amount, each, count] of [
      ['120.00', '10.00', 30],
      ['1.00', '0.07', 24],
      ['50.00', '17.00', 12],
    ] as const) {
      const { order_id } = await pair.a.create({ amount }, merchant());
      await pair.b.pay(order_id);
      const replies = await Promise.all(
        Array.from({ length: count }, (_, i) => refund(both[i % 2], order_id, each, `r${i}`)),
      );
      expectClean(replies, [0, 550]);
      const minor = (s: string) => Math.round(Number(s) * 100);
      const fits = Math.min(count, Math.floor(minor(amount) / minor(each)));
      expect(replies.filter((r) => r.code === 0)).toHaveLength(fits);

      const [sum] = await pgQuery(
        pair.database,
        "select coalesce(sum(refund_amount), 0)::int as total, count(*)::int as n from refunds where order_id = $1 and refund_status <> 'failed'",
        [order_id],
      );
      const [tx] = await pgQuery(
        pair.database,
        'select amount, refunded_amount from transactions where order_id = $1',
        [order_id],
      );
      expect(sum).toEqual({ total: fits * minor(each), n: fits });
      expect(sum.total).toBeLessThanOrEqual(tx.amount);
      expect(tx.refunded_amount).toBe(sum.total);
    }
  });

  it('the same refund sent to both instances at once is made once (562 for the rest)', async () => {
    const { order_id } = await pair.a.create({}, merchant());
    await pair.a.pay(order_id);
    const replies = await Promise.all(
      Array.from({ length: 10 }, (_, i) => refund(both[i % 2], order_id, '5.00', 'same')),
    );
    expectClean(replies, [0, 562]);
    expect(replies.filter((r) => r.code === 0)).toHaveLength(1);
    const rows = await pgQuery(pair.database, 'select refund_amount from refunds where order_id = $1', [order_id]);
    expect(rows).toEqual([{ refund_amount: 500 }]);
  });

  it('the same refund of the whole amount sent twice at once: one refund, the other refused (562, or 550 as nothing is left)', async () => {
    for (let round = 0; round < 5; round++) {
      const { order_id } = await pair.a.create({ amount: '10.00' }, merchant());
      await pair.a.pay(order_id);
      const replies = await Promise.all([
        refund(pair.a, order_id, '10.00', 'all'),
        refund(pair.b, order_id, '10.00', 'all'),
      ]);
      expectClean(replies, [0, 550, 562]);
      expect(replies.filter((r) => r.code === 0)).toHaveLength(1);
      const rows = await pgQuery(pair.database, 'select refund_amount from refunds where order_id = $1', [order_id]);
      expect(rows).toEqual([{ refund_amount: 1000 }]);
    }
  });

  it('refunds racing the payment itself: only after it is paid, and within the amount', async () => {
    const { order_id } = await pair.a.create({ amount: '30.00' }, merchant());
    const [paid, ...replies] = await Promise.all([
      pair.b.pay(order_id),
      ...Array.from({ length: 8 }, (_, i) => refund(both[i % 2], order_id, '10.00', `p${i}`)),
    ]);
    expect(paid).toMatchObject({ code: 0, status: 'paid' });
    expectClean(replies, [0, 556, 550]);
    const [tx] = await pgQuery(pair.database, 'select amount, refunded_amount from transactions where order_id = $1', [
      order_id,
    ]);
    expect(tx.refunded_amount).toBe(replies.filter((r) => r.code === 0).length * 1000);
    expect(tx.refunded_amount).toBeLessThanOrEqual(tx.amount);
  });
});

describe('cancel versus pay of one order', () => {
  it('ends in exactly one final state with exactly one notification, 20 times over', async () => {
    const outcomes = new Map<string, number>();
    for (let round = 0; round < 20; round++) {
      const { merchant_reference, order_id } = await pair.a.create(
        { host_type: round % 2 ? '1' : undefined },
        merchant(),
      );
      const [payVia, cancelVia] = round % 2 ? [pair.a, pair.b] : [pair.b, pair.a];
      const [canceled, paid, canceledAgain] = await Promise.all([
        cancel(cancelVia, merchant_reference),
        payVia.pay(order_id),
        cancel(payVia, merchant_reference),
      ]);

      const [tx] = await pgQuery(pair.database, 'select status, status_seq from transactions where order_id = $1', [
        order_id,
      ]);
      const outbox = await pgQuery(pair.database, 'select seq, payload from outbox where order_id = $1', [order_id]);
      expect(['paid', 'canceled']).toContain(tx.status);
      expect(tx.status_seq).toBe(1);
      expect(outbox).toHaveLength(1);
      expect(JSON.parse(outbox[0].payload).status ?? tx.status).toBeDefined();
      outcomes.set(tx.status, (outcomes.get(tx.status) ?? 0) + 1);

      // Every answer agrees with the state that won.
      for (const c of [canceled, canceledAgain]) expect(c.code, JSON.stringify(c)).toBe(tx.status === 'paid' ? 900 : 0);
      if (tx.status === 'paid') expect(paid).toMatchObject({ code: 0, status: 'paid' });
      else expect([0, 901], JSON.stringify(paid)).toContain(paid.code);
      if (paid.code === 0) expect(paid.status).toBe(tx.status);
    }
    console.log('cancel vs pay outcomes:', Object.fromEntries(outcomes));
  });

  it('concurrent cancels of an order the customer has opened all fail with code 1 and lock it', async () => {
    const { merchant_reference, order_id } = await pair.a.create({ host_type: '1' }, merchant());
    await fetch(`${pair.b.url}/sandbox/pay/${order_id}`); // the customer opens the payment: the channel cannot close it
    const replies = await Promise.all(Array.from({ length: 6 }, (_, i) => cancel(both[i % 2], merchant_reference)));
    expectClean(replies, [1]);
    const [tx] = await pgQuery(
      pair.database,
      'select status, cancel_locked_until from transactions where order_id = $1',
      [order_id],
    );
    expect(tx.status).toBe('pending');
    expect(tx.cancel_locked_until).toBeGreaterThan(Date.now());
    expect((await cancel(pair.b, merchant_reference)).code).toBe(1);
    expect(await pair.a.pay(order_id)).toMatchObject({ code: 0, status: 'paid' });
  });
});
