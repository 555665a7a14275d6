// The hosted payment page and the sandbox payment app in Chinese: chosen from Accept-Language,
// switched with the page's link (a cookie that sticks, also for the live status's result panel
// and the console), amounts written the same way in both languages.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.js';

const DESKTOP_UA =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';

describe('hosted pages in Chinese', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway('sqlite');
  });
  afterAll(async () => gw?.close());

  async function open(headers: Record<string, string> = {}) {
    const { reply, order_id } = await gw.create({
      payment_method: 'alipay',
      backPage_url: 'https://shop.example/cart',
    });
    const path = `/v2/checkout/${reply.nonce}`;
    const res = await fetch(gw.url + path, { headers: { 'user-agent': DESKTOP_UA, ...headers } });
    const visit = res.headers
      .getSetCookie()
      .find((c) => c.startsWith('gw_visit='))!
      .split(';')[0];
    return { path, order_id, visit, res, html: await res.text() };
  }

  it('a Chinese browser gets the page in Chinese; an English one in English', async () => {
    const zh = await open({ 'accept-language': 'zh-CN,zh;q=0.9,en;q=0.8' });
    expect(zh.html).toContain('<html lang="zh-CN"');
    for (const text of [
      '应付金额',
      '支付宝',
      '扫码支付',
      '请用支付宝扫码',
      '正在等待您的付款',
      '取消并返回',
      'English',
    ])
      expect(zh.html).toContain(text);
    expect(zh.html).toContain('NZ$120.00');
    expect(zh.html).not.toContain('Amount due');
    const en = await open({ 'accept-language': 'en-NZ' });
    expect(en.html).toContain('<html lang="en-GB"');
    expect(en.html).toContain('Amount due');
    expect(en.html).toContain('简体中文');
  });

  it('the switch sets a cookie that sticks: the next page, the result panel and the sandbox app follow it', async () => {
    const v = await open({ 'accept-language': 'en' });
    const switched = await fetch(`${gw.url}${v.path}?lang=zh`, {
      headers: { 'user-agent': DESKTOP_UA, 'accept-language': 'en', cookie: v.visit },
    });
    const lang = switched.headers.getSetCookie().find((c) => c.startsWith('gw_lang='))!;
    expect(lang).toMatch(/^gw_lang=zh; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax$/);
    expect(await switched.text()).toContain('应付金额');
    const cookie = `${v.visit}; gw_lang=zh`;
    const app = await fetch(`${gw.url}/sandbox/pay/${v.order_id}`, { headers: { cookie, 'accept-language': 'en' } });
    const appHtml = await app.text();
    expect(appHtml).toContain('沙箱支付 App');
    expect(appHtml).toContain('确认付款');
    await gw.pay(v.order_id);
    const status = await (
      await fetch(`${gw.url}${v.path}/status`, {
        headers: { cookie, 'user-agent': DESKTOP_UA, 'accept-language': 'en' },
      })
    ).json();
    expect(status.status).toBe('paid');
    expect(status.html).toContain('支付成功');
    // The console speaks the language chosen here too.
    expect(await (await fetch(`${gw.url}/console/sign-in`, { headers: { cookie: 'gw_lang=zh' } })).text()).toContain(
      '<html lang="zh-CN"',
    );
  });

  it('a link that is not valid says so in Chinese', async () => {
    const res = await fetch(`${gw.url}/v2/checkout/nosuchnonce`, { headers: { 'accept-language': 'zh-CN' } });
    expect(res.status).toBe(404);
    expect(await res.text()).toContain('未找到支付链接');
  });
});
