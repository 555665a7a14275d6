// Migration 0015 on a database that already holds provider payments, on both engines: every row
// and column is kept, each becomes attempt 1, the flows of the new providers are taken, and the
// uniqueness moves from (order, flow) to (order, flow, attempt).
import { Migrator, type Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import { migrationProvider } from '../../src/store/migrations.js';
import { createMerchant } from '../../src/usecases/administration.js';
import { ENGINES } from '../support/gateway.js';
import { nonceOf, pendingOrder } from '../support/rows.js';
import { unmigratedStore } from '../support/unmigrated.js';

describe.each(ENGINES)('migration 0015 (payment attempts) on %s', (engine) => {
  const opened = unmigratedStore(engine);

  it('keeps every payment as attempt 1 and lets a second attempt of the same flow in', async () => {
    const store = opened();
    const migrator = new Migrator({ db: store.db, provider: migrationProvider(engine) });
    // The table as it is before and after, not as the code's types have it now.
    const raw = store.db as unknown as Kysely<{ channel_payments: Record<string, unknown> }>;
    const before = await migrator.migrateTo('0014_providers_from_the_registry');
    expect(before.error).toBeUndefined();
    const merchant = await createMerchant(store, { name: 'Before 0015', currency: 'NZD' });
    const order = pendingOrder(merchant, { channel: 'poli', payment_method: 'polipay' });
    expect(await store.transactions.insert(order, nonceOf(order)).durable).toEqual({ created: true });
    const row = {
      out_trade_no: `${order.order_id}R`,
      order_id: order.order_id,
      provider: 'poli',
      flow: 'redirect',
      charged_amount: 4550,
      charged_currency: 'NZD',
      payload: 'https://txn.apac.paywithpoli.com/?token=a%2Fb',
      state: 'closed',
      provider_ref: null,
      created_at: 1,
      updated_at: 2,
      next_check_at: 3,
      check_claimed_until: null,
      description: 'Pinot Noir',
      client_ip: '203.0.113.9',
      payer: null,
    };
    await raw.insertInto('channel_payments').values(row).execute();

    const after = await migrator.migrateToLatest();
    expect(after.error).toBeUndefined();
    expect(after.results?.map((r) => r.migrationName)).toContain('0015_payment_attempts');
    const [kept] = await store.transactions.listPayments(order.order_id);
    expect(kept).toEqual({ ...row, attempt: 1 });

    const second = {
      ...row,
      out_trade_no: `${order.order_id}R2`,
      attempt: 2,
      state: 'open' as const,
      payload: null,
      provider_ref: null,
    };
    const added = await store.transactions.addPayment({
      out_trade_no: second.out_trade_no,
      order_id: second.order_id,
      provider: second.provider,
      flow: 'redirect',
      attempt: 2,
      charged_amount: second.charged_amount,
      charged_currency: second.charged_currency,
      description: second.description,
      client_ip: second.client_ip,
      payer: null,
      created_at: 10,
      updated_at: 10,
      next_check_at: 20,
    });
    expect(added).toMatchObject({ out_trade_no: `${order.order_id}R2`, attempt: 2, state: 'open' });
    // The same attempt asked for again is the same row, not a second one.
    const again = await store.transactions.addPayment({ ...added, out_trade_no: `${order.order_id}R2x` });
    expect(again.out_trade_no).toBe(`${order.order_id}R2`);
    expect((await store.transactions.listPayments(order.order_id)).map((p) => p.attempt)).toEqual([1, 2]);

    // The flows kept for UnionPay's form and PayID's transfer are taken; another is not; nor attempt 0.
    for (const flow of ['form', 'transfer'])
      await raw
        .insertInto('channel_payments')
        .values({ ...row, out_trade_no: `${order.order_id}${flow}`, flow, state: 'open' })
        .execute();
    await expect(
      raw
        .insertInto('channel_payments')
        .values({ ...row, out_trade_no: `${order.order_id}X`, flow: 'cheque' })
        .execute(),
    ).rejects.toThrow(/check/i);
    await expect(
      raw
        .insertInto('channel_payments')
        .values({ ...row, out_trade_no: `${order.order_id}Z`, flow: 'jsapi', attempt: 0 })
        .execute(),
    ).rejects.toThrow(/check/i);
  });
});
