// Every payment method's hosted page in a real browser: the page shows the order, the payment is
// completed in the sandbox (on a second "phone" page, or by clicking through the bank flow), the
// page shows the result without a reload, and the redirection reaches the merchant's site signed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { verifyRedirection } from '../../sdk/signing.js';
import { createMerchant, type MerchantCredentials } from '../../src/cli/admin.js';
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
let merchant: MerchantCredentials;

beforeAll(async () => {
  [gw, browser, site] = await Promise.all([startTestGateway('sqlite'), launchBrowser(), startMerchantSite()]);
  merchant = await createMerchant(gw.store, { name: 'Otago Wines', currency: 'NZD' });
});
afterAll(async () => {
  await browser?.close();
  await site?.close();
  await gw?.close();
});

interface Opened {
  context: BrowserContext;
  page: Page;
  order_id: string;
  merchant_reference: string;
}

let refs = 0;
/** Creates a hosted-checkout transaction and opens {host_url}/{nonce} in a fresh browser context. */
async function openCheckout(
  payment_method: string,
  options = DESKTOP,
  extra: Record<string, string> = {},
): Promise<Opened> {
  const merchant_reference = `OW-${process.pid}-${++refs}-${payment_method}`;
  const { reply, order_id } = await gw.create(
    {
      payment_method,
      amount: '89.50',
      merchant_reference,
      product_name: 'Central Otago Pinot Noir 2021',
      return_url: `${site.url}/return?shop=otago`,
      backPage_url: `${site.url}/back`,
      ...extra,
    },
    merchant,
  );
  const context = await newContext(browser, options);
  const page = await context.newPage();
  const res = await page.goto(`${reply.host_url}/${reply.nonce}`);
  expect(res?.status()).toBe(200);
  // Survives only if the page is never reloaded: the result must arrive by the live update.
  await page.evaluate(() => ((window as unknown as { loadedOnce: boolean }).loadedOnce = true));
  return { context, page, order_id, merchant_reference };
}

async function expectOrderShown(page: Page, merchant_reference: string): Promise<void> {
  expect(await page.textContent('#merchant-name')).toBe('Otago Wines');
  expect(await page.textContent('#amount')).toContain('NZ$89.50');
  expect(await page.textContent('#amount-cny')).toContain('¥415.66');
  expect(await page.textContent('#product-name')).toBe('Central Otago Pinot Noir 2021');
  expect(await page.textContent('#merchant-reference')).toBe(merchant_reference);
}

/** The customer's phone: opens the QR's text (the sandbox payment app) and taps a button. */
async function payOnPhone(page: Page, button: '#approve' | '#decline' | '#reject' = '#approve'): Promise<void> {
  const href = await page.getAttribute('#sandbox-app-link', 'href');
  const phone = await newContext(browser, MOBILE);
  const app = await phone.newPage();
  await app.goto(href!);
  await app.click(button);
  await app.waitForSelector('#status');
  await phone.close();
}

async function expectLiveResult(page: Page, status: string): Promise<void> {
  await page.waitForSelector(`#result[data-status="${status}"]`);
  expect(await page.evaluate(() => (window as unknown as { loadedOnce?: boolean }).loadedOnce)).toBe(true);
}

async function expectRedirect(
  merchant_reference: string,
  payment_method: string,
  status: string,
): Promise<URLSearchParams> {
  const q = await site.next('/return');
  expect(Object.fromEntries(q)).toMatchObject({
    shop: 'otago',
    merchant_reference,
    payment_method,
    status,
    currency: 'NZD',
    amount: '89.50',
  });
  expect(verifyRedirection(q, merchant.api_key)).toBe(true);
  return q;
}

describe('hosted checkout pages, desktop', () => {
  it('wechat with present_qr=1: QR for the phone, live result, no redirection outside WeChat', async () => {
    const o = await openCheckout('wechat', DESKTOP, { present_qr: '1' });
    await expectOrderShown(o.page, o.merchant_reference);
    expect(await o.page.getAttribute('.qr-img', 'src')).toMatch(/^data:image\/png;base64,/);
    await o.page.screenshot({ path: screenshotPath('wechat'), fullPage: true });
    await payOnPhone(o.page);
    await expectLiveResult(o.page, 'paid');
    expect(await o.page.isVisible('#return-link')).toBe(false);
    expect(await o.page.isVisible('#back-link')).toBe(true);
    await o.context.close();
  });

  it('wechat without present_qr: instructions to continue in WeChat', async () => {
    const o = await openCheckout('wechat');
    expect(await o.page.textContent('#pay-panel')).toContain('Continue in WeChat on your phone');
    expect(await o.page.isVisible('.qr-img')).toBe(false);
    await o.context.close();
  });

  it('alipay: QR, live result, redirection in a desktop browser', async () => {
    const o = await openCheckout('alipay');
    await expectOrderShown(o.page, o.merchant_reference);
    expect(await o.page.getAttribute('.qr-img', 'src')).toMatch(/^data:image\/png;base64,/);
    await o.page.screenshot({ path: screenshotPath('alipay'), fullPage: true });
    await payOnPhone(o.page);
    await expectLiveResult(o.page, 'paid');
    await expectRedirect(o.merchant_reference, 'alipay', 'paid');
    await o.page.waitForSelector('#merchant-page');
    await o.context.close();
  });

  for (const method of ['polipay', 'upi_upop'] as const) {
    it(`${method}: bank selection, the bank, back to the page, redirection as onlineBank`, async () => {
      const o = await openCheckout(method);
      await expectOrderShown(o.page, o.merchant_reference);
      await o.page.screenshot({ path: screenshotPath(method), fullPage: true });
      await o.page.locator('label.bank').nth(1).click();
      const bank = await o.page.locator('label.bank input').nth(1).getAttribute('value');
      await o.page.click('#bank-continue');
      await o.page.waitForSelector('#approve');
      if (method === 'polipay') await o.page.screenshot({ path: screenshotPath('sandbox-bank') });
      expect(await o.page.textContent('.app-head h1')).toContain(bank!);
      await o.page.click('#approve');
      await o.page.waitForSelector('#result[data-status="paid"]');
      await expectRedirect(o.merchant_reference, 'onlineBank', 'paid');
      await o.page.waitForSelector('#merchant-page');
      await o.context.close();
    });
  }

  for (const method of ['payid', 'moneymore', 'coin_payments'] as const) {
    it(`${method}: transfer details, paid from the phone, live result, redirection as onlineBank`, async () => {
      const o = await openCheckout(method);
      await expectOrderShown(o.page, o.merchant_reference);
      expect(await o.page.textContent('#transfer-amount, #coin-amount')).toContain('89.50');
      await o.page.screenshot({ path: screenshotPath(method), fullPage: true });
      await payOnPhone(o.page);
      await expectLiveResult(o.page, 'paid');
      await expectRedirect(o.merchant_reference, 'onlineBank', 'paid');
      await o.context.close();
    });
  }

  it('copy buttons say what they copy to a screen reader', async () => {
    const o = await openCheckout('moneymore');
    const names = await o.page
      .locator('button.copy')
      .evaluateAll((buttons) => buttons.map((b) => b.getAttribute('aria-label') ?? b.textContent));
    expect(names).toEqual(['Copy Account number', 'Copy Amount', 'Copy Reference']);
    for (const name of names) expect(await o.page.getByRole('button', { name: name, exact: true }).count()).toBe(1);
    await o.context.close();
  });

  it('payid rejected by the bank: the reason, and cancel_or_fail as onlineBank', async () => {
    const o = await openCheckout('payid');
    expect(await o.page.textContent('#payid')).toContain(o.order_id);
    await payOnPhone(o.page, '#reject');
    await expectLiveResult(o.page, 'rejected');
    expect(await o.page.textContent('#result')).toContain('Rejected by the sandbox bank');
    await expectRedirect(o.merchant_reference, 'onlineBank', 'cancel_or_fail');
    await o.context.close();
  });
});

describe('hosted checkout pages, mobile', () => {
  it('wechat in the WeChat browser: pay button, live result, redirection with paid', async () => {
    const o = await openCheckout('wechat', WECHAT);
    await expectOrderShown(o.page, o.merchant_reference);
    expect(await o.page.isVisible('#pay-button')).toBe(true);
    await o.page.screenshot({ path: screenshotPath('wechat-mobile'), fullPage: true });
    await payOnPhone(o.page);
    await expectLiveResult(o.page, 'paid');
    await expectRedirect(o.merchant_reference, 'wechat', 'paid');
    await o.context.close();
  });

  it('wechat in the WeChat browser: the pay button goes to the channel and back; a decline redirects with cancel_or_fail', async () => {
    const o = await openCheckout('wechat', WECHAT);
    await o.page.click('#pay-button');
    await o.page.click('#decline');
    await o.page.waitForSelector('#result[data-status="failed"]');
    await expectRedirect(o.merchant_reference, 'wechat', 'cancel_or_fail');
    await o.context.close();
  });

  it('alipay in a mobile browser: open-app button, live result, no redirection', async () => {
    const o = await openCheckout('alipay', MOBILE);
    expect(await o.page.isVisible('#pay-button')).toBe(true);
    await o.page.screenshot({ path: screenshotPath('alipay-mobile'), fullPage: true });
    await payOnPhone(o.page);
    await expectLiveResult(o.page, 'paid');
    expect(await o.page.isVisible('#return-link')).toBe(false);
    await o.page.screenshot({ path: screenshotPath('paid-mobile') });
    await o.context.close();
  });

  it('payid on a phone: transfer details and live result', async () => {
    const o = await openCheckout('payid', MOBILE);
    await o.page.screenshot({ path: screenshotPath('payid-mobile'), fullPage: true });
    await payOnPhone(o.page);
    await expectLiveResult(o.page, 'paid');
    await expectRedirect(o.merchant_reference, 'onlineBank', 'paid');
    await o.context.close();
  });
});
