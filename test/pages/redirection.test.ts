import { describe, expect, it } from 'vitest';
import { verifyRedirection } from '../../sdk/signing.js';
import type { Status } from '../../src/domain/transaction.js';
import {
  appendQuery,
  browserOf,
  redirectionParams,
  redirectionStatus,
  redirectionUrl,
  type BrowserKind,
} from '../../src/domain/redirection.js';

// Real user agents, as the browsers send them.
const UAS: Record<string, [string, BrowserKind]> = {
  'WeChat on iPhone': [
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 MicroMessenger/8.0.49(0x18003137) NetType/WIFI Language/zh_CN',
    'wechat',
  ],
  'WeChat on Android': [
    'Mozilla/5.0 (Linux; Android 13; V2183A Build/TP1A.220624.014; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/116.0.0.0 Mobile Safari/537.36 XWEB/1160065 MMWEBSDK/20231202 MMWEBID/2247 MicroMessenger/8.0.47.2560(0x28002F30) WeChat/arm64 Weixin NetType/WIFI Language/zh_CN ABI/arm64',
    'wechat',
  ],
  'WeChat for Windows': [
    'Mozilla/5.0 (Windows NT 10.0; WOW64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/81.0.4044.138 Safari/537.36 NetType/WIFI MicroMessenger/7.0.20.1781(0x6700143B) WindowsWechat(0x63090a13)',
    'wechat',
  ],
  'Alipay on Android': [
    'Mozilla/5.0 (Linux; U; Android 12; zh-CN; M2012K11AC Build/SKQ1.211006.001) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/69.0.3497.100 UWS/3.22.2.33 Mobile Safari/537.36 UCBS/3.22.2.33_220223200704 ChannelId(2) NebulaSDK/1.8.100112 Nebula AlipayDefined(nt:WIFI,ws:393|0|2.75) AliApp(AP/10.2.96.8000) AlipayClient/10.2.96.8000 Language/zh-Hans useStatusBar/true isConcaveScreen/true Region/CNAriver/1.0.0',
    'alipay',
  ],
  'Safari on iPhone': [
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
    'mobile',
  ],
  'Chrome on Android': [
    'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.6478.122 Mobile Safari/537.36',
    'mobile',
  ],
  'Safari on an old iPad': [
    'Mozilla/5.0 (iPad; CPU OS 12_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/12.1.2 Mobile/15E148 Safari/604.1',
    'mobile',
  ],
  'Chrome on Windows': [
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36',
    'desktop',
  ],
  'Safari on a Mac (and iPadOS 13+)': [
    'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15',
    'desktop',
  ],
  'Firefox on Linux': ['Mozilla/5.0 (X11; Linux x86_64; rv:127.0) Gecko/20100101 Firefox/127.0', 'desktop'],
  'no user agent': ['', 'desktop'],
};

describe('browserOf', () => {
  for (const [name, [ua, kind]] of Object.entries(UAS)) {
    it(`${name} is ${kind}`, () => expect(browserOf(ua)).toBe(kind));
  }
  it('treats a missing header as desktop', () => expect(browserOf(undefined)).toBe('desktop'));
});

describe('redirectionStatus', () => {
  const browsers: BrowserKind[] = ['wechat', 'alipay', 'mobile', 'desktop'];
  const row = (method: string, status: Status) => browsers.map((b) => redirectionStatus(method, status, b));

  it('wechat: only in the WeChat browser, paid or cancel_or_fail', () => {
    expect(row('wechat', 'paid')).toEqual(['paid', null, null, null]);
    expect(row('wechat', 'failed')).toEqual(['cancel_or_fail', null, null, null]);
    expect(row('wechat', 'canceled')).toEqual(['cancel_or_fail', null, null, null]);
  });

  it('alipay: only in a desktop browser, and only when paid', () => {
    expect(row('alipay', 'paid')).toEqual([null, null, null, 'paid']);
    expect(row('alipay', 'failed')).toEqual([null, null, null, null]);
    expect(row('alipay', 'canceled')).toEqual([null, null, null, null]);
  });

  it('bank methods (onlineBank): every browser, paid or cancel_or_fail', () => {
    for (const method of ['polipay', 'moneymore', 'payid', 'upi_upop', 'coin_payments']) {
      expect(row(method, 'paid')).toEqual(['paid', 'paid', 'paid', 'paid']);
      for (const status of ['failed', 'rejected', 'canceled'] as const)
        expect(row(method, status)).toEqual(Array(4).fill('cancel_or_fail'));
    }
  });

  it('never while pending', () => {
    for (const method of ['wechat', 'alipay', 'polipay'])
      expect(row(method, 'pending')).toEqual([null, null, null, null]);
  });
});

describe('appendQuery', () => {
  const p = { a: '1', b: 'x y&z' };
  it('starts a query string', () =>
    expect(appendQuery('https://shop.example/done', p)).toBe('https://shop.example/done?a=1&b=x+y%26z'));
  it('appends to an existing one with &', () =>
    expect(appendQuery('https://shop.example/done?order=7', p)).toBe(
      'https://shop.example/done?order=7&a=1&b=x+y%26z',
    ));
  it('does not double a trailing ? or &', () => {
    expect(appendQuery('https://shop.example/done?', p)).toBe('https://shop.example/done?a=1&b=x+y%26z');
    expect(appendQuery('https://shop.example/done?order=7&', p)).toBe(
      'https://shop.example/done?order=7&a=1&b=x+y%26z',
    );
  });
  it('keeps a fragment at the end', () =>
    expect(appendQuery('https://shop.example/done?o=1#top', { a: '1' })).toBe('https://shop.example/done?o=1&a=1#top'));
});

describe('redirection parameters', () => {
  const order = {
    merchant_reference: 'ORD-1',
    payment_method: 'polipay',
    status: 'paid' as const,
    currency: 'NZD',
    amount: 12000,
    return_url: 'https://shop.example/done?o=1',
  };

  it('are the spec fields, signed as the SDK verifies them', () => {
    const params = redirectionParams(order, 'paid', 'KEY1');
    expect(params).toMatchObject({
      merchant_reference: 'ORD-1',
      payment_method: 'onlineBank',
      status: 'paid',
      currency: 'NZD',
      amount: '120.00',
    });
    expect(verifyRedirection(params, 'KEY1')).toBe(true);
    expect(verifyRedirection(params, 'KEY2')).toBe(false);
  });

  it('make the URL, or none when the browser stays', () => {
    const url = redirectionUrl({ ...order, payment_method: 'alipay' }, 'desktop', 'KEY1')!;
    const q = new URL(url).searchParams;
    expect(q.get('o')).toBe('1');
    expect(q.get('payment_method')).toBe('alipay');
    expect(verifyRedirection(q, 'KEY1')).toBe(true);
    expect(redirectionUrl({ ...order, payment_method: 'alipay' }, 'mobile', 'KEY1')).toBeNull();
  });
});
