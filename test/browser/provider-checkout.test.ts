// The hosted page in Chromium with real providers (live mode, the fake Alipay and fake WeChat Pay
// over real HTTP): the desktop QR, the phone's round trip through the provider's own page, and
// JSAPI inside WeChat, where the page learns the payer from WeChat and opens WeChat's payment sheet.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, BrowserContextOptions } from 'playwright-core';
import { verifyRedirection } from '../../sdk/signing.js';
import {
  alipayAccount,
  azupayAccount,
  coinpaymentsAccount,
  poliAccount,
  unionpayAccount,
  useAccount,
  wechatpayAccount,
} from '../support/channels.js';
import { FakeAzupay } from '../support/fake-azupay.js';
import { FakeUnionpay } from '../support/fake-unionpay.js';
import type { MerchantCredentials } from '../../src/cli/admin.js';
import { FakeAlipay } from '../support/fake-alipay.js';
import { FakeCoinPayments } from '../support/fake-coinpayments.js';
import { FakePoli } from '../support/fake-poli.js';
import { FakeWechatPay } from '../support/fake-wechatpay.js';
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
let alipay: FakeAlipay;
let wechatpay: FakeWechatPay;
let poli: FakePoli;
let coin: FakeCoinPayments;
let azupay: FakeAzupay;
let unionpay: FakeUnionpay;
let aud: MerchantCredentials;

beforeAll(async () => {
  [gw, browser, site, alipay, wechatpay, poli] = await Promise.all([
    startTestGateway('sqlite', { mode: 'live' }),
    launchBrowser(),
    startMerchantSite(),
    FakeAlipay.start(),
    FakeWechatPay.start(),
    FakePoli.start(),
  ]);
  coin = await FakeCoinPayments.start();
  azupay = await FakeAzupay.start();
  unionpay = await FakeUnionpay.start();
  await useAccount(gw, unionpayAccount(gw.merchant.wallet_id, unionpay));
  aud = await gw.newMerchant('AUD');
  await useAccount(gw, azupayAccount(aud.wallet_id, azupay));
  await useAccount(gw, poliAccount(gw.merchant.wallet_id, poli));
  await useAccount(gw, coinpaymentsAccount(gw.merchant.wallet_id, coin));
  await useAccount(gw, alipayAccount(gw.merchant.wallet_id, alipay));
  await useAccount(gw, wechatpayAccount(gw.merchant.wallet_id, wechatpay, { jsapi: true }));
});
afterAll(async () => {
  expect(alipay?.refused ?? []).toEqual([]);
  expect(wechatpay?.refused ?? []).toEqual([]);
  expect(poli?.refused ?? []).toEqual([]);
  expect(coin?.refused ?? []).toEqual([]);
  expect(azupay?.refused ?? []).toEqual([]);
  expect(unionpay?.refused ?? []).toEqual([]);
  await azupay?.close();
  await unionpay?.close();
  await browser?.close();
  await Promise.all([site?.close(), alipay?.close(), wechatpay?.close(), poli?.close(), coin?.close()]);
  await gw?.close();
});

let refs = 0;
async function open(
  payment_method: 'alipay' | 'wechat' | 'polipay' | 'coin_payments' | 'payid' | 'upi_upop',
  options: BrowserContextOptions,
  prepare?: (context: BrowserContext) => Promise<void>,
  merchant?: MerchantCredentials,
) {
  const merchant_reference = `PC-${process.pid}-${++refs}`;
  const { reply, order_id } = await gw.create(
    {
      payment_method,
      merchant_reference,
      return_url: `${site.url}/return?shop=otago`,
    },
    merchant,
  );
  const context = await newContext(browser, options);
  await prepare?.(context);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${reply.host_url}/${reply.nonce}`);
  await page.evaluate(() => ((window as unknown as { loadedOnce: boolean }).loadedOnce = true));
  return { context, page, order_id, merchant_reference, errors };
}

async function expectRedirect(merchant_reference: string, payment_method: string): Promise<void> {
  const q = await site.next('/return');
  expect(Object.fromEntries(q)).toMatchObject({ shop: 'otago', merchant_reference, payment_method, status: 'paid' });
  expect(verifyRedirection(q, gw.merchant.api_key)).toBe(true);
}

describe('hosted checkout with real providers', () => {
  it('alipay on a desktop: the precreate QR, paid in Alipay, the result live and the merchant redirected', async () => {
    const o = await open('alipay', DESKTOP);
    expect(await o.page.getAttribute('.qr-img', 'src')).toMatch(/^data:image\/png;base64,/);
    expect(alipay.trades.get(o.order_id)).toMatchObject({ product: 'precreate' });
    await alipay.pay(o.order_id);
    await o.page.waitForSelector('#result[data-status="paid"]');
    expect(await o.page.evaluate(() => (window as unknown as { loadedOnce?: boolean }).loadedOnce)).toBe(true);
    await expectRedirect(o.merchant_reference, 'alipay');
    expect(o.errors).toEqual([]);
    await o.context.close();
  });

  it("alipay on a phone: the button goes to Alipay's mobile page, which pays and comes back to the page", async () => {
    const o = await open('alipay', MOBILE);
    await o.page.click('#pay-button');
    await o.page.waitForSelector('#fake-pay');
    expect(alipay.trades.get(`${o.order_id}R`)).toMatchObject({ product: 'wap.pay' });
    await o.page.click('#fake-pay');
    await o.page.waitForSelector('#result[data-status="paid"]');
    expect(new URL(o.page.url()).pathname).toMatch(/^\/v2\/checkout\//);
    expect((await gw.store.transactions.find(o.order_id))!.status).toBe('paid');
    await o.context.close();
  });

  it("wechat on a phone: the button goes to WeChat Pay's H5 page (with the Referer it checks), which pays and comes back to the page", async () => {
    wechatpay.h5Domain = new URL(gw.ctx.config.publicUrl).host;
    const o = await open('wechat', MOBILE);
    await o.page.click('#pay-button');
    await o.page.waitForSelector('#fake-pay');
    expect(wechatpay.orders.get(`${o.order_id}R`)).toMatchObject({ trade_type: 'H5' });
    await o.page.click('#fake-pay');
    await o.page.waitForSelector('#result[data-status="paid"]');
    expect((await gw.store.transactions.find(o.order_id))!.status).toBe('paid');
    await o.context.close();
  });

  it('wechat inside WeChat: the payer is identified by WeChat, the pay button opens the payment sheet, the result comes live', async () => {
    const sheet: Record<string, string>[] = [];
    const o = await open('wechat', WECHAT, async (context) => {
      // WeChat's browser gives its pages WeixinJSBridge; here its payment sheet is the fake's, reached through the test.
      await context.exposeBinding('wechatPaymentSheet', (_source, params: Record<string, string>) => {
        sheet.push(params);
        return wechatpay.payJsapi(params);
      });
      await context.addInitScript(() => {
        const w = window as unknown as { wechatPaymentSheet(p: unknown): Promise<string>; WeixinJSBridge: unknown };
        w.WeixinJSBridge = {
          invoke(name: string, params: unknown, done: (res: { err_msg: string }) => void) {
            if (name !== 'getBrandWCPayRequest') return done({ err_msg: `${name}:fail` });
            void w
              .wechatPaymentSheet(params)
              .then((r) =>
                done({ err_msg: r === 'ok' ? 'get_brand_wcpay_request:ok' : `get_brand_wcpay_request:fail ${r}` }),
              );
          },
        };
      });
    });
    // The browser went to WeChat's authorization and came back here, to the page, with the payer known.
    expect(new URL(o.page.url()).pathname).toMatch(/^\/v2\/checkout\//);
    expect(JSON.parse(wechatpay.orders.get(`${o.order_id}J`)!.body)).toMatchObject({
      payer: { openid: wechatpay.openid },
    });
    await o.page.click('#pay-button');
    await o.page.waitForSelector('#result[data-status="paid"]');
    expect(sheet).toHaveLength(1);
    expect(sheet[0]).toMatchObject({
      appId: wechatpay.appid,
      signType: 'RSA',
      package: `prepay_id=${wechatpay.orders.get(`${o.order_id}J`)!.prepay_id}`,
    });
    await expectRedirect(o.merchant_reference, 'wechat');
    expect(o.errors).toEqual([]);
    await o.context.close();
  });

  it('polipay on a desktop: the button goes to POLi, the customer pays at the bank and comes back to the result', async () => {
    const o = await open('polipay', DESKTOP);
    await o.page.screenshot({ path: screenshotPath('polipay-live'), fullPage: true });
    await o.page.click('#pay-button');
    await o.page.waitForSelector('#poli');
    await poli.finish(`${o.order_id}R`, 'Completed', { nudge: false });
    // Back with POLi's token, which the gateway asks POLi about before showing the page.
    await o.page.click('#back');
    await o.page.waitForSelector('#result[data-status="paid"]');
    expect(new URL(o.page.url()).search).toBe('');
    expect((await gw.store.transactions.find(o.order_id))!.status).toBe('paid');
    expect(o.errors).toEqual([]);
    await o.context.close();
  });

  it('polipay on a phone: a customer who cancels at POLi is told so and tries again, and pays', async () => {
    const o = await open('polipay', MOBILE);
    expect(await o.page.isVisible('#pay-again')).toBe(false);
    await o.page.click('#pay-button');
    await o.page.waitForSelector('#poli');
    await poli.finish(`${o.order_id}R`, 'Cancelled', { nudge: false });
    await o.page.click('#back');
    await o.page.waitForSelector('#pay-again');
    // The same page in Chinese: the notice and the button too.
    await o.page.goto(`${o.page.url()}?lang=zh`);
    expect(await o.page.textContent('#pay-again')).toContain('未扣取任何款项');
    expect(await o.page.textContent('#pay-button')).toBe('前往 POLi');
    await o.page.screenshot({ path: screenshotPath('polipay-live-zh-mobile'), fullPage: true });
    // The button fits the phone's width.
    const box = (await o.page.locator('#pay-button').boundingBox())!;
    expect(box.x).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width).toBeLessThanOrEqual(MOBILE.viewport!.width);
    await o.page.click('#pay-button');
    await o.page.waitForSelector('#poli');
    expect(poli.byReference(`${o.order_id}R2`)).toBeDefined();
    await poli.finish(`${o.order_id}R2`, 'Completed');
    await o.page.click('#back');
    await o.page.waitForSelector('#result[data-status="paid"]');
    expect(o.errors).toEqual([]);
    await o.context.close();
  });

  it("coin_payments on a desktop: the button goes to the invoice's checkout, paid there, back to the result", async () => {
    const o = await open('coin_payments', DESKTOP);
    await o.page.screenshot({ path: screenshotPath('coin_payments-live'), fullPage: true });
    await o.page.click('#pay-button');
    await o.page.waitForSelector('#coinpayments');
    await coin.settle(`${o.order_id}R`, 'paid');
    await o.page.click('#back');
    await o.page.waitForSelector('#result[data-status="paid"]');
    expect((await gw.store.transactions.find(o.order_id))!.status).toBe('paid');
    expect(o.errors).toEqual([]);
    await o.context.close();
  });

  it('coin_payments on a phone, in Chinese: an invoice that times out ends the order failed, shown live', async () => {
    const o = await open('coin_payments', MOBILE);
    await o.page.goto(`${o.page.url()}?lang=zh`);
    expect(await o.page.textContent('#pay-button')).toBe('前往 CoinPayments');
    const box = (await o.page.locator('#pay-button').boundingBox())!;
    expect(box.x + box.width).toBeLessThanOrEqual(MOBILE.viewport!.width);
    await o.page.screenshot({ path: screenshotPath('coin_payments-live-zh-mobile'), fullPage: true });
    await coin.settle(`${o.order_id}R`, 'timedOut');
    await o.page.waitForSelector('#result[data-status="failed"]');
    expect(o.errors).toEqual([]);
    await o.context.close();
  });

  it('payid on a desktop: the PayID, the amount and the reference to copy, the expiry; paid from the bank, the result live', async () => {
    const o = await open('payid', { ...DESKTOP, permissions: ['clipboard-read', 'clipboard-write'] }, undefined, aud);
    const request = azupay.byReference(`${o.order_id}T`)!;
    expect(await o.page.textContent('#payid')).toBe(request.payID);
    expect(await o.page.textContent('#transfer-amount')).toBe('120.00');
    expect(await o.page.textContent('#transfer-reference')).toBe(o.order_id);
    expect(await o.page.textContent('#payid-expires')).toContain('Sydney time');
    await o.page.click('button[data-copy="payid"]');
    expect(await o.page.evaluate(() => navigator.clipboard.readText())).toBe(request.payID);
    await o.page.screenshot({ path: screenshotPath('payid-live'), fullPage: true });
    await azupay.pay(`${o.order_id}T`);
    await o.page.waitForSelector('#result[data-status="paid"]');
    expect(o.errors).toEqual([]);
    await o.context.close();
  });

  it('payid on a phone, in Chinese: the same details fit the screen; a wrong amount is returned and the page says rejected', async () => {
    const o = await open('payid', MOBILE, undefined, aud);
    await o.page.goto(`${o.page.url()}?lang=zh`);
    expect(await o.page.textContent('#payid-expires')).toContain('悉尼时间');
    for (const id of ['#payid', '#transfer-amount', '#transfer-reference']) {
      const box = (await o.page.locator(id).boundingBox())!;
      expect(box.x + box.width).toBeLessThanOrEqual(MOBILE.viewport!.width);
    }
    await o.page.screenshot({ path: screenshotPath('payid-live-zh-mobile'), fullPage: true });
    await azupay.pay(`${o.order_id}T`, { amount: 100 });
    await o.page.waitForSelector('#result[data-status="rejected"]');
    expect(o.errors).toEqual([]);
    await o.context.close();
  });

  it("upi_upop on a desktop: the page posts the signed consume to UnionPay's cashier, which posts back to the page with the result", async () => {
    const o = await open('upi_upop', DESKTOP);
    await o.page.screenshot({ path: screenshotPath('upi_upop-live'), fullPage: true });
    await o.page.click('#pay-button');
    await o.page.waitForSelector('#unionpay');
    await unionpay.pay(`${o.order_id}F`, { notify: false });
    // Back by UnionPay's POST to the page (no visit cookie goes with it), then the page itself.
    await o.page.click('#back');
    await o.page.waitForSelector('#result[data-status="paid"]');
    expect(new URL(o.page.url()).pathname).toMatch(/^\/v2\/checkout\//);
    expect(o.errors).toEqual([]);
    await o.context.close();
  });

  it('upi_upop on a phone, in Chinese: the button fits, and the cashier takes the form', async () => {
    const o = await open('upi_upop', MOBILE);
    await o.page.goto(`${o.page.url()}?lang=zh`);
    expect(await o.page.textContent('#pay-button')).toBe('前往银联');
    const box = (await o.page.locator('#pay-button').boundingBox())!;
    expect(box.x + box.width).toBeLessThanOrEqual(MOBILE.viewport!.width);
    await o.page.screenshot({ path: screenshotPath('upi_upop-live-zh-mobile'), fullPage: true });
    await o.page.click('#pay-button');
    await o.page.waitForSelector('#unionpay');
    await unionpay.pay(`${o.order_id}F`);
    await o.page.click('#back');
    await o.page.waitForSelector('#result[data-status="paid"]');
    expect(o.errors).toEqual([]);
    await o.context.close();
  });
});
