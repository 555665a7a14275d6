import { createSign, createVerify, generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { rsaSha256Sign } from './pem.js';

describe('rsaSha256Sign (off the event loop)', () => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });

  it('is SHA256withRSA with PKCS#1 v1.5: the very signature createSign gives, over the UTF-8 text', async () => {
    const text = 'app_id=2021&biz_content={"subject":"咖啡 ☕"}&method=alipay.trade.precreate';
    const expected = createSign('RSA-SHA256').update(text, 'utf8').sign(privateKey, 'base64');
    const got = await rsaSha256Sign(privateKey, text);
    expect(got).toBe(expected);
    expect(createVerify('RSA-SHA256').update(text, 'utf8').verify(publicKey, got, 'base64')).toBe(true);
  });

  it('rejects (does not throw) for a key that is no key', async () => {
    await expect(rsaSha256Sign('not a pem', 'x')).rejects.toThrow();
  });
});
