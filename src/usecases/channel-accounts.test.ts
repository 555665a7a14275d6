import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { publicKeyPem } from '../domain/key-pem.js';
import type { ChannelAccount } from '../ports/connector.js';
import type { StoredChannelAccount } from '../ports/accounts.js';
import type { Log } from '../ports/log.js';
import {
  CERTIFICATE_WARNING_MS,
  certificateWarning,
  describeAccount,
  expiringCertificates,
} from './channel-accounts.js';
import { warnOfExpiringCertificates } from './channel-jobs.js';
import type { GatewayContext } from './context.js';

const made = (name: string) =>
  readFileSync(new URL(`../../test/fixtures/alipay-cert-mode/${name}`, import.meta.url), 'utf8');
// The test certificates (app.crt, alipay.crt) are valid until 2126-11-01T10:21:17Z; root.crt holds two.
const NOT_AFTER = Date.parse('2126-11-01T10:21:17Z');

const account: ChannelAccount = {
  wallet_id: 'W1',
  payment_method: 'alipay',
  provider: 'alipay',
  config: {
    app_id: '2021000000000001',
    alipay_public_key: publicKeyPem(made('alipay.crt')),
    app_cert: made('app.crt'),
    alipay_cert: made('alipay.crt'),
    alipay_root_cert: made('root.crt'),
  },
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
    const soon = expiringCertificates([account], NOT_AFTER - CERTIFICATE_WARNING_MS + 1000);
    expect(soon).toEqual([
      {
        wallet_id: 'W1',
        payment_method: 'alipay',
        provider: 'alipay',
        field: 'app_cert',
        not_after: '2126-11-01T10:21:17.000Z',
        expired: false,
      },
      {
        wallet_id: 'W1',
        payment_method: 'alipay',
        provider: 'alipay',
        field: 'alipay_cert',
        not_after: '2126-11-01T10:21:17.000Z',
        expired: false,
      },
    ]);
    expect(certificateWarning(soon[0])).toBe(
      "wallet W1's alipay account for alipay: app_cert expires 2126-11-01T10:21:17.000Z; set the renewed one with gateway channel set",
    );
    expect(expiringCertificates([account], NOT_AFTER + 1000).map((c) => c.expired)).toEqual([true, true]);
    expect(
      expiringCertificates(
        [{ ...account, config: { app_id: 'x', alipay_public_key: account.config.alipay_public_key } }],
        NOT_AFTER + 1000,
      ),
    ).toEqual([]);
  });

  it("are looked at by the channel jobs from the stored accounts' config, without opening their secrets", async () => {
    const stored: StoredChannelAccount = {
      wallet_id: 'W1',
      payment_method: 'alipay',
      provider: 'alipay',
      config: JSON.stringify(account.config),
      sealed_secrets: 'not openable',
      created_at: 0,
      updated_at: 0,
    };
    const warned: { fields: object; message: string }[] = [];
    const log: Log = { info: () => {}, error: () => {}, warn: (fields, message) => warned.push({ fields, message }) };
    const ctx = (now: number) =>
      ({
        store: { accounts: { listChannelAccounts: async () => [stored] } },
        now: () => now,
      }) as unknown as GatewayContext;
    expect(await warnOfExpiringCertificates(ctx(NOT_AFTER - CERTIFICATE_WARNING_MS - 1000), log)).toBe(0);
    expect(warned).toEqual([]);
    expect(await warnOfExpiringCertificates(ctx(NOT_AFTER + 1000), log)).toBe(2);
    expect(warned[0]).toEqual({
      fields: expect.objectContaining({ field: 'app_cert', expired: true, not_after: '2126-11-01T10:21:17.000Z' }),
      message: expect.stringMatching(/^channel account certificate expired/),
    });
  });
});
