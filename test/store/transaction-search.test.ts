// The console's list as the store reads it, on both engines: keyset pages newest first, each order
// once; a filter by method or wallet looks through a window of the scope per page, so a page may be
// short (or empty) and still have a next one, and walking the pages finds every match exactly once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMerchant } from '../../src/cli/admin.js';
import { addWallet } from '../support/api.js';
import { ENGINES, startTestGateway, uniqueRef, type TestGateway } from '../support/gateway.js';
import type { TransactionSearch } from '../../src/ports/transactions.js';

describe.each(ENGINES)('transaction search on %s', (engine) => {
  let gw: TestGateway;
  const alipay: string[] = [];
  let other = '';
  const inOther: string[] = [];
  beforeAll(async () => {
    gw = await startTestGateway(engine);
    other = (await addWallet(gw, 'NZD')).wallet_id;
    // 12 orders, newest last: every third by alipay; two in the other wallet.
    for (let i = 0; i < 12; i++) {
      const method = i % 3 === 0 ? 'alipay' : 'wechat';
      const merchant =
        i === 4 || i === 9
          ? { ...gw.merchant, wallet_id: other, api_key: (await gw.store.accounts.findWallet(other))!.api_key }
          : gw.merchant;
      const { order_id } = await gw.create(
        { payment_method: method, merchant_reference: uniqueRef('search') },
        merchant,
      );
      if (method === 'alipay') alipay.push(order_id);
      if (merchant !== gw.merchant) inOther.push(order_id);
      await new Promise((r) => setTimeout(r, 2));
    }
  });
  afterAll(async () => gw?.close());

  /** Every page of a search: the rows of each page, in order. */
  async function walk(f: Omit<TransactionSearch, 'after'>): Promise<string[][]> {
    const pages: string[][] = [];
    let after: TransactionSearch['after'];
    for (let i = 0; i < 50; i++) {
      const { rows, next } = await gw.store.transactions.search({ ...f, ...(after && { after }) });
      pages.push(rows.map((t) => t.order_id));
      if (!next) return pages;
      after = next;
    }
    throw new Error('no end');
  }

  it('pages newest first by keyset, each order once', async () => {
    const all = (await walk({ limit: 1000 })).flat();
    expect(all).toHaveLength(12);
    const byFive = await walk({ limit: 5 });
    expect(byFive.flat()).toEqual(all);
    expect(byFive.map((p) => p.length)).toEqual([5, 5, 2]);
  });

  it('a method filter looks through a window per page: short pages that go on, every match once', async () => {
    const pages = await walk({ payment_method: 'alipay', limit: 5, window: 3 });
    expect(pages.flat()).toEqual([...alipay].reverse());
    // A window of 3 holds at most one alipay order of these: pages are short, some empty, and go on.
    expect(Math.max(...pages.map((p) => p.length))).toBeLessThanOrEqual(2);
    expect(pages.length).toBeGreaterThanOrEqual(4);
    // A wide window finds them all on one page.
    expect(await walk({ payment_method: 'alipay', limit: 50, window: 20_000 })).toEqual([[...alipay].reverse()]);
  });

  it('a wallet filter too', async () => {
    expect((await walk({ wallet_id: other, limit: 1, window: 4 })).flat()).toEqual([...inOther].reverse());
  });
});

describe.each(ENGINES)("finding an order by its payment's ids at the provider on %s", (engine) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(engine);
  });
  afterAll(async () => gw?.close());

  it("out_trade_no or the provider's own id finds the order, within the organisation only", async () => {
    const { order_id } = await gw.create({ merchant_reference: uniqueRef('by-provider') });
    await gw.create({ merchant_reference: uniqueRef('unrelated') });
    const now = Date.now();
    await gw.store.db
      .insertInto('channel_payments')
      .values({
        out_trade_no: `${order_id}R`,
        order_id,
        provider: 'alipay',
        flow: 'redirect',
        attempt: 1,
        charged_amount: 55732,
        charged_currency: 'CNY',
        payload: null,
        state: 'paid',
        provider_ref: '2026112522001400001234567890',
        created_at: now,
        updated_at: now,
        next_check_at: now,
        check_claimed_until: null,
      })
      .execute();
    const organisation_id = (await gw.store.accounts.findUser(gw.merchant.user_id))!.organisation_id;
    const find = async (text: string, scope: { organisation_id?: number } = {}) =>
      (await gw.store.transactions.search({ text, limit: 50, ...scope })).rows.map((t) => t.order_id);
    expect(await find('2026112522001400001234567890')).toEqual([order_id]);
    expect(await find(`${order_id}R`, { organisation_id })).toEqual([order_id]);
    // The order's own id still finds it once, not once per way.
    expect(await find(order_id)).toEqual([order_id]);
    // Exactly: a prefix is no match; and another organisation's user finds nothing.
    expect(await find('20261125220014')).toEqual([]);
    const elsewhere = await createMerchant(gw.store, { name: 'Elsewhere', currency: 'NZD' });
    expect(await find('2026112522001400001234567890', { organisation_id: elsewhere.organisation_id })).toEqual([]);
  });
});
