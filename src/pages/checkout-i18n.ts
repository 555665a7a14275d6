import { CHECKOUT_EN, type CheckoutKey } from './checkout-messages-en.js';
import { CHECKOUT_ZH } from './checkout-messages-zh.js';
import { chooseLang, interpolate, isLang, LOCALE, type Lang } from './console/i18n.js';

// The hosted checkout's and the sandbox app's languages: English and Simplified Chinese, chosen as
// the console's are (the `gw_lang` cookie, which the page's switch sets, else Accept-Language).

export { chooseLang, isLang, LOCALE, type Lang };

/** The cookie that keeps the language chosen with a page's switch (the console's too). */
export const LANG_COOKIE = 'gw_lang';

export type Tr = (key: CheckoutKey, params?: Readonly<Record<string, string | number>>) => string;

const CATALOGUES: Readonly<Record<Lang, Readonly<Record<CheckoutKey, string>>>> = { en: CHECKOUT_EN, zh: CHECKOUT_ZH };

export function checkoutTranslator(lang: Lang): Tr {
  const catalogue = CATALOGUES[lang];
  return (key, params = {}) => interpolate(catalogue[key] ?? CHECKOUT_EN[key], params);
}

export function checkoutCatalogue(lang: Lang): Readonly<Record<string, string>> {
  return CATALOGUES[lang];
}

/**
 * The language of a hosted or sandbox page: `?lang=` (the page's switch; the answer then sets the
 * cookie, `setCookie`, so that it sticks), else the cookie, else Accept-Language.
 */
export function pageLanguage(
  asked: unknown,
  cookieHeader: string | undefined,
  acceptLanguage: string | undefined,
): { lang: Lang; setCookie?: string } {
  if (isLang(asked))
    return {
      lang: asked,
      setCookie: `${LANG_COOKIE}=${asked}; Path=/; Max-Age=${365 * 86_400}; HttpOnly; SameSite=Lax`,
    };
  const cookie = (cookieHeader ?? '')
    .split(';')
    .map((part) => part.trim())
    .find((part) => part.startsWith(`${LANG_COOKIE}=`));
  return { lang: chooseLang(cookie?.slice(LANG_COOKIE.length + 1), acceptLanguage) };
}
