// The console on a phone (390 px) and a desktop, in English and Chinese: lists are cards whose
// amount and status are on the screen, the header is short, the dashboard's rates are whole; the
// transaction page speaks Chinese (field names, methods), the audit log its actions; the new pages
// (charts, refunds, notifications) render in both languages. Screenshots for docs/console.md.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { createMerchant } from '../../src/cli/admin.js';
import { audit } from '../../src/usecases/console-auth.js';
import { refundBody } from '../support/api.js';
import { consoleUser, type ConsoleClient } from '../support/console-client.js';
import { startTestGateway, uniqueRef, type TestGateway } from '../support/gateway.js';
import { DESKTOP, MOBILE, launchBrowser, screenshotPath, signedInContext } from './support.js';

let gw: TestGateway;
let browser: Browser;
let owner: ConsoleClient;
let operator: ConsoleClient;
const orders: string[] = [];

beforeAll(async () => {
  [gw, browser] = await Promise.all([startTestGateway('sqlite'), launchBrowser()]);
  const other = await createMerchant(gw.store, { name: 'Queenstown Cellars', currency: 'NZD' });
  for (let i = 0; i < 6; i++) {
    const o = await gw.create({
      merchant_reference: uniqueRef(`phone-${i}`),
      amount: `${1200 + i}.50`,
      payment_method: i % 2 ? 'wechat' : 'alipay',
    });
    if (i < 4) await gw.pay(o.order_id, i === 3 ? 'failed' : 'paid');
    orders.push(o.order_id);
  }
  expect((await gw.post('/v2/refund', refundBody(gw, orders[0], '50.00', 'one bottle broken'))).code).toBe(0);
  const theirs = await gw.create({ merchant_reference: uniqueRef('theirs') }, other);
  await gw.pay(theirs.order_id);
  await audit(
    gw.ctx,
    { kind: 'anonymous', ip: '203.0.113.7' },
    { action: 'console.sign_in_failed', object: 'who@example.com' },
  );
  owner = (await consoleUser(gw, 'merchant', 'owner', gw.merchant.organisation_id, 'owner@otago.example')).client;
  operator = (await consoleUser(gw, 'operator', 'admin', null, 'ops@gateway.example')).client;
});
afterAll(async () => {
  await browser?.close();
  await gw?.close();
});

/** Nothing wider than the screen: no sideways scrolling of the page. */
const fitsScreen = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);

/** The element's box lies within the viewport's width and it is shown. */
async function onScreen(page: Page, selector: string): Promise<boolean> {
  const box = await page.locator(selector).first().boundingBox();
  const width = page.viewportSize()!.width;
  return box !== null && box.width > 0 && box.x >= 0 && box.x + box.width <= width + 0.5;
}

describe('the console for a day, at phone and desktop widths', () => {
  it('on a phone: transactions are cards with amount and status on the screen; the header is short; rates are whole', async () => {
    const context = await signedInContext(browser, { ...MOBILE, locale: 'en-GB' }, gw.url, owner.cookieHeader());
    const page = await context.newPage();
    await page.goto(`${gw.url}/console/transactions`);
    expect(await fitsScreen(page)).toBe(true);
    const header = await page.locator('header.top').boundingBox();
    expect(header!.height).toBeLessThan(140);
    expect(await onScreen(page, '#transactions tbody tr:first-child td[data-label="Amount"]')).toBe(true);
    expect(await onScreen(page, '#transactions tbody tr:first-child td[data-label="Status"]')).toBe(true);
    expect(await page.textContent('#transactions tbody')).toContain('NZ$1,205.50');
    // The cell shows its column's label before the value.
    const label = await page.evaluate(() => {
      const td = document.querySelector('#transactions tbody td[data-label="Amount"]')!;
      return getComputedStyle(td, '::before').content;
    });
    expect(label).toBe('"Amount"');
    await page.screenshot({ path: screenshotPath('console-transactions-mobile'), fullPage: true });

    await page.goto(`${gw.url}/console`);
    expect(await fitsScreen(page)).toBe(true);
    const rate = page.locator('td[data-label="Success rate"]').first();
    expect(await rate.textContent()).toMatch(/^\d+\.\d%$/);
    expect(await onScreen(page, 'td[data-label="Success rate"]')).toBe(true);
    await page.screenshot({ path: screenshotPath('console-dashboard-mobile'), fullPage: true });

    await page.goto(`${gw.url}/console/charts`);
    expect(await fitsScreen(page)).toBe(true);
    expect(await page.locator('#chart-volume rect').count()).toBeGreaterThan(0);
    await page.screenshot({ path: screenshotPath('console-charts-mobile'), fullPage: true });
    await context.close();
  });

  it('in Chinese: the transaction page names its fields and method in words; lists and charts speak Chinese', async () => {
    const context = await signedInContext(
      browser,
      { ...MOBILE, locale: 'zh-CN' },
      gw.url,
      `${owner.cookieHeader()}; gw_lang=zh`,
    );
    const page = await context.newPage();
    await page.goto(`${gw.url}/console/transactions/${orders[0]}`);
    const labels = await page.locator('#fields dt').allTextContents();
    for (const word of ['商户订单号', '人民币金额', '人民币汇率', '收银方式', '商品名称', '通知地址', '最终状态时间'])
      expect(
        labels.some((l) => l.startsWith(word)),
        word,
      ).toBe(true);
    // No label is only an API field name.
    expect(labels.filter((l) => /^[a-z_]+$/.test(l))).toEqual([]);
    expect(await page.textContent('#fields')).toContain('支付宝');
    expect(await fitsScreen(page)).toBe(true);
    await page.screenshot({ path: screenshotPath('console-transaction-zh-mobile'), fullPage: true });

    await page.goto(`${gw.url}/console/transactions`);
    expect(await page.textContent('#transactions tbody')).toContain('微信支付');
    await page.goto(`${gw.url}/console/refunds`);
    expect(await page.textContent('h1')).toBe('退款');
    expect(await page.textContent('#refunds')).toContain('one bottle broken');
    await page.goto(`${gw.url}/console/charts`);
    expect(await page.textContent('h1')).toBe('最近 30 天');
    expect(await page.textContent('#chart-count figcaption')).toBe('每日创建订单数');
    await page.goto(`${gw.url}/console/notifications`);
    expect(await page.textContent('h1')).toBe('通知记录');
    expect(await fitsScreen(page)).toBe(true);
    await context.close();
  });

  it("the operator's audit log in Chinese names its actions and who; on a desktop its change column is wide", async () => {
    const context = await signedInContext(
      browser,
      { ...DESKTOP, locale: 'zh-CN' },
      gw.url,
      `${operator.cookieHeader()}; gw_lang=zh`,
    );
    const page = await context.newPage();
    await page.goto(`${gw.url}/console/audit?actor=anonymous`);
    const row = page.locator('#audit tbody tr').first();
    expect(await row.locator('td').nth(1).textContent()).toBe('未登录的访客');
    expect(await row.locator('td').nth(2).textContent()).toContain('登录失败');
    await page.goto(`${gw.url}/console/audit`);
    expect(await fitsScreen(page)).toBe(true);
    const change = await page.locator('#audit thead th').nth(5).boundingBox();
    const who = await page.locator('#audit thead th').nth(1).boundingBox();
    expect(change!.width).toBeGreaterThan(who!.width * 1.5);
    await page.screenshot({ path: screenshotPath('console-audit-zh'), fullPage: true });

    // The operator's list: an organisation column and filter.
    await page.goto(`${gw.url}/console/transactions`);
    expect(await page.locator('#organisation_id option').count()).toBeGreaterThanOrEqual(3);
    expect(await page.textContent('#transactions')).toContain('Queenstown Cellars');
    await context.close();
  });

  it('on a desktop in English: charts, refunds and the notification log', async () => {
    const context = await signedInContext(browser, { ...DESKTOP, locale: 'en-GB' }, gw.url, operator.cookieHeader());
    const page = await context.newPage();
    await page.goto(`${gw.url}/console/charts`);
    // Every merchant's: the six orders of the owner's organisation and one of another's.
    expect(await page.textContent('#total-orders')).toBe('7');
    await page.screenshot({ path: screenshotPath('console-charts'), fullPage: true });
    await page.goto(`${gw.url}/console/refunds`);
    expect(await page.textContent('#refunds')).toContain(orders[0]);
    await page.screenshot({ path: screenshotPath('console-refunds'), fullPage: true });
    await page.goto(`${gw.url}/console/notifications`);
    await page.screenshot({ path: screenshotPath('console-notifications'), fullPage: true });
    await context.close();
  });
});
