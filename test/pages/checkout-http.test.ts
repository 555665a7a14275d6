// The hosted page's HTTP contract, without a browser: the nonce as a one-time credential and the
// visit cookie, the live status, the back link, the sandbox app's return, and failure pages.
// (Over 300 lines: one contract, read in one place; each case is short.)
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DatabaseUnavailable } from '../../src/ports/store.js';
import { verifyRedirection } from '../../sdk/signing.js';
import { ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';
import { until } from '../support/wait.js';
import { CHECKOUT_VISIT_MS, hashPageToken } from '../../src/usecases/checkout-visit.js';

const DESKTOP_UA =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
const PHONE_UA =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';
const WECHAT_UA =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 MicroMessenger/8.0.49(0x18003137) NetType/WIFI Language/en';

let gw: TestGateway;

interface Visit {
  nonce: string;
  order_id: string;
  merchant_reference: string;
  path: string;
  cookie: string;
  setCookie: string;
  first: Response;
  html: string;
}

async function visit(over: Record<string, string> = {}, ua = DESKTOP_UA): Promise<Visit> {
  const { reply, order_id, merchant_reference } = await gw.create({
    backPage_url: 'https://shop.example/cart',
    return_url: 'https://shop.example/done?o=1',
    ...over,
  });
  const path = `/v2/checkout/${reply.nonce}`;
  const first = await fetch(gw.url + path, { headers: { 'user-agent': ua } });
  const setCookie = first.headers.get('set-cookie') ?? '';
  return {
    nonce: reply.nonce,
    order_id,
    merchant_reference,
    path,
    cookie: setCookie.split(';')[0],
    setCookie,
    first,
    html: await first.text(),
  };
}

function get(path: string, cookie?: string, ua = DESKTOP_UA): Promise<Response> {
  return fetch(gw.url + path, { headers: { 'user-agent': ua, ...(cookie && { cookie }) } });
}

function post(path: string, cookie?: string, body = ''): Promise<Response> {
  return fetch(gw.url + path, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie && { cookie }) },
    body,
  });
}

// The visit is stored (migration 0003, useNonce, findCheckoutVisit): both engines.
describe.each(ENGINES)('hosted page on %s', (engine) => {
  beforeAll(async () => {
    gw = await startTestGateway(engine);
  });
  afterAll(async () => gw?.close());

  describe('the page and its nonce', () => {
    it('a first visit that meets the database away once the nonce is used still gets its cookie, so the reload resumes it', async () => {
      const { reply } = await gw.create();
      const path = `/v2/checkout/${String(reply.nonce)}`;
      const away = vi
        .spyOn(gw.ctx.credentials, 'user')
        .mockRejectedValueOnce(new DatabaseUnavailable('no writable PostgreSQL primary'));
      const first = await get(path);
      away.mockRestore();
      expect(first.status).toBe(503);
      expect(await first.text()).toContain('Please reload this page in a few seconds');
      const cookie = (first.headers.get('set-cookie') ?? '').split(';')[0];
      expect(cookie).toMatch(/^gw_visit=/);
      // The reload, as the page says: the same visit, not "already used".
      expect((await get(path, cookie)).status).toBe(200);
    });

    it('serves the page once and hands the browser an HttpOnly, SameSite=Lax visit cookie for that path', async () => {
      const v = await visit();
      expect(v.first.status).toBe(200);
      expect(v.first.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(v.first.headers.get('cache-control')).toBe('no-store');
      expect(v.first.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect(v.setCookie).toMatch(
        new RegExp(
          `^gw_visit=[A-Za-z0-9_-]{32}; Path=/v2/checkout/${v.nonce}; Max-Age=${CHECKOUT_VISIT_MS / 1000}; HttpOnly; SameSite=Lax$`,
        ),
      );
      expect(v.html).toContain('Test Merchant');
      expect(v.html).toContain('NZ$120.00');
      expect(v.html).toContain(v.merchant_reference);
      // The store keeps only a hash of the token.
      const token = v.cookie.split('=')[1];
      expect(await gw.store.transactions.findCheckoutVisit(v.nonce, token)).toBeUndefined();
      expect(await gw.store.transactions.findCheckoutVisit(v.nonce, hashPageToken(token))).toMatchObject({
        transaction: { order_id: v.order_id },
      });
    });

    it('keeps working for the same visit (reload) and refuses any other browser', async () => {
      const v = await visit();
      const reload = await get(v.path, v.cookie);
      expect(reload.status).toBe(200);
      expect(reload.headers.get('set-cookie')).toBeNull();
      const other = await get(v.path);
      expect(other.status).toBe(410);
      const html = await other.text();
      expect(html).toContain('already been opened');
      expect(html).not.toContain('Test Merchant');
      const forged = await get(v.path, 'gw_visit=forged-token-forged-token-forged');
      expect(forged.status).toBe(410);
    });

    it('hands an alipay visit opened in WeChat to the browser by its address, and only with its token', async () => {
      const { reply } = await gw.create({ payment_method: 'alipay' });
      const path = `/v2/checkout/${reply.nonce}`;
      const inWechat = await fetch(gw.url + path, { redirect: 'manual', headers: { 'user-agent': WECHAT_UA } });
      expect(inWechat.status).toBe(303);
      const address = inWechat.headers.get('location')!;
      expect(address).toMatch(new RegExp(`^${path}\\?visit=[A-Za-z0-9_-]{32}$`));
      expect(inWechat.headers.get('set-cookie')).toContain(`gw_visit=${address.split('=')[1]};`);
      expect((await get(`${path}?visit=forged-token-forged-token-forged`, undefined, PHONE_UA)).status).toBe(410);
      const handed = await fetch(gw.url + address, { redirect: 'manual', headers: { 'user-agent': PHONE_UA } });
      expect(handed.status).toBe(303);
      expect(handed.headers.get('location')).toBe(path);
      const cookie = handed.headers.get('set-cookie')!.split(';')[0];
      expect((await get(path, cookie, PHONE_UA)).status).toBe(200);
      // WeChat Pay is paid inside WeChat: its address carries nothing.
      const wechat = await gw.create({ payment_method: 'wechat' });
      expect(
        (
          await fetch(`${gw.url}/v2/checkout/${wechat.reply.nonce}`, {
            redirect: 'manual',
            headers: { 'user-agent': WECHAT_UA },
          })
        ).status,
      ).toBe(200);
    });

    it('has one top-level heading, the merchant it pays (for screen readers to find)', async () => {
      const v = await visit();
      expect(v.html.match(/<h1[ >]/g)).toHaveLength(1);
      expect(v.html).toMatch(/<h1 class="merchant-name" id="merchant-name">Test Merchant<\/h1>/);
    });

    it('is not used up by a HEAD request', async () => {
      const { reply } = await gw.create();
      const head = await fetch(`${gw.url}/v2/checkout/${reply.nonce}`, { method: 'HEAD' });
      expect(head.status).toBe(404);
      expect((await get(`/v2/checkout/${reply.nonce}`)).status).toBe(200);
    });

    it('answers unknown and malformed nonces with a 404 page', async () => {
      for (const path of ['/v2/checkout/0123456789abcdef0123456789abcdef', '/v2/checkout/%3Cscript%3E']) {
        const res = await get(path);
        expect(res.status).toBe(404);
        expect(await res.text()).toContain('Payment link not found');
      }
    });

    it('answers mangled payment links that no route serves with the same page, not API JSON', async () => {
      for (const path of [
        `/v2/checkout/${'a'.repeat(150)}`,
        '/v2/checkout/',
        '/v2/checkout//abc',
        '/v2/checkout/%ZZ',
      ]) {
        const res = await get(path);
        expect(res.status, path).toBe(404);
        expect(res.headers.get('content-type'), path).toContain('text/html');
        expect(await res.text(), path).toContain('Payment link not found');
      }
      // Only the page's own address: an API path keeps answering JSON.
      expect(await (await get('/v2/transaction/%ZZ?user_id=U1&signature=x')).json()).toMatchObject({ code: 3 });
    });

    it('does not open a merchant-hosted nonce as a hosted page', async () => {
      const { reply } = await gw.create({ host_type: '1' });
      expect((await get(`/v2/checkout/${reply.nonce}`)).status).toBe(404);
    });

    it('says when a nonce or a visit has expired', async () => {
      const unused = await gw.create();
      const v = await visit();
      const realNow = gw.ctx.now;
      gw.ctx.now = () => realNow() + CHECKOUT_VISIT_MS + 1;
      try {
        const late = await get(`/v2/checkout/${unused.reply.nonce}`);
        expect(late.status).toBe(410);
        expect(await late.text()).toContain('expired');
        const stale = await get(v.path, v.cookie);
        expect(stale.status).toBe(410);
        expect(await stale.text()).toContain('expired');
      } finally {
        gw.ctx.now = realNow;
      }
    });

    it('escapes what the merchant sent', async () => {
      const v = await visit({ product_name: '<script>alert(1)</script> & "wine"' });
      expect(v.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;wine&quot;');
      expect(v.html).not.toContain('<script>alert');
    });

    it('answers an unexpected failure with a page that names a request id and nothing else', async () => {
      const { reply } = await gw.create();
      const original = gw.store.transactions.useNonce.bind(gw.store.transactions);
      gw.store.transactions.useNonce = async () => {
        throw new Error('database exploded at /secret/path');
      };
      try {
        const res = await get(`/v2/checkout/${reply.nonce}`);
        expect(res.status).toBe(500);
        const html = await res.text();
        expect(html).toContain('Something went wrong');
        expect(html).toMatch(/quote reference req_/);
        expect(html).not.toContain('exploded');
      } finally {
        gw.store.transactions.useNonce = original;
      }
    });

    it('serves its stylesheet and script from the gateway itself', async () => {
      const v = await visit();
      const href = /<link rel="stylesheet" href="([^"]+)"/.exec(v.html)![1];
      const src = /<script src="([^"]+)"/.exec(v.html)![1];
      expect(href).toMatch(/^\/assets\/checkout\.css\?v=[0-9a-f]{12}$/);
      // Nothing is loaded from another host (links to the sandbox app are navigation, not assets).
      expect(v.html).not.toMatch(/<(?:link|script|img|iframe)\b[^>]*(?:href|src)="(?:https?:)?\/\//);
      expect(v.html).not.toMatch(/@import|url\(/);
      const css = await get(href);
      expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
      expect(css.headers.get('cache-control')).toContain('immutable');
      expect((await get(src)).headers.get('content-type')).toBe('text/javascript; charset=utf-8');
      expect((await get('/assets/nope.js')).status).toBe(404);
    });
  });

  describe('live status', () => {
    it('needs the visit cookie', async () => {
      const v = await visit();
      const res = await get(`${v.path}/status`);
      expect(res.status).toBe(410);
      expect(await res.json()).toMatchObject({ status: 'invalid', reason: 'used' });
    });

    it('answers pending at once without wait, and wakes a waiting poll when the order is paid', async () => {
      const v = await visit({ payment_method: 'alipay' });
      expect(await (await get(`${v.path}/status`, v.cookie)).json()).toEqual({ status: 'pending' });
      const waiting = get(`${v.path}/status?wait=1`, v.cookie);
      await gw.pay(v.order_id);
      const body = await (await waiting).json();
      expect(body.status).toBe('paid');
      expect(body.html).toContain('Payment received');
      const q = new URL(body.redirect_url).searchParams;
      expect(body.redirect_url.startsWith('https://shop.example/done?o=1&merchant_reference=')).toBe(true);
      expect(verifyRedirection(q, gw.merchant.api_key)).toBe(true);
    });

    it('a waiting poll whose page goes away stops waiting', async () => {
      const v = await visit({ payment_method: 'alipay' });
      const before = gw.ctx.signals.waiting;
      const abort = new AbortController();
      const pending = fetch(`${gw.url}${v.path}/status?wait=1`, {
        headers: { 'user-agent': DESKTOP_UA, cookie: v.cookie },
        signal: abort.signal,
      }).catch(() => 'aborted');
      await until('the poll waits', () => gw.ctx.signals.waiting > before);
      abort.abort();
      expect(await pending).toBe('aborted');
      await until('the waiter is released', () => gw.ctx.signals.waiting === before);
    });

    it('decides the redirection from the browser asking: an alipay phone browser stays on the page', async () => {
      const v = await visit({ payment_method: 'alipay' }, PHONE_UA);
      await gw.pay(v.order_id);
      const body = await (await get(`${v.path}/status?wait=1`, v.cookie, PHONE_UA)).json();
      expect(body).toMatchObject({ status: 'paid', redirect_url: null });
      expect(body.html).toContain('Back to Test Merchant');
    });

    it('renders a finished order as its result on reload', async () => {
      const v = await visit({ payment_method: 'polipay' });
      await gw.pay(v.order_id, 'failed');
      const html = await (await get(v.path, v.cookie)).text();
      expect(html).toContain('Payment failed');
      expect(html).toContain('status=cancel_or_fail');
    });
  });

  describe('back link', () => {
    it('cancels the pending order and sends the customer to backPage_url', async () => {
      const v = await visit();
      const res = await post(`${v.path}/cancel`, v.cookie);
      expect(res.status).toBe(303);
      expect(res.headers.get('location')).toBe('https://shop.example/cart');
      expect((await gw.store.transactions.find(v.order_id))!.status).toBe('canceled');
      // Nothing is due on a canceled order: its page says the amount, not "Amount due".
      const after = await (await get(v.path, v.cookie)).text();
      expect(after).toContain('<p class="label" id="amount-label">Amount</p>');
      expect(after).not.toContain('Amount due');
      // A sandbox order's page says it is a test.
      expect(after).toContain('id="sandbox-banner" role="status">Test payment (sandbox): no money is taken.</p>');
    });

    it('sends the customer back even when the payment app has the payment open (the order stays pending)', async () => {
      const v = await visit();
      await fetch(`${gw.url}/sandbox/pay/${v.order_id}`);
      const res = await post(`${v.path}/cancel`, v.cookie);
      expect(res.headers.get('location')).toBe('https://shop.example/cart');
      expect((await gw.store.transactions.find(v.order_id))!.status).toBe('pending');
    });

    it('shows the result instead when the order is already paid, or when there is no backPage_url', async () => {
      const paid = await visit();
      await gw.pay(paid.order_id);
      const res = await post(`${paid.path}/cancel`, paid.cookie);
      expect(res.headers.get('location')).toBe(paid.path);
      expect((await gw.store.transactions.find(paid.order_id))!.status).toBe('paid');
      const noBack = await visit({ backPage_url: undefined as unknown as string });
      expect((await post(`${noBack.path}/cancel`, noBack.cookie)).headers.get('location')).toBe(noBack.path);
    });

    it('cannot be used without the visit cookie', async () => {
      const v = await visit();
      expect((await post(`${v.path}/cancel`)).status).toBe(410);
      expect((await gw.store.transactions.find(v.order_id))!.status).toBe('pending');
    });
  });

  describe('sandbox payment app', () => {
    it('returns the browser to the hosted page it came from, and only there', async () => {
      const a = await gw.create();
      const back = await post(
        `/sandbox/pay/${a.order_id}`,
        undefined,
        new URLSearchParams({ result: 'paid', return_to: `/v2/checkout/${a.reply.nonce}` }).toString(),
      );
      expect(back.status).toBe(303);
      expect(back.headers.get('location')).toBe(`/v2/checkout/${a.reply.nonce}`);
      const b = await gw.create();
      const away = await post(
        `/sandbox/pay/${b.order_id}`,
        undefined,
        new URLSearchParams({ result: 'paid', return_to: 'https://evil.example/' }).toString(),
      );
      expect(away.status).toBe(200);
      expect(await away.text()).toContain('is now paid.');
    });

    it('keeps its contract: ids #approve/#decline/#reject, field result, JSON answers', async () => {
      const { order_id } = await gw.create({ payment_method: 'payid' });
      const html = await (await get(`/sandbox/pay/${order_id}`)).text();
      for (const id of ['approve', 'decline', 'reject']) expect(html).toContain(`id="${id}"`);
      expect(html).toContain('name="result" value="paid"');
      expect((await gw.store.transactions.find(order_id))!.channel_state).toBe('scanned');
      expect(await gw.pay(order_id, 'rejected')).toMatchObject({ code: 0, status: 'rejected' });
    });
  });
});
