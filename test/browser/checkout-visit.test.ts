// The nonce as a one-time credential in real browsers, and the back link that cancels.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { signRequest } from '../../sdk/signing.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import {
  DESKTOP,
  MOBILE,
  WECHAT,
  launchBrowser,
  newContext,
  screenshotPath,
  startMerchantSite,
  type MerchantSite,
} from './support.js';

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

describe('hosted page visits', () => {
  it('works on reload for the customer and shows an error page to any other browser', async () => {
    const { reply } = await gw.create({ payment_method: 'payid', return_url: `${site.url}/return` });
    const url = `${reply.host_url}/${reply.nonce}`;
    const customer = await newContext(browser, DESKTOP);
    const page = await customer.newPage();
    expect((await page.goto(url))?.status()).toBe(200);
    expect((await page.reload())?.status()).toBe(200);
    expect(await page.isVisible('#payid')).toBe(true);

    const stranger = await newContext(browser, MOBILE);
    const other = await stranger.newPage();
    expect((await other.goto(url))?.status()).toBe(410);
    expect(await other.textContent('#error-page h1')).toBe('Payment link already used');
    expect(await other.content()).not.toContain('PayID');
    await other.screenshot({ path: screenshotPath('link-used-mobile') });

    const unknown = await stranger.newPage();
    expect((await unknown.goto(`${reply.host_url}/ffffffffffffffffffffffffffffffff`))?.status()).toBe(404);
    expect(await unknown.textContent('#error-page h1')).toBe('Payment link not found');
    await Promise.all([customer.close(), stranger.close()]);
  });

  it('alipay opened in WeChat continues in the browser that "Open in Browser" opens, and in no other', async () => {
    const { reply, order_id } = await gw.create({ payment_method: 'alipay', return_url: `${site.url}/return` });
    const hostPage = `${reply.host_url}/${reply.nonce}`;
    const wechat = await newContext(browser, WECHAT);
    const inWechat = await wechat.newPage();
    expect((await inWechat.goto(hostPage))?.status()).toBe(200);
    expect(await inWechat.textContent('#pay-panel')).toContain('Open in Browser');
    // What WeChat's menu opens in the phone's browser is the page's current address.
    const address = inWechat.url();

    const phone = await newContext(browser, MOBILE);
    const inBrowser = await phone.newPage();
    expect((await inBrowser.goto(address))?.status()).toBe(200);
    expect(inBrowser.url()).toBe(hostPage);
    expect(await inBrowser.isVisible('#pay-button')).toBe(true);
    expect((await inBrowser.reload())?.status()).toBe(200);

    // The link itself still works only once.
    const stranger = await newContext(browser, MOBILE);
    expect((await (await stranger.newPage()).goto(hostPage))?.status()).toBe(410);

    await gw.pay(order_id);
    await inBrowser.waitForSelector('#result[data-status="paid"]');
    await inWechat.waitForSelector('#result[data-status="paid"]');
    await Promise.all([wechat.close(), phone.close(), stranger.close()]);
  });

  it('from opening to the redirection: no console error, no failed request, nothing from another host', async () => {
    const { reply, order_id } = await gw.create({ payment_method: 'alipay', return_url: `${site.url}/return` });
    const context = await newContext(browser, DESKTOP);
    const page = await context.newPage();
    const problems: string[] = [];
    const gateway = new URL(reply.host_url).origin;
    page.on('console', (m) => {
      if (m.type() === 'error' && m.location().url.startsWith(gateway))
        problems.push(`console: ${m.text()} (${m.location().url})`);
    });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('request', (r) => {
      if (!r.url().startsWith(gateway) && !r.url().startsWith(site.url) && !r.url().startsWith('data:'))
        problems.push(`request to ${r.url()}`);
    });
    page.on('response', (r) => {
      if (r.url().startsWith(gateway) && r.status() >= 400) problems.push(`${r.status()} ${r.url()}`);
    });
    await page.goto(`${reply.host_url}/${reply.nonce}`);
    await gw.pay(order_id);
    await site.next('/return');
    await page.waitForSelector('#merchant-page');
    expect(problems).toEqual([]);
    await context.close();
  });

  it('the back link cancels the order and returns to backPage_url', async () => {
    const { reply, order_id } = await gw.create({
      payment_method: 'alipay',
      backPage_url: `${site.url}/back?cart=3`,
      return_url: `${site.url}/return`,
    });
    const context = await newContext(browser, DESKTOP);
    const page = await context.newPage();
    await page.goto(`${reply.host_url}/${reply.nonce}`);
    await page.click('#cancel-back');
    expect(Object.fromEntries(await site.next('/back'))).toEqual({ cart: '3' });
    await page.waitForSelector('#merchant-page');
    expect((await gw.store.transactions.find(order_id))!.status).toBe('canceled');
    await context.close();
  });

  it('a merchant cancel while the page is open shows up live', async () => {
    const { reply, order_id, merchant_reference } = await gw.create({
      payment_method: 'wechat',
      present_qr: '1',
      return_url: `${site.url}/return`,
    });
    const context = await newContext(browser, DESKTOP);
    const page = await context.newPage();
    await page.goto(`${reply.host_url}/${reply.nonce}`);
    const cancel = { user_id: gw.merchant.user_id, merchant_reference };
    expect(await gw.post('/cancel', { ...cancel, signature: signRequest(cancel, gw.merchant.api_key) })).toMatchObject({
      code: 0,
    });
    await page.waitForSelector('#result[data-status="canceled"]');
    expect(await page.textContent('#result-title')).toBe('Payment canceled');
    expect((await gw.store.transactions.find(order_id))!.status).toBe('canceled');
    await context.close();
  });
});
