import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hmacSha256 } from './hmac.js';

const reference = (key: string, message: string) => createHmac('sha256', key).update(message, 'utf8').digest('hex');

describe('hmacSha256', () => {
  const keys = [
    '',
    'k',
    '111222333',
    'sk_live_' + 'f'.repeat(56),
    'x'.repeat(64),
    'y'.repeat(65),
    'z'.repeat(300),
    'clé-密钥-🔑',
    'é'.repeat(40),
  ];
  const messages = [
    '',
    'a',
    'merchant_reference=dsi39ej430sks03&user_id=U000334333111222333',
    'Pinot Noir, Otago — 黑皮诺 🍷',
    'lone \ud800 surrogate',
    'm'.repeat(5000),
  ];

  it('equals createHmac for keys of every length and script, and messages of every kind', () => {
    for (const key of keys) {
      for (const message of messages) {
        expect(hmacSha256(key, message, 'hex'), `${key.slice(0, 10)} / ${message.slice(0, 10)}`).toBe(
          reference(key, message),
        );
      }
    }
  });

  it('gives the same 32 bytes as a binary string', () => {
    const bin = hmacSha256('111222333', 'abc', 'binary');
    expect(bin).toHaveLength(32);
    expect(Buffer.from(bin, 'latin1').toString('hex')).toBe(reference('111222333', 'abc'));
  });

  it('messages around and past the scratch size (up to 16 KB of UTF-8) are right too', () => {
    for (const n of [5440, 5441, 16_320, 16_321, 40_000]) {
      const ascii = 'a'.repeat(n);
      const wide = '密'.repeat(Math.floor(n / 3));
      expect(hmacSha256('key', ascii, 'hex')).toBe(reference('key', ascii));
      expect(hmacSha256('key', wide, 'hex')).toBe(reference('key', wide));
    }
  });

  it('stays right for a key seen again after many others (the pad cache is bounded)', () => {
    expect(hmacSha256('first-key', 'm', 'hex')).toBe(reference('first-key', 'm'));
    for (let i = 0; i < 10_050; i++) hmacSha256(`key-${i}`, 'm', 'hex');
    expect(hmacSha256('first-key', 'm', 'hex')).toBe(reference('first-key', 'm'));
    expect(hmacSha256('key-17', 'other', 'hex')).toBe(reference('key-17', 'other'));
  });
});
