// The console in Chromium, for what needs care: two-factor enrolment and sign-in with a code from
// the secret the page shows, the sign-in throttle, a role's refused pages, the CSV export as a
// download, the API key behind the password and its rotation with overlap (the old key still
// signs API calls), the settlement report, and the hosted page in Chinese. Screenshots for docs/console.md and docs/api.md.
import { readFileSync } from 'node:fs';
import { Secret, TOTP } from 'otpauth';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient } from '../../sdk/client.js';
import { PASSWORD, consoleUser } from '../support/console-client.js';
import { startTestGateway, uniqueRef, type TestGateway } from '../support/gateway.js';
import { DESKTOP, MOBILE, launchBrowser, newContext, screenshotPath } from './support.js';

let gw: TestGateway;
let browser: Browser;

beforeAll(async () => {
  [gw, browser] = await Promise.all([startTestGateway('sqlite'), launchBrowser()]);
});
afterAll(async () => {
  await browser?.close();
  await gw?.close();
});

const codeOf = (secret: string, at: number) =>
  new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' }).generate({ timestamp: at });

async function signIn(page: Page, email: string, password = PASSWORD): Promise<void> {
  await page.goto(`${gw.url}/console/sign-in`);
  await page.fill('#email', email);
  await page.fill('#password', password);
  await page.click('button[type=submit].primary');
}

describe('console security in a browser', () => {
  it('two-factor: enrol from the QR page, then sign in with a code', async () => {
    const { email } = await consoleUser(gw, 'operator', 'admin');
    const context = await newContext(browser, { ...DESKTOP, locale: 'en-GB' });
    const page = await context.newPage();
    await signIn(page, email);
    await page.waitForURL(/\/console$/);
    await page.click('a.who');
    expect(await page.textContent('#totp-state')).toContain('Off');
    await page.click('#enrol');
    expect(await page.getAttribute('#totp-qr', 'src')).toMatch(/^data:image\/png;base64,/);
    await page.screenshot({ path: screenshotPath('console-two-factor'), fullPage: true });
    const secret = (await page.textContent('#totp-secret'))!.replace(/\s/g, '');
    const at = Date.now();
    await page.fill('#code', codeOf(secret, at));
    await page.click('button[type=submit].primary');
    // The recovery codes, shown once; then the account says two-factor is on.
    await page.waitForSelector('#recovery-codes');
    expect(await page.locator('#recovery-codes li').count()).toBe(10);
    await page.screenshot({ path: screenshotPath('console-recovery-codes'), fullPage: true });
    await page.click('#codes-kept');
    await page.goto(`${gw.url}/console/account`);
    expect(await page.textContent('#totp-state')).toContain('On');
    await page.click('form[action="/console/sign-out"] button');
    await page.waitForURL(/notice=signed_out/);
    await signIn(page, email);
    await page.waitForURL(/\/console\/sign-in\/code$/);
    await page.fill('#code', codeOf(secret, at + 30_000));
    await page.click('button[type=submit].primary');
    await page.waitForURL(/\/console$/);
    expect(await page.textContent('h1')).toBe('Dashboard');
    await context.close();
  });

  it('the throttle: the sixth wrong password says for how long the account is locked', async () => {
    const { email } = await consoleUser(gw, 'merchant', 'staff', gw.merchant.organisation_id);
    const context = await newContext(browser, DESKTOP);
    const page = await context.newPage();
    for (let i = 0; i < 5; i++) {
      await signIn(page, email, 'not the password, try again');
      expect(await page.textContent('p.error')).toContain('not right');
    }
    await signIn(page, email);
    expect(await page.textContent('p.error')).toMatch(/Too many failed sign-ins\. Try again in \d+ minutes\./);
    await context.close();
  });

  it("staff: the key is not offered and the operators' pages are refused by direct URL", async () => {
    const { email } = await consoleUser(gw, 'merchant', 'staff', gw.merchant.organisation_id);
    const context = await newContext(browser, DESKTOP);
    const page = await context.newPage();
    await signIn(page, email);
    await page.waitForURL(/\/console$/);
    await page.goto(`${gw.url}/console/wallets/${gw.merchant.wallet_id}`);
    expect(await page.locator('#reveal-form').count()).toBe(0);
    expect(await page.textContent('main')).toContain('may not see or rotate API keys');
    expect((await page.goto(`${gw.url}/console/organisations`))?.status()).toBe(404);
    expect((await page.goto(`${gw.url}/console/outbox`))?.status()).toBe(403);
    expect((await page.goto(`${gw.url}/console/audit`))?.status()).toBe(403);
    await context.close();
  });

  it('an owner exports CSV, reveals and rotates the key (the old one keeps working in the window), reads the settlement', async () => {
    const paid = await gw.create({
      merchant_reference: uniqueRef('export-me'),
      product_name: '麦卢卡蜂蜜 Manuka honey',
    });
    await gw.pay(paid.order_id, 'paid');
    const { email } = await consoleUser(gw, 'merchant', 'owner', gw.merchant.organisation_id);
    const context = await newContext(browser, { ...DESKTOP, acceptDownloads: true });
    const page = await context.newPage();
    await signIn(page, email);
    await page.waitForURL(/\/console$/);
    await page.goto(`${gw.url}/console/transactions?status=paid`);
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-csv')]);
    expect(download.suggestedFilename()).toMatch(/^transactions-\d{4}-\d{2}-\d{2}\.csv$/);
    const csv = readFileSync(await download.path(), 'utf8');
    expect(csv).toContain(paid.order_id);
    expect(csv).toContain('麦卢卡蜂蜜 Manuka honey');

    await page.click('nav >> text=Integration');
    await page.click(`a:text("${gw.merchant.wallet_id}")`);
    await page.fill('#reveal-password', PASSWORD);
    await page.click('#reveal-form button');
    const oldKey = (await page.textContent('#api-key'))!;
    expect(oldKey).toBe((await gw.store.accounts.findWallet(gw.merchant.wallet_id))!.api_key);
    await page.selectOption('#overlap_hours', '24');
    await page.fill('#rotate-password', PASSWORD);
    await page.click('#rotate-form button');
    await page.waitForSelector('#api-key');
    const newKey = (await page.textContent('#api-key'))!;
    expect(newKey).not.toBe(oldKey);
    expect(await page.textContent('#overlap')).toMatch(/still verifies until .+ UTC/);
    // Mask the key before the screenshot: it is a real key of this test's gateway, but still.
    await page.evaluate(() => {
      document.getElementById('api-key')!.textContent = '••••••••••••••••••••••••••••••••';
    });
    await page.screenshot({ path: screenshotPath('console-integration'), fullPage: true });
    const api = (apiKey: string) =>
      new GatewayClient({ baseUrl: gw.url, userId: gw.merchant.user_id, walletId: gw.merchant.wallet_id, apiKey });
    const order = {
      payment_method: 'alipay',
      amount: '3.00',
      return_url: 'https://shop.example/r',
      callback_url: 'https://shop.example/n',
      ip: '203.0.113.2',
      product_name: 'Tea',
    };
    expect(await api(oldKey).createTransaction({ ...order, merchant_reference: uniqueRef('old-key') })).toMatchObject({
      code: 0,
    });
    expect(await api(newKey).createTransaction({ ...order, merchant_reference: uniqueRef('new-key') })).toMatchObject({
      code: 0,
    });
    gw.merchant.api_key = newKey;

    await page.click('nav >> text=Settlement');
    await page.waitForSelector('#settlement');
    expect(await page.textContent('#settlement')).toContain('Alipay');
    await page.screenshot({ path: screenshotPath('console-settlement'), fullPage: true });
    await context.close();
  });

  it('the hosted payment page in Chinese, from the browser language', async () => {
    const { reply } = await gw.create({
      payment_method: 'alipay',
      product_name: '麦卢卡蜂蜜 Manuka honey',
      backPage_url: 'https://shop.example/cart',
    });
    const context = await newContext(browser, {
      ...MOBILE,
      locale: 'zh-CN',
      extraHTTPHeaders: { 'accept-language': 'zh-CN,zh;q=0.9' },
    });
    const page = await context.newPage();
    await page.goto(`${reply.host_url}/${reply.nonce}`);
    expect(await page.getAttribute('html', 'lang')).toBe('zh-CN');
    expect(await page.textContent('#payment-method')).toBe('支付宝');
    expect(await page.textContent('.summary')).toContain('应付金额');
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    await page.screenshot({ path: screenshotPath('checkout-zh-mobile') });
    await page.click('#lang-switch');
    await page.waitForSelector('html[lang=en-GB]');
    expect(await page.textContent('.summary')).toContain('Amount due');
    await context.close();
  });

  it("resend from a transaction's page; a form whose CSRF token was changed is refused and does nothing", async () => {
    const paid = await gw.create({ merchant_reference: uniqueRef('resend-browser') });
    await gw.pay(paid.order_id, 'paid');
    const { email } = await consoleUser(gw, 'operator', 'support');
    const context = await newContext(browser, DESKTOP);
    const page = await context.newPage();
    await signIn(page, email);
    await page.waitForURL(/\/console$/);
    await page.goto(`${gw.url}/console/transactions/${paid.order_id}`);
    // Support may resend, not refund.
    expect(await page.locator('#refund-form').count()).toBe(0);
    const [before] = await gw.store.outbox.listByOrder(paid.order_id);
    await page.evaluate(() => {
      (document.querySelector('#resend-form input[name=_csrf]') as HTMLInputElement).value = 'forged';
    });
    const refused = await Promise.all([page.waitForNavigation(), page.click('#resend-form button')]);
    expect(refused[0]?.status()).toBe(403);
    expect(refused[0]?.headers()['content-type']).toBe('text/html; charset=utf-8');
    expect(await page.textContent('main')).toContain('did not come from this console');
    expect((await gw.store.outbox.listByOrder(paid.order_id))[0].next_attempt_at).toBe(before.next_attempt_at);
    await page.goto(`${gw.url}/console/transactions/${paid.order_id}`);
    await page.click('#resend-form button');
    await page.waitForURL(/notice=resent/);
    expect(await page.textContent('p.notice')).toContain('queued to be sent again');
    expect(
      (await gw.store.console.listAudit({ actions: ['transaction.resend'], limit: 5 })).some(
        (e) => e.object === paid.order_id,
      ),
    ).toBe(true);
    await context.close();
  });
});
