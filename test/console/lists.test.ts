// The console's lists for a day's work, over HTTP on both engines: refunds, the notification log
// (resend one, retry a host's failing ones now), a test notification to a real receiver, the audit
// log's filters and pages, the operator's organisation filter and column, the way back from an
// order to its list, the settlement report per wallet, and the charts' figures. A merchant's user
// sees their organisation's rows only, whatever the filter asks.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMerchant, type MerchantCredentials } from '../../src/cli/admin.js';
import { signNotification } from '../../src/domain/result-fields.js';
import { parseCidrList } from '../../src/notify/callback-safety.js';
import { audit } from '../../src/usecases/console-auth.js';
import { refundBody } from '../support/api.js';
import { consoleUser, type ConsoleClient } from '../support/console-client.js';
import { ENGINES, startTestGateway, uniqueRef, type TestGateway } from '../support/gateway.js';
import { startLocalServer } from '../support/local-server.js';
import { until } from '../support/wait.js';

interface Received {
  path: string;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

describe.each(ENGINES)('console lists on %s', (engine) => {
  let gw: TestGateway;
  let other: MerchantCredentials;
  let rx: { url: string; close: () => Promise<void> };
  const received: Received[] = [];
  let owner: { client: ConsoleClient; console_user_id: string };
  let stranger: { client: ConsoleClient };
  let operator: { client: ConsoleClient; console_user_id: string };
  const cells = (body: string, id: string) => {
    const table = new RegExp(`<table[^>]*id="${id}"[\\s\\S]*?</table>`).exec(body)?.[0] ?? '';
    return [...table.matchAll(/<tr>([\s\S]*?)<\/tr>/g)]
      .slice(1)
      .map((m) => [...m[1].matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((c) => c[1].replace(/<[^>]+>/g, '').trim()));
  };

  beforeAll(async () => {
    rx = await startLocalServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        received.push({ path: req.url ?? '', body, headers: req.headers });
        if (req.url?.startsWith('/good')) res.end('sent');
        else res.writeHead(500).end('database is down');
      });
    });
    gw = await startTestGateway(engine, {
      notify: { retryScheduleMs: [600_000], pollIntervalMs: 100, allowCidrs: parseCidrList('127.0.0.1/32') },
    });
    other = await createMerchant(gw.store, { name: 'Other Shop', currency: 'AUD' });
    await gw.store.accounts.setRate('AUD', 'CNY', 4_700_000, Date.now());
    owner = await consoleUser(gw, 'merchant', 'owner', gw.merchant.organisation_id);
    stranger = await consoleUser(gw, 'merchant', 'owner', other.organisation_id);
    operator = await consoleUser(gw, 'operator', 'admin');
  });
  afterAll(async () => {
    await gw?.close();
    await rx?.close();
  });

  it('lists refunds newest first with their order, filtered by status and organisation; a merchant sees their own only', async () => {
    const mine = await gw.create({ merchant_reference: uniqueRef('refunded'), amount: '50.00' });
    await gw.pay(mine.order_id);
    expect((await gw.post('/v2/refund', refundBody(gw, mine.order_id, '7.50', 'broken cork'))).code).toBe(0);
    const theirs = await gw.create({ merchant_reference: uniqueRef('theirs'), amount: '20.00' }, other);
    await gw.pay(theirs.order_id);
    expect((await gw.post('/v2/refund', refundBody(gw, theirs.order_id, '2.00', 'theirs', other))).code).toBe(0);

    const own = await owner.client.get('/console/refunds');
    expect(own.status).toBe(200);
    const rows = cells(own.body, 'refunds');
    expect(rows.some((r) => r.includes(mine.order_id) && r.includes('broken cork'))).toBe(true);
    expect(own.body).not.toContain(theirs.order_id);
    // Asking for another organisation changes nothing for a merchant's user.
    const forged = await owner.client.get(`/console/refunds?organisation_id=${other.organisation_id}`);
    expect(forged.body).not.toContain(theirs.order_id);
    expect(forged.body).toContain(mine.order_id);

    const all = await operator.client.get('/console/refunds?refund_status=succeeded');
    expect(all.body).toContain(mine.order_id);
    expect(all.body).toContain(theirs.order_id);
    const one = await operator.client.get(`/console/refunds?organisation_id=${other.organisation_id}`);
    expect(one.body).toContain(theirs.order_id);
    expect(one.body).not.toContain(mine.order_id);
    expect(cells(one.body, 'refunds')[0]).toContain(`Other Shop (${other.organisation_id})`);
    expect((await operator.client.get('/console/refunds?refund_status=failed')).body).not.toContain(mine.order_id);
    expect((await operator.client.get('/console/refunds?refund_status=lost')).status).toBe(400);
    expect((await operator.client.get('/console/refunds?from=2026-02-02&to=2026-02-01')).status).toBe(400);
  });

  it('logs every notification with how it fares; one is sent again, and a host back up has its failing ones retried now', async () => {
    const failing = await gw.create({ merchant_reference: uniqueRef('to-bad'), callback_url: `${rx.url}/bad` });
    await gw.pay(failing.order_id);
    const host = new URL(rx.url).host;
    await until(
      'the first attempt failed',
      async () => (await gw.store.outbox.listByOrder(failing.order_id))[0]?.attempts === 1,
    );
    const log = await owner.client.get(
      `/console/notifications?state=failing&callback_host=${encodeURIComponent(host)}`,
    );
    expect(log.status).toBe(200);
    const row = cells(log.body, 'notifications').find((r) => r.includes(failing.order_id));
    expect(row).toBeDefined();
    expect(row).toContain('failing');
    expect(row).toContain('paid');
    expect((await stranger.client.get('/console/notifications')).body).not.toContain(failing.order_id);
    expect((await owner.client.get('/console/notifications?state=delivered')).body).not.toContain(failing.order_id);
    expect((await owner.client.get('/console/notifications?state=sideways')).status).toBe(400);

    // Retry the host now: the next attempt is made at once, not in ten minutes.
    const before = received.length;
    const retried = await owner.client.post('/console/notifications/retry-host', {
      callback_host: host,
      back: `/console/notifications?callback_host=${encodeURIComponent(host)}`,
    });
    expect(retried.status).toBe(303);
    expect(retried.location).toMatch(/notice=retried&count=1$/);
    await until('the retry was made', () => received.length > before);
    // Another organisation's user retries nothing of theirs.
    const none = await stranger.client.post('/console/notifications/retry-host', { callback_host: host });
    expect(none.location).toMatch(/count=0$/);

    // One notification sent again by its event: its own webhook-id.
    const [event] = await gw.store.outbox.listByOrder(failing.order_id);
    const count = received.length;
    expect((await stranger.client.post(`/console/notifications/${event.event_id}/resend`, {})).status).toBe(404);
    const resent = await owner.client.post(`/console/notifications/${event.event_id}/resend`, {});
    expect(resent.location).toBe('/console/notifications?notice=resent');
    await until('the resend was made', () => received.length > count);
    expect(received.at(-1)!.headers['webhook-id']).toBe(event.event_id);
  });

  it('sends a signed test notification to the URL typed and shows what came back', async () => {
    const path = `/console/wallets/${gw.merchant.wallet_id}`;
    await owner.client.get(path);
    const good = await owner.client.post(`${path}/test-notification`, { url: `${rx.url}/good/notify` });
    expect(good.status).toBe(200);
    expect(good.body).toContain('id="test-result"');
    expect(/id="test-status">(\d+)</.exec(good.body)?.[1]).toBe('200');
    expect(/id="test-body">([^<]*)</.exec(good.body)?.[1]).toBe('sent');
    const got = received.at(-1)!;
    expect(got.path).toBe('/good/notify');
    const fields = Object.fromEntries(new URLSearchParams(got.body));
    expect(fields.merchant_reference).toBe('test-notification');
    expect(fields.order_id).toMatch(/^test_/);
    expect(fields.currency).toBe('NZD');
    expect(fields.amount).toBe('1.00');
    const { signature, ...unsigned } = fields;
    expect(signature).toBe(signNotification(unsigned, gw.merchant.api_key));
    // Nothing is stored: no order, no notification.
    expect(await gw.store.transactions.find(fields.order_id)).toBeUndefined();

    const bad = await owner.client.post(`${path}/test-notification`, { url: `${rx.url}/bad` });
    expect(/id="test-status">(\d+)</.exec(bad.body)?.[1]).toBe('500');
    expect(bad.body).toContain('database is down');
    expect((await owner.client.post(`${path}/test-notification`, { url: 'ftp://example.com/x' })).status).toBe(400);
    // Another organisation's wallet: not found, nothing sent.
    const sent = received.length;
    await stranger.client.get('/console');
    expect((await stranger.client.post(`${path}/test-notification`, { url: `${rx.url}/good` })).status).toBe(404);
    expect(received.length).toBe(sent);
  });

  it('filters the audit log by who, what, organisation and day, and its pages keep the filter', async () => {
    for (let i = 0; i < 55; i++)
      await audit(
        gw.ctx,
        { kind: 'cli', name: 'batch' },
        { action: 'rate.set', object: `NZD/CNY ${i}`, organisation_id: other.organisation_id },
      );
    await audit(
      gw.ctx,
      { kind: 'anonymous', ip: '203.0.113.9' },
      { action: 'console.sign_in_failed', object: 'x@example.com' },
    );
    const first = await operator.client.get('/console/audit?action=rate.set&actor=cli%3A');
    expect(first.status).toBe(200);
    const rows = cells(first.body, 'audit');
    expect(rows).toHaveLength(50);
    expect(rows.every((r) => r[2].startsWith('Set an exchange rate'))).toBe(true);
    expect(rows[0][1]).toBe('Command line (batch)');
    const older = /id="older" href="([^"]+)"/.exec(first.body)?.[1]?.replaceAll('&amp;', '&');
    expect(older).toContain('action=rate.set');
    const second = cells((await operator.client.get(older!)).body, 'audit');
    expect(second.length).toBeGreaterThanOrEqual(5);
    expect(second.every((r) => r[2].startsWith('Set an exchange rate'))).toBe(true);

    const anonymous = cells((await operator.client.get('/console/audit?actor=anonymous')).body, 'audit');
    expect(anonymous[0][1]).toBe('Not signed in');
    const byOrg = cells(
      (await operator.client.get(`/console/audit?organisation_id=${other.organisation_id}`)).body,
      'audit',
    );
    expect(byOrg.length).toBeGreaterThan(0);
    expect(byOrg.every((r) => r[2].startsWith('Set an exchange rate'))).toBe(true);
    const mine = cells((await operator.client.get(`/console/audit?actor=${operator.console_user_id}`)).body, 'audit');
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.every((r) => r[1].startsWith('admin-'))).toBe(true);
    const future = await operator.client.get('/console/audit?from=2099-01-01');
    expect(future.body).toContain('id="no-rows"');
    expect((await operator.client.get('/console/audit?actor=%27%20or%201%3D1')).status).toBe(400);
    expect((await owner.client.get('/console/audit')).status).toBe(403);
  });

  it("gives the operator's transactions an organisation column and filter, its wallets, and the order a way back to its list", async () => {
    const theirs = await gw.create({ merchant_reference: uniqueRef('org-filter') }, other);
    const mine = await gw.create({ merchant_reference: uniqueRef('org-mine') });
    const filtered = await operator.client.get(`/console/transactions?organisation_id=${other.organisation_id}`);
    expect(filtered.body).toContain(theirs.order_id);
    expect(filtered.body).not.toContain(mine.order_id);
    expect(cells(filtered.body, 'transactions')[0]).toContain(`Other Shop (${other.organisation_id})`);
    expect(filtered.body).toContain(`<option value="${other.wallet_id}">`);
    // The order's link carries the list; its page links back to it, to its wallet and organisation.
    const link = /href="(\/console\/transactions\/[^"]+\?back=[^"]+)"/
      .exec(filtered.body)?.[1]
      ?.replaceAll('&amp;', '&');
    expect(link).toBeDefined();
    const detail = await operator.client.get(link!);
    expect(/href="([^"]+)" id="back-to-list"/.exec(detail.body)?.[1]).toBe(
      `/console/transactions?organisation_id=${other.organisation_id}`,
    );
    expect(detail.body).toContain(`href="/console/wallets/${other.wallet_id}" id="wallet-link"`);
    expect(detail.body).toContain(`href="/console/organisations/${other.organisation_id}" id="organisation-link"`);
    // A back link is a list's query only: anything else is dropped.
    const odd = await operator.client.get(
      `/console/transactions/${theirs.order_id}?back=${encodeURIComponent('status=paid&next=https://evil.example')}`,
    );
    expect(/href="([^"]+)" id="back-to-list"/.exec(odd.body)?.[1]).toBe('/console/transactions?status=paid');
    // A merchant's user is held to their organisation whatever the filter.
    const forged = await owner.client.get(`/console/transactions?organisation_id=${other.organisation_id}`);
    expect(forged.body).not.toContain(theirs.order_id);
    expect(forged.body).not.toContain('id="organisation_id"');
  });

  it('reports settlement per wallet, and an operator may pick one organisation', async () => {
    const day = new Date().toISOString().slice(0, 10);
    const all = await operator.client.get(`/console/reports/settlement?from=${day}&to=${day}`);
    const totals = cells(all.body, 'settlement-totals');
    expect(totals.some((r) => r[0].startsWith(gw.merchant.wallet_id) && r[1] === 'NZD')).toBe(true);
    expect(totals.some((r) => r[0].startsWith(other.wallet_id) && r[1] === 'AUD')).toBe(true);
    const one = cells(
      (
        await operator.client.get(
          `/console/reports/settlement?from=${day}&to=${day}&organisation_id=${other.organisation_id}`,
        )
      ).body,
      'settlement-totals',
    );
    expect(one.map((r) => r[1])).toEqual(['AUD']);
    const csv = await operator.client.get(`/console/reports/settlement?from=${day}&to=${day}&format=csv`);
    expect(csv.body.split('\n')[0]).toContain('day,wallet_id,currency,payment_method');
    const own = cells(
      (await owner.client.get(`/console/reports/settlement?from=${day}&to=${day}`)).body,
      'settlement-totals',
    );
    expect(own.every((r) => r[0].startsWith(gw.merchant.wallet_id))).toBe(true);
  });

  it("charts the last 30 days: the figures are the day's orders, volume, refunds and success", async () => {
    const c = await gw.newMerchant('AUD');
    const owner2 = await consoleUser(gw, 'merchant', 'owner', c.organisation_id);
    const paid = await gw.create({ merchant_reference: uniqueRef('chart-paid'), amount: '40.00' }, c);
    await gw.pay(paid.order_id);
    const failed = await gw.create({ merchant_reference: uniqueRef('chart-failed'), amount: '9.00' }, c);
    await gw.pay(failed.order_id, 'failed');
    await gw.create({ merchant_reference: uniqueRef('chart-pending'), amount: '1.00' }, c);
    expect((await gw.post('/v2/refund', refundBody(gw, paid.order_id, '4.00', 'r', c))).code).toBe(0);
    const page = await owner2.client.get('/console/charts');
    expect(page.status).toBe(200);
    const text = (id: string) => new RegExp(`id="${id}">([^<]*)<`).exec(page.body)?.[1];
    expect(text('total-volume')).toBe('A$40.00');
    expect(text('total-refunds')).toBe('A$4.00');
    expect(text('total-net')).toBe('A$36.00');
    expect(text('total-orders')).toBe('3');
    expect(text('total-rate')).toBe('50.0%');
    expect(page.body.match(/<svg /g)).toHaveLength(3);
    const days = cells(page.body, 'chart-figures');
    expect(days).toHaveLength(30);
    expect(days.at(-1)).toEqual([new Date().toISOString().slice(0, 10), 'A$40.00', 'A$4.00', '3', '50.0%']);
    expect((await owner2.client.get('/console/charts?payment_method=cash')).status).toBe(400);
  });
});
