import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { publicKeyPem } from '../domain/key-pem.js';
import type { ChannelAccount } from '../ports/connector.js';
import { CERTIFICATE_WARNING_MS, describeAccount, expiringCertificates } from './channel-accounts.js';

const made = (name: string) => readFileSync(new URL(`../../test/fixtures/alipay-cert-mode/${name}`, import.meta.url), 'utf8');
// The test certificates (app.crt, alipay.crt) are valid until 2126-11-01T10:21:17Z; root.crt holds two.
const NOT_AFTER = Date.parse('2126-11-01T10:21:17Z');

const account: ChannelAccount = {
  wallet_id: 'W1',
  payment_method: 'alipay',
  provider: 'alipay',
  config: { app_id: '2021000000000001', alipay_public_key: publicKeyPem(made('alipay.crt')), app_cert: made('app.crt'), alipay_cert: made('alipay.crt'), alipay_root_cert: made('root.crt') },
  secrets: { private_key: made('app.key') },
};

describe("a channel account's certificates", () => {
  it('are shown with the day they stop being valid (one certificate a field; not a key, not a bundle)', () => {
    const shown = describeAccount(account);
    expect(shown.app_cert).toMatch(/^-----BEGIN CERTIFICATE----- \(sha256 [0-9a-f]+, valid until 2126-11-01\)$/);
    expect(shown.alipay_cert).toMatch(/valid until 2126-11-01\)$/);
    expect(shown.alipay_root_cert).not.toMatch(/valid until/);
    expect(shown.alipay_public_key).not.toMatch(/valid until/);
    expect(shown.private_key).toMatch(/^sealed \(sha256 [0-9a-f]+\)$/);
  });

  it('are warned of from 30 days before they expire, and once expired', () => {
    expect(expiringCertificates([account], NOT_AFTER - CERTIFICATE_WARNING_MS - 1000)).toEqual([]);
    expect(expiringCertificates([account], NOT_AFTER - CERTIFICATE_WARNING_MS + 1000)).toEqual([
      "wallet W1's alipay account for alipay: app_cert expires 2126-11-01T10:21:17.000Z; set the renewed one with gateway channel set",
      "wallet W1's alipay account for alipay: alipay_cert expires 2126-11-01T10:21:17.000Z; set the renewed one with gateway channel set",
    ]);
    expect(expiringCertificates([account], NOT_AFTER + 1000)[0]).toMatch(/app_cert expired 2126-11-01/);
    expect(expiringCertificates([{ ...account, config: { app_id: 'x', alipay_public_key: account.config.alipay_public_key! } }], NOT_AFTER + 1000)).toEqual([]);
  });
});
