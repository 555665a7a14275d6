// The console in Chromium: a merchant's owner follows the invitation link, chooses a password,
// signs in, finds an order, reads its timeline, switches to Chinese (it sticks), and cannot open
// another organisation's order by typing its URL. Screenshots of the pages for docs/console.md.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { createMerchant } from '../../src/cli/admin.js';
import { audit, inviteUser } from '../../src/usecases/console-auth.js';
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

/** Follows an invitation link: chooses the password, then signs in with it, and lands on the dashboard. */
async function acceptInvitation(page: Page, link: string, email: string): Promise<void> {
  const passphrase = 'a long and memorable passphrase';
  await page.goto(link);
  await page.fill('#password', passphrase);
  await page.fill('#confirm', passphrase);
  await page.click('button[type=submit].primary');
  await page.waitForURL(/\/console\/sign-in\?notice=password_set/);
  await page.fill('#email', email);
  await page.fill('#password', passphrase);
  await page.click('button[type=submit].primary');
  await page.waitForURL(/\/console$/);
}

describe('the console in a browser', () => {
  it('invitation, sign-in, a transaction and its timeline, Chinese, and no other organisation', async () => {
    const paid = await gw.create({
      merchant_reference: uniqueRef('console-paid'),
      product_name: 'Central Otago Pinot Noir 2021',
    });
    await gw.pay(paid.order_id, 'paid');
    await gw.create({ merchant_reference: uniqueRef('console-pending') });
    const other = await createMerchant(gw.store, { name: 'Elsewhere Ltd', currency: 'NZD' });
    const foreign = await gw.create({ merchant_reference: uniqueRef('foreign') }, other);
    const invite = await inviteUser(
      gw.ctx,
      { kind: 'cli', name: 'test' },
      { email: 'owner@otago.example', kind: 'merchant', role: 'owner', organisation_id: gw.merchant.organisation_id },
    );

    // The link is on the gateway's public URL: the whole visit stays on that origin (its cookies).
    const base = new URL(invite.link).origin;
    const context = await newContext(browser, { ...DESKTOP, locale: 'en-GB' });
    const page = await context.newPage();
    await acceptInvitation(page, invite.link, 'owner@otago.example');
    expect(await page.textContent('h1')).toBe('Dashboard');
    await page.screenshot({ path: screenshotPath('console-dashboard'), fullPage: true });

    await page.click('nav >> text=Transactions');
    await page.waitForSelector('#transactions');
    expect(await page.textContent('#transactions')).toContain(paid.merchant_reference);
    expect(await page.textContent('#transactions')).not.toContain(foreign.merchant_reference);
    await page.selectOption('#status', 'paid');
    await page.click('form[role=search] button');
    await page.waitForURL(/status=paid/);
    const rows = await page.locator('#transactions tbody tr').count();
    expect(rows).toBe(1);
    await page.screenshot({ path: screenshotPath('console-transactions'), fullPage: true });
    await page.click(`a:text("${paid.order_id}")`);
    await page.waitForSelector('#timeline');
    const timeline = await page.textContent('#timeline');
    expect(timeline).toContain('Created');
    expect(timeline).toContain('Status: paid');
    expect(timeline).toContain('(not delivered yet)');
    // More than is left: refused, and what was typed comes back as typed (never the whole amount left).
    await page.fill('#refund_amount', '5000.00');
    await page.fill('#reference', 'one bottle broken');
    await page.click('#refund-form button');
    await page.waitForSelector('p.error');
    expect(await page.inputValue('#refund_amount')).toBe('5000.00');
    expect(await page.inputValue('#reference')).toBe('one bottle broken');
    // A refund from the console: the amount, a confirmation that says exactly what, then the notice.
    await page.fill('#refund_amount', '20.00');
    await page.click('#refund-form button');
    expect(await page.textContent('#refund-question')).toContain('Refund 20.00 NZD of order');
    expect(await page.textContent('#refund-reference')).toBe('Its reference: one bottle broken');
    await page.click('#confirm-refund');
    await page.waitForURL(/notice=refunded/);
    expect(await page.textContent('p.notice')).toBe('The refund was made.');
    expect(await page.textContent('#fields')).toContain('NZ$20.00');
    // Paid and partly refunded says so, here and in the list.
    expect(await page.textContent('#fields .status-paid')).toBe('paid, refunded NZ$20.00 of NZ$120.00');
    await page.screenshot({ path: screenshotPath('console-transaction'), fullPage: true });

    await page.click('button[lang=zh-CN]');
    await page.waitForSelector('html[lang=zh-CN]');
    expect(await page.textContent('h1')).toContain('交易');
    expect(await page.textContent('#timeline')).toContain('状态：已支付');
    expect(await page.textContent('#timeline')).toContain('尚未送达');
    await page.screenshot({ path: screenshotPath('console-transaction-zh'), fullPage: true });
    await page.goto(`${base}/console`);
    expect(await page.textContent('h1')).toBe('概览');
    await page.screenshot({ path: screenshotPath('console-dashboard-zh'), fullPage: true });
    await page.goto(`${base}/console/transactions?status=paid`);
    expect(await page.textContent('#transactions')).toContain(paid.merchant_reference);
    await page.screenshot({ path: screenshotPath('console-transactions-zh'), fullPage: true });

    const res = await page.goto(`${base}/console/transactions/${foreign.order_id}`);
    expect(res?.status()).toBe(404);
    expect(await page.textContent('main')).not.toContain(foreign.merchant_reference);
    await context.close();
  });

  it("fits a phone: the audit log's long entries wrap inside its table, and the page is no wider than the screen", async () => {
    // An entry as a provider account's change writes it: JSON without a space to break at.
    const after = JSON.stringify({
      provider: 'wechatpay',
      mchid: '1900000109',
      appid: 'wxd678efh567hg6787',
      serial_no: '5157F09EFDC096DE15EBE81A47057A7232F1B8E1',
      endpoint: 'https://api.mch.weixin.qq.com/v3/pay/transactions/native',
      private_key: 'sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
    });
    await audit(
      gw.ctx,
      { kind: 'cli', name: 'test' },
      { action: 'channel.set', object: `${gw.merchant.wallet_id} wechat`, after },
    );
    const invite = await inviteUser(
      gw.ctx,
      { kind: 'cli', name: 'test' },
      { email: 'ops@phone.example', kind: 'operator', role: 'admin', organisation_id: null },
    );
    const context = await newContext(browser, { ...MOBILE, locale: 'en-GB' });
    const page = await context.newPage();
    await acceptInvitation(page, invite.link, 'ops@phone.example');
    await page.goto(`${new URL(invite.link).origin}/console/audit`);
    expect(await page.textContent('#audit')).toContain('sha256:9f86d081');
    // Sideways scrolling stays inside the table's frame, and the table is a few screens wide at most (the JSON alone is about 2,500 px on one line).
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    expect(await page.evaluate(() => document.querySelector('#audit')!.getBoundingClientRect().width)).toBeLessThan(
      1300,
    );
    await context.close();
  });

  it('fits a phone: the sign-in page in Chinese from the browser language', async () => {
    const context = await newContext(browser, {
      ...MOBILE,
      locale: 'zh-CN',
      extraHTTPHeaders: { 'accept-language': 'zh-CN,zh;q=0.9' },
    });
    const page = await context.newPage();
    await page.goto(`${gw.url}/`);
    await page.waitForURL(/\/console\/sign-in$/);
    expect(await page.textContent('h1')).toBe('登录');
    // Nothing wider than the screen.
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    await page.screenshot({ path: screenshotPath('console-sign-in-zh-mobile') });
    await context.close();
  });
});
