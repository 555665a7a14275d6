// In a real browser: a merchant's backPage_url and return_url with CJK, Cyrillic and emoji
// characters, and with an internationalised host name, take the customer there.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { DESKTOP, launchBrowser, newContext, startMerchantSite, type MerchantSite } from './support.js';

let gw: TestGateway;
let browser: Browser;
let site: MerchantSite;

beforeAll(async () => {
  [gw, browser, site] = await Promise.all([startTestGateway('sqlite'), launchBrowser(), startMerchantSite()]);
});
afterAll(async () => {
  await browser?.close();
  await site?.close();
  await gw?.close();
});

/** The merchant site's address with a path and query beyond ASCII; `arrives` is the path it is requested at. */
function siteUrl(path: string, query: string): { url: string; arrives: string } {
  const url = `${site.url}${path}?${query}`;
  return { url, arrives: new URL(url).pathname };
}

describe('merchant URLs beyond ASCII in the browser', () => {
  it.each([
    ['CJK', '/购物车/返回', 'note=葡萄酒'],
    ['Cyrillic', '/корзина', 'id=7&город=Москва'],
    ['emoji', '/back-😀', 'mood=🎉'],
  ])(
    '"Cancel and return" with a %s backPage_url cancels and lands on the merchant page',
    async (_what, path, query) => {
      const { url, arrives } = siteUrl(path, query);
      const { reply, order_id } = await gw.create({ payment_method: 'alipay', backPage_url: url });
      const context = await newContext(browser, DESKTOP);
      const page = await context.newPage();
      await page.goto(`${reply.host_url}/${reply.nonce}`);
      await page.click('#cancel-back');
      const q = await site.next(arrives);
      expect(Object.fromEntries(q)).toEqual(Object.fromEntries(new URL(url).searchParams));
      await page.waitForSelector('#merchant-page');
      expect(decodeURIComponent(new URL(page.url()).pathname)).toBe(path);
      expect((await gw.store.transactions.find(order_id))!.status).toBe('canceled');
      await context.close();
    },
  );

  it('an internationalised host name: the browser goes to its punycode form', async () => {
    const port = new URL(site.url).port;
    const { reply, order_id } = await gw.create({
      payment_method: 'alipay',
      backPage_url: `http://例子.测试:${port}/返回?q=😀`,
    });
    const context = await newContext(browser, DESKTOP);
    // The name resolves nowhere here: the browser's request to it is answered in place, and recorded.
    const requested: string[] = [];
    await context.route(/xn--/, (route) => {
      requested.push(route.request().url());
      return route.fulfill({ status: 200, contentType: 'text/html', body: '<h1 id="merchant-page">IDN merchant</h1>' });
    });
    const page = await context.newPage();
    await page.goto(`${reply.host_url}/${reply.nonce}`);
    await page.click('#cancel-back');
    await page.waitForSelector('#merchant-page');
    expect(requested).toEqual([`http://xn--fsqu00a.xn--0zwm56d:${port}/%E8%BF%94%E5%9B%9E?q=%F0%9F%98%80`]);
    expect((await gw.store.transactions.find(order_id))!.status).toBe('canceled');
    await context.close();
  });

  it('the redirection to a return_url with a CJK path and an emoji query, signed parameters appended', async () => {
    const { url, arrives } = siteUrl('/完成', 'mood=😀');
    const { reply, order_id, merchant_reference } = await gw.create({ payment_method: 'alipay', return_url: url });
    const context = await newContext(browser, DESKTOP);
    const page = await context.newPage();
    await page.goto(`${reply.host_url}/${reply.nonce}`);
    await gw.pay(order_id);
    const q = await site.next(arrives);
    expect(q.get('mood')).toBe('😀');
    expect(q.get('merchant_reference')).toBe(merchant_reference);
    expect(q.get('status')).toBe('paid');
    await page.waitForSelector('#merchant-page');
    await context.close();
  });
});
