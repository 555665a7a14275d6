// The console's CSV export and settlement report, on both engines: only the user's organisation,
// the list's filter, refunds after their order, every batch exactly once, cells a spreadsheet
// would run defused; the report's gross, refunds and net per day, currency and method.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMerchant, type MerchantCredentials } from '../../src/cli/admin.js';
import { exportCsv } from '../../src/usecases/console-reports.js';
import { refundBody } from '../support/api.js';
import { consoleUser } from '../support/console-client.js';
import { ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';

/** A minimal RFC 4180 reader (quoted cells with commas, quotes and line breaks). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(cell);
      cell = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i++;
    } else cell += c;
  }
  return rows;
}

/** The CSV's text, after checking it starts with UTF-8's byte-order mark (spreadsheets need it to read Chinese). */
async function csvText(res: Response): Promise<string> {
  const bytes = Buffer.from(await res.arrayBuffer());
  expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
  return bytes.subarray(3).toString('utf8');
}

describe.each(ENGINES)('console export and settlement on %s', (engine) => {
  let gw: TestGateway;
  let shop: MerchantCredentials;
  let other: MerchantCredentials;
  const paid: string[] = [];
  beforeAll(async () => {
    gw = await startTestGateway(engine);
    shop = await createMerchant(gw.store, { name: 'Harbour Tea', currency: 'NZD' });
    other = await createMerchant(gw.store, { name: 'Elsewhere Ltd', currency: 'NZD' });
    for (const [amount, product_name] of [
      ['10.00', '=HYPERLINK("http://evil.example")'],
      ['20.50', '普洱茶, 357 g'],
      ['5.25', 'Green tea'],
    ] as const) {
      const { order_id } = await gw.create({ amount, product_name, payment_method: 'alipay' }, shop);
      await gw.pay(order_id);
      paid.push(order_id);
    }
    await gw.create({ amount: '7.00', payment_method: 'wechat' }, shop);
    expect(await gw.post('/refund', refundBody(gw, paid[1], '3.50', 'broken seal', shop))).toMatchObject({ code: 0 });
    await gw.pay((await gw.create({ amount: '99.00' }, other)).order_id);
  });
  afterAll(async () => gw?.close());

  it("exports the organisation's orders with their refunds, filtered as the list is", async () => {
    const { client } = await consoleUser(gw, 'merchant', 'staff', shop.organisation_id);
    const res = await fetch(`${gw.url}/console/transactions/export.csv`, {
      headers: { cookie: client.cookieHeader() },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toMatch(
      /^attachment; filename="transactions-\d{4}-\d{2}-\d{2}\.csv"$/,
    );
    const text = await csvText(res);
    expect(text.startsWith('record_type,order_id,merchant_reference,')).toBe(true);
    const rows = parseCsv(text);
    const header = rows[0];
    const col = (r: string[], name: string) => r[header.indexOf(name)];
    const body = rows.slice(1);
    expect(body.filter((r) => r[0] === 'transaction')).toHaveLength(4);
    expect(body.some((r) => col(r, 'user_id') === other.user_id)).toBe(false);
    const refund = body.find((r) => r[0] === 'refund')!;
    expect(col(refund, 'order_id')).toBe(paid[1]);
    expect(col(refund, 'refund_amount')).toBe('3.50');
    expect(col(refund, 'refund_reference')).toBe('broken seal');
    // The refund follows its order.
    expect(body.findIndex((r) => r[0] === 'transaction' && col(r, 'order_id') === paid[1])).toBe(
      body.indexOf(refund) - 1,
    );
    expect(body.map((r) => col(r, 'product_name'))).toEqual(
      expect.arrayContaining(['\'=HYPERLINK("http://evil.example")', '普洱茶, 357 g']),
    );
    expect(
      body
        .find((r) => col(r, 'order_id') === paid[1] && r[0] === 'transaction')!
        .slice(header.indexOf('amount'), header.indexOf('amount') + 2),
    ).toEqual(['20.50', '3.50']);

    const filtered = await fetch(`${gw.url}/console/transactions/export.csv?status=paid&payment_method=alipay`, {
      headers: { cookie: client.cookieHeader() },
    });
    const paidRows = parseCsv(await csvText(filtered))
      .slice(1)
      .filter((r) => r[0] === 'transaction');
    expect(paidRows.map((r) => col(r, 'order_id')).sort()).toEqual([...paid].sort());
    const bad = await fetch(`${gw.url}/console/transactions/export.csv?status=lost`, {
      headers: { cookie: client.cookieHeader() },
    });
    expect(bad.status).toBe(400);
    expect(
      (await gw.store.console.listAudit({ organisation_id: shop.organisation_id, limit: 5 })).map((e) => e.action),
    ).toContain('transactions.export');
    // Not signed in: nothing.
    expect((await fetch(`${gw.url}/console/transactions/export.csv`, { redirect: 'manual' })).status).toBe(303);
  });

  it('reads batch after batch by keyset, each order exactly once', async () => {
    const { client: _c, console_user_id } = await consoleUser(gw, 'operator', 'support');
    const user = (await gw.store.console.findUser(console_user_id))!;
    let text = '';
    for await (const chunk of exportCsv(gw.ctx, user, {}, 2)) text += chunk;
    const ids = parseCsv(text.slice(1))
      .slice(1)
      .filter((r) => r[0] === 'transaction')
      .map((r) => r[1]);
    expect(ids.length).toBeGreaterThanOrEqual(5);
    expect(new Set(ids).size).toBe(ids.length);
    const all = await gw.store.transactions.search({ limit: 1000 });
    expect(ids).toEqual(all.rows.map((o) => o.order_id));
  });

  it('the settlement report: gross, refunds and net by day, wallet, currency and method; as CSV too', async () => {
    const { client } = await consoleUser(gw, 'merchant', 'owner', shop.organisation_id);
    const day = new Date().toISOString().slice(0, 10);
    const page = await client.get(`/console/reports/settlement?from=${day}&to=${day}`);
    expect(page.status).toBe(200);
    expect(page.body).toContain('id="settlement"');
    const csv = await fetch(`${gw.url}/console/reports/settlement?from=${day}&to=${day}&format=csv`, {
      headers: { cookie: client.cookieHeader() },
    });
    const rows = parseCsv(await csvText(csv));
    expect(rows).toEqual([
      ['day', 'wallet_id', 'currency', 'payment_method', 'count', 'gross', 'refund_count', 'refunds', 'net'],
      [day, shop.wallet_id, 'NZD', 'alipay', '3', '35.75', '1', '3.50', '32.25'],
    ]);
    // The day before: nothing.
    const before = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    expect((await client.get(`/console/reports/settlement?from=${before}&to=${before}`)).body).toContain(
      'id="no-rows"',
    );
    expect((await client.get(`/console/reports/settlement?from=${day}&to=${before}`)).status).toBe(400);
    expect((await client.get('/console/reports/settlement?from=2026-02-30')).status).toBe(400);
  });
});
