import { describe, expect, it } from 'vitest';
import { EN } from '../../src/pages/console/messages-en.js';
import { ZH } from '../../src/pages/console/messages-zh.js';
import { chooseLang, translator } from '../../src/pages/console/i18n.js';
import { CHECKOUT_EN } from '../../src/pages/checkout-messages-en.js';
import { CHECKOUT_ZH } from '../../src/pages/checkout-messages-zh.js';
import { AUDIT_ACTIONS } from '../../src/domain/console.js';
import { PAYMENT_METHODS, STATUSES } from '../../src/domain/transaction.js';

describe("the console catalogues and the hosted pages' catalogues", () => {
  it.each([
    ['console', EN, ZH],
    ['hosted checkout and sandbox app', CHECKOUT_EN, CHECKOUT_ZH],
  ] as const)(
    '%s: the same keys, each with the same {parameters}, none empty',
    (_name, en: Readonly<Record<string, string>>, zhCatalogue: Readonly<Record<string, string>>) => {
      expect(Object.keys(zhCatalogue).sort()).toEqual(Object.keys(en).sort());
      const params = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
      for (const [key, text] of Object.entries(en)) {
        const zh = zhCatalogue[key];
        expect(zh.trim(), key).not.toBe('');
        expect(params(zh), key).toEqual(params(text));
      }
    },
  );

  it('chooses the language from the cookie, then Accept-Language by q, then English', () => {
    expect(chooseLang('zh', 'en')).toBe('zh');
    expect(chooseLang(undefined, 'fr, zh-TW;q=0.8, en;q=0.5')).toBe('zh');
    expect(chooseLang(undefined, 'en;q=0.9, zh;q=0.95')).toBe('zh');
    expect(chooseLang(undefined, 'de')).toBe('en');
    expect(chooseLang('xx', undefined)).toBe('en');
    expect(translator('zh')('error.throttled', { minutes: 3 })).toBe('登录失败次数过多，请 3 分钟后再试。');
  });

  it('names every method, status, refund status and audit action in both languages; a method as the checkout names it', () => {
    for (const [catalogue, checkout] of [
      [EN, CHECKOUT_EN],
      [ZH, CHECKOUT_ZH],
    ] as const) {
      const c = catalogue as Readonly<Record<string, string>>;
      for (const m of PAYMENT_METHODS)
        expect(c[`method.${m}`], m).toBe((checkout as Record<string, string>)[`method.${m}`]);
      for (const s of STATUSES) expect(c[`status.${s}`], s).toBeTruthy();
      for (const s of ['pending', 'succeeded', 'failed']) expect(c[`refund.status_${s}`], s).toBeTruthy();
      for (const a of AUDIT_ACTIONS) expect(c[`audit.action.${a}`], a).toBeTruthy();
      for (const s of ['failing', 'waiting', 'delivered']) expect(c[`notifications.state_${s}`], s).toBeTruthy();
    }
  });

  it("labels a transaction's fields in words: no Chinese label is an API field name", () => {
    const fieldName = /^[a-z]+(_[a-z]+)+$/;
    for (const [key, text] of Object.entries(ZH)) {
      if (!key.startsWith('tx.') && !key.startsWith('refunds.') && !key.startsWith('notifications.')) continue;
      expect(fieldName.test(text), `${key}: ${text}`).toBe(false);
      expect(/[\u4e00-\u9fff]/.test(text) || /^[A-Z]/.test(text) || /\{/.test(text), `${key}: ${text}`).toBe(true);
    }
  });
});
