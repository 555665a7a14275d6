// The console's list as the store reads it, on both engines: keyset pages newest first, each order
// once; a filter by method or wallet looks through a window of the scope per page, so a page may be
// short (or empty) and still have a next one, and walking the pages finds every match exactly once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
      const merchant = i === 4 || i === 9 ? { ...gw.merchant, wallet_id: other, api_key: (await gw.store.accounts.findWallet(other))!.api_key } : gw.merchant;
      const { order_id } = await gw.create({ payment_method: method, merchant_reference: uniqueRef('search') }, merchant);
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
