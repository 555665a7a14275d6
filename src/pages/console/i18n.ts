import { EN, type MessageKey } from './messages-en.js';
import { ZH } from './messages-zh.js';

// The console's languages: English and Simplified Chinese. Chosen by the `lang` cookie (the
// switch on every page sets it), else by Accept-Language, else English.

export type Lang = 'en' | 'zh';
export const LANGS: readonly Lang[] = ['en', 'zh'];
const CATALOGUES: Readonly<Record<Lang, Readonly<Record<MessageKey, string>>>> = { en: EN, zh: ZH };
/** BCP 47 tags for `lang=` attributes and Intl. */
export const LOCALE: Readonly<Record<Lang, string>> = { en: 'en-GB', zh: 'zh-CN' };

export function isLang(v: unknown): v is Lang {
  return v === 'en' || v === 'zh';
}

/** The language for a request: its cookie, else the first of Accept-Language's ranges we have (by q). */
export function chooseLang(cookie: string | undefined, acceptLanguage: string | undefined): Lang {
  if (isLang(cookie)) return cookie;
  const ranges = (acceptLanguage ?? '')
    .split(',')
    .map((part, i) => {
      const [tag = '', ...params] = part.trim().toLowerCase().split(';');
      const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
      return { tag, q: q === undefined ? 1 : Number(q.slice(2)) || 0, i };
    })
    .filter((r) => r.tag !== '' && r.q > 0)
    .sort((a, b) => b.q - a.q || a.i - b.i);
  for (const { tag } of ranges) {
    if (tag === 'zh' || tag.startsWith('zh-')) return 'zh';
    if (tag === 'en' || tag.startsWith('en-')) return 'en';
  }
  return 'en';
}

/** A key is a MessageKey; one made at run time (`tx.host_type_${n}`) is looked up as it is. */
export type Translate = (key: string, params?: Readonly<Record<string, string | number>>) => string;

/** The translator for a language: a key's text with `{name}` replaced (not escaped: the templates escape). */
export function translator(lang: Lang): Translate {
  const catalogue = CATALOGUES[lang];
  return (key, params = {}) => {
    return interpolate(
      (catalogue as Record<string, string>)[key] ?? (EN as Record<string, string>)[key] ?? key,
      params,
    );
  };
}

/** `{name}` in a catalogue's text replaced by the parameter (not escaped: the templates escape). */
export function interpolate(text: string, params: Readonly<Record<string, string | number>>): string {
  return text.replace(/\{(\w+)\}/g, (m, name: string) => (name in params ? String(params[name]) : m));
}

export function catalogue(lang: Lang): Readonly<Record<string, string>> {
  return CATALOGUES[lang];
}
