import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fingerprint, parseMasterKey, seal, unseal } from './sealed.js';

describe('sealed secrets', () => {
  const master = parseMasterKey(randomBytes(32).toString('base64'));

  it('opens what it sealed; the sealed text holds neither the value nor the key', () => {
    const secret = '-----BEGIN PRIVATE KEY-----\nMIIE...secret...\n-----END PRIVATE KEY-----\n';
    const sealed = seal(master, secret);
    expect(unseal(master, sealed)).toBe(secret);
    expect(sealed).not.toContain('secret');
    expect(sealed).not.toContain(master.key.toString('base64'));
    expect(JSON.parse(sealed)).toMatchObject({ v: 1, kid: master.id });
    // A fresh data key and IVs each time.
    expect(seal(master, secret)).not.toBe(sealed);
  });

  it('refuses another master key, and an altered value', () => {
    const sealed = seal(master, 'apiv3-key-0123456789abcdef0123456');
    const other = parseMasterKey(randomBytes(32).toString('hex'));
    expect(() => unseal(other, sealed)).toThrow(/sealed under master key .* not this one/);
    const env = JSON.parse(sealed);
    const data = Buffer.from(env.value.data, 'base64');
    data[0] ^= 1;
    env.value.data = data.toString('base64');
    expect(() => unseal(master, JSON.stringify(env))).toThrow(/altered/);
  });

  it('reads a master key as base64 or hex of 32 bytes, and says how to make one otherwise', () => {
    const raw = randomBytes(32);
    expect(parseMasterKey(raw.toString('base64')).key).toEqual(raw);
    expect(parseMasterKey(raw.toString('hex')).key).toEqual(raw);
    expect(parseMasterKey(raw.toString('hex')).id).toBe(fingerprint(raw));
    for (const bad of ['', 'short', randomBytes(16).toString('base64'), 'z'.repeat(64)])
      expect(() => parseMasterKey(bad)).toThrow(/openssl rand -base64 32/);
  });
});
