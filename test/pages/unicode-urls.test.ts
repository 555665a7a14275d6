// Merchant URLs with characters beyond ASCII (CJK, Cyrillic, emoji, internationalised host names):
// every redirect the gateway answers with carries them in their ASCII form, and the order is left
// as the cancel made it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyRedirection } from '../../sdk/signing.js';
import { ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';

const DESKTOP_UA =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
const ASCII = /^[\x21-\x7e]+$/;

/** What the merchant sent, and the address a browser sends for it (WHATWG URL serialisation). */
export const UNICODE_URLS: Array<[string, string, string]> = [
  [
    'a CJK path and query',
    'https://shop.example/购物车/返回?商品=葡萄酒',
    'https://shop.example/%E8%B4%AD%E7%89%A9%E8%BD%A6/%E8%BF%94%E5%9B%9E?%E5%95%86%E5%93%81=%E8%91%A1%E8%90%84%E9%85%92',
  ],
  [
    'a Cyrillic path',
    'https://shop.example/корзина?id=7',
    'https://shop.example/%D0%BA%D0%BE%D1%80%D0%B7%D0%B8%D0%BD%D0%B0?id=7',
  ],
  ['an emoji in the query', 'https://shop.example/back?mood=😀&x=1', 'https://shop.example/back?mood=%F0%9F%98%80&x=1'],
  ['an internationalised host name', 'https://例子.测试/返回', 'https://xn--fsqu00a.xn--0zwm56d/%E8%BF%94%E5%9B%9E'],
];

let gw: TestGateway;

async function openPage(
  over: Record<string, string>,
): Promise<{ path: string; cookie: string; order_id: string; html: string }> {
  const { reply, order_id } = await gw.create(over);
  const path = `/v2/checkout/${reply.nonce}`;
  const res = await fetch(gw.url + path, { headers: { 'user-agent': DESKTOP_UA } });
  expect(res.status).toBe(200);
  return { path, cookie: (res.headers.get('set-cookie') ?? '').split(';')[0], order_id, html: await res.text() };
}

const hrefs = (html: string) =>
  [...html.matchAll(/(?:href|url)=["']?([^"'>\s]+)/g)].map((m) => m[1].replaceAll('&amp;', '&'));

describe.each(ENGINES)('merchant URLs beyond ASCII on %s', (engine) => {
  beforeAll(async () => {
    gw = await startTestGateway(engine);
  });
  afterAll(async () => gw?.close());

  it.each(UNICODE_URLS)(
    'backPage_url with %s: "Cancel and return" cancels and redirects to its ASCII form',
    async (_what, url, ascii) => {
      const v = await openPage({ payment_method: 'alipay', backPage_url: url });
      const res = await fetch(`${gw.url}${v.path}/cancel`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie: v.cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: '',
      });
      expect(res.status).toBe(303);
      expect(res.headers.get('location')).toBe(ascii);
      expect((await gw.store.transactions.find(v.order_id))!.status).toBe('canceled');
      // The finished order's page links back the same way.
      const again = await (
        await fetch(gw.url + v.path, { headers: { 'user-agent': DESKTOP_UA, cookie: v.cookie } })
      ).text();
      expect(again).toContain('Payment canceled');
      expect(hrefs(again)).toContain(ascii);
    },
  );

  it.each(UNICODE_URLS)(
    'return_url with %s: the redirection goes to its ASCII form, with the signed parameters',
    async (_what, url, ascii) => {
      const v = await openPage({ payment_method: 'alipay', return_url: url });
      await gw.pay(v.order_id);
      const body = await (
        await fetch(`${gw.url}${v.path}/status?wait=1`, { headers: { 'user-agent': DESKTOP_UA, cookie: v.cookie } })
      ).json();
      expect(body.status).toBe('paid');
      expect(body.redirect_url).toMatch(ASCII);
      expect(body.redirect_url.startsWith(`${ascii}${ascii.includes('?') ? '&' : '?'}merchant_reference=`)).toBe(true);
      expect(verifyRedirection(new URL(body.redirect_url).searchParams, gw.merchant.api_key)).toBe(true);
      // The page that shows the result links there too, and its no-script refresh.
      const html = await (
        await fetch(gw.url + v.path, { headers: { 'user-agent': DESKTOP_UA, cookie: v.cookie } })
      ).text();
      const links = hrefs(html).filter((h) => h.includes('merchant_reference='));
      expect(links.length).toBeGreaterThanOrEqual(2);
      for (const link of links) expect(link).toBe(body.redirect_url);
    },
  );
});
