import { describe, expect, it } from 'vitest';
import { asciiUrl } from './ascii-url.js';

const ASCII = /^[\x21-\x7e]+$/;

describe('asciiUrl', () => {
  it('leaves an ASCII URL exactly as it was, even one a parser would rewrite', () => {
    for (const url of [
      'https://shop.example/back?cart=3#top',
      'HTTP://Shop.Example:80/a/./b?x=%41',
      'https://shop.example/a%2Fb?q=a+b&r=',
    ]) {
      expect(asciiUrl(url)).toBe(url);
    }
  });

  it.each([
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
    [
      'an emoji in the query and fragment',
      'https://shop.example/back?mood=😀#🎉',
      'https://shop.example/back?mood=%F0%9F%98%80#%F0%9F%8E%89',
    ],
    ['an internationalised host name', 'https://例子.测试/back', 'https://xn--fsqu00a.xn--0zwm56d/back'],
    [
      'a Cyrillic host with a port',
      'http://пример.рф:8443/назад',
      'http://xn--e1afmkfd.xn--p1ai:8443/%D0%BD%D0%B0%D0%B7%D0%B0%D0%B4',
    ],
    [
      'Latin-1 letters',
      'https://café.example/crème?brûlée=1',
      'https://xn--caf-dma.example/cr%C3%A8me?br%C3%BBl%C3%A9e=1',
    ],
    ['user information', 'https://ü:pässword@shop.example/', 'https://%C3%BC:p%C3%A4ssword@shop.example/'],
  ])('writes %s in ASCII, as a browser sends it', (_what, url, expected) => {
    expect(asciiUrl(url)).toBe(expected);
    expect(asciiUrl(url)).toMatch(ASCII);
    // The same address: a browser resolves both to one URL.
    expect(new URL(asciiUrl(url)).href).toBe(new URL(url).href);
  });

  it('percent-encodes what it cannot parse, so the result is ASCII all the same', () => {
    expect(asciiUrl('not a url/路径 x')).toBe('not%20a%20url/%E8%B7%AF%E5%BE%84%20x');
    expect(asciiUrl('http://[bad/\ud800')).toBe('http://[bad/%EF%BF%BD');
    expect(asciiUrl('http://[bad/\ud800')).toMatch(ASCII);
  });
});
