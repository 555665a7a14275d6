// The hosted page's colours: each payment method's accent is the background of its pay button
// (white text) and the colour of its links, QR caption and copy buttons on the white card, so it
// must reach WCAG AA's 4.5:1 against white (normal-sized text, 16 px semibold at most).
import { describe, expect, it } from 'vitest';
import { findAsset } from '../../src/pages/assets.js';
import { METHOD_NAMES } from '../../src/pages/checkout-view.js';

function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5]
    .map((i) => parseInt(hex.slice(i, i + 2), 16) / 255)
    .map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

function contrast(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

describe('accent colours', () => {
  const css = findAsset('checkout.css')!.body.toString('utf8');
  const accents = new Map([...css.matchAll(/\.m-([a-z_]+) \{ --accent: (#[0-9a-f]{6}); \}/g)].map((m) => [m[1], m[2]]));

  it('every hosted-checkout method has one', () => {
    expect([...accents.keys()].sort()).toEqual(Object.keys(METHOD_NAMES).sort());
  });

  for (const method of Object.keys(METHOD_NAMES)) {
    it(`${method}: white text on it, and it as text on white, reach 4.5:1`, () => {
      expect(contrast(accents.get(method)!, '#ffffff')).toBeGreaterThanOrEqual(4.5);
    });
  }
});
