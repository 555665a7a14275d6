import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { certificatesIn, publicKeyPem } from '../../domain/key-pem.js';
import type { ChannelAccount } from '../../ports/connector.js';
import { certProblems, certSn, certSns, rootCertSn } from './cert.js';

const fixture = (dir: string, name: string) =>
  readFileSync(new URL(`../../../test/fixtures/${dir}/${name}`, import.meta.url), 'utf8');
type Expected = {
  app_cert_sn: string;
  alipay_cert_sn: string;
  alipay_root_cert_sn: string;
  alipay_public_key?: string;
};

describe("Alipay's certificate SNs", () => {
  // Certificates Alipay issued, with the SNs Alipay's official Node SDK expects of them.
  const genuine = (name: string) => fixture('alipay-genuine-certs', name);
  const expected = JSON.parse(genuine('expected.json')) as Expected;

  it("of genuine Alipay certificates: the app certificate, Alipay's, and the root file (only its RSA-signed certificates)", () => {
    expect(certSn(genuine('appCertPublicKey_2021001161683774.crt'))).toBe(expected.app_cert_sn);
    expect(certSn(genuine('alipayCertPublicKey_RSA2.crt'))).toBe(expected.alipay_cert_sn);
    // SM2, RSA, ECDSA, RSA: two of the four count, in file order.
    expect(certificatesIn(genuine('alipayRootCert.crt'))).toHaveLength(4);
    expect(rootCertSn(genuine('alipayRootCert.crt'))).toBe(expected.alipay_root_cert_sn);
  });

  it("Alipay's key is its certificate's", () => {
    const pem = publicKeyPem(genuine('alipayCertPublicKey_RSA2.crt'));
    expect(pem.replace(/-----[^-]+-----|\s/g, '')).toBe(expected.alipay_public_key);
  });

  it('of the test certificates, as openssl computed them (an ECDSA-signed CA first in the root file)', () => {
    const made = (name: string) => fixture('alipay-cert-mode', name);
    const want = JSON.parse(made('expected.json')) as Expected;
    const account = certAccount({});
    expect(certSns(account)).toEqual({
      app_cert_sn: want.app_cert_sn,
      alipay_cert_sn: want.alipay_cert_sn,
      alipay_root_cert_sn: want.alipay_root_cert_sn,
    });
    expect(certProblems(account)).toEqual([]);
  });

  it('an account whose certificates do not fit is refused, each problem named', () => {
    const made = (name: string) => fixture('alipay-cert-mode', name);
    expect(certProblems(certAccount({ app_cert: made('alipay.crt') }))).toEqual([
      'app_cert is not the certificate of private_key (its public key is another)',
    ]);
    expect(certProblems(certAccount({ alipay_public_key: publicKeyPem(made('app.crt')) }))).toEqual([
      'alipay_public_key is not the key of alipay_cert',
    ]);
    // The root file without its RSA-signed CA: only the ECDSA one is left.
    expect(certProblems(certAccount({ alipay_root_cert: certificatesIn(made('root.crt'))[0] }))).toEqual([
      expect.stringMatching(/no RSA-signed certificate/),
    ]);
    expect(certProblems(certAccount({ alipay_cert: 'not a certificate' }))[0]).toMatch(
      /^alipay_cert is not a certificate/,
    );
    const partial = certAccount({});
    delete (partial.config as Record<string, string>).alipay_root_cert;
    expect(certProblems(partial)).toEqual([
      'certificate mode needs app_cert, alipay_cert and alipay_root_cert; only app_cert, alipay_cert given',
    ]);
    expect(certSns(partial)).toBeUndefined();
  });

  it('an expired app or Alipay certificate is refused, with the date it expired', () => {
    // The test certificates are valid until 2126-11-01T10:21:17Z.
    expect(certProblems(certAccount({}), Date.parse('2126-11-01T10:21:16Z'))).toEqual([]);
    expect(certProblems(certAccount({}), Date.parse('2126-11-01T10:21:18Z'))).toEqual([
      "app_cert expired 2126-11-01T10:21:17.000Z: download the renewed one from Alipay's open platform",
      "alipay_cert expired 2126-11-01T10:21:17.000Z: download the renewed one from Alipay's open platform",
    ]);
  });

  function certAccount(over: Record<string, string>): ChannelAccount {
    const made = (name: string) => fixture('alipay-cert-mode', name);
    return {
      wallet_id: 'W1',
      payment_method: 'alipay',
      provider: 'alipay',
      config: {
        app_id: '2021000000000001',
        alipay_public_key: publicKeyPem(made('alipay.crt')),
        app_cert: made('app.crt'),
        alipay_cert: made('alipay.crt'),
        alipay_root_cert: made('root.crt'),
        currency_mode: 'domestic',
        ...over,
      },
      secrets: { private_key: made('app.key') },
    };
  }
});
