import { createHash, createPrivateKey, createPublicKey, X509Certificate, type KeyObject } from 'node:crypto';
import type { ChannelAccount } from '../../ports/connector.js';
import { certificatesIn } from '../../domain/key-pem.js';
import { kept } from '../pem.js';

// Alipay's certificate mode (公钥证书模式). Every request names the app's certificate and Alipay's
// root certificates by serial numbers ("SN"s) computed as Alipay's SDKs compute them: the md5 of
// the issuer's attributes from last to first as `short=value` joined by commas, followed by the
// certificate's serial number in decimal. Alipay's root file holds CA certificates signed with
// several algorithms (SM2, ECDSA, RSA); only the RSA-signed ones count, their SNs joined by '_'.
// Alipay signs with the key of its own certificate, and names that certificate's SN in answers.

/** 1.2.840.113549.1.1 (PKCS #1), the arc of every RSA signature algorithm, DER-encoded. */
const PKCS1_ARC = Buffer.from([0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01]);

/** A certificate's SN as Alipay names it (app_cert_sn, alipay_cert_sn). Throws when it is not a certificate. */
export function certSn(pem: string): string {
  const cert = new X509Certificate(pem);
  // Node prints the issuer first attribute to last, one a line, RFC 2253-escaped.
  const issuer = cert.issuer
    .split('\n')
    .reverse()
    .map((a) => a.replace(/\\(.)/g, '$1'))
    .join(',');
  const serial = BigInt(`0x${cert.serialNumber}`).toString(10);
  return createHash('md5')
    .update(issuer + serial, 'utf8')
    .digest('hex');
}

/** The SN of Alipay's root certificate file (alipay_root_cert_sn): empty when none of its certificates is RSA-signed. */
export function rootCertSn(text: string): string {
  return certificatesIn(text).filter(signedWithRsa).map(certSn).join('_');
}

function signedWithRsa(pem: string): boolean {
  const der = new X509Certificate(pem).raw;
  // Certificate ::= SEQUENCE { tbsCertificate SEQUENCE, signatureAlgorithm SEQUENCE { algorithm OID, ... }, ... }
  const certificate = tlv(der, 0);
  const tbs = tlv(der, certificate.content);
  const algorithm = tlv(der, tbs.end);
  const oid = tlv(der, algorithm.content);
  if (oid.tag !== 0x06) return false;
  const arcs = der.subarray(oid.content, oid.end);
  return arcs.length === PKCS1_ARC.length + 1 && arcs.subarray(0, PKCS1_ARC.length).equals(PKCS1_ARC);
}

/** One DER element at `at`: its tag, where its content starts and where it ends. */
function tlv(der: Buffer, at: number): { tag: number; content: number; end: number } {
  if (at + 2 > der.length) throw new Error('the certificate is cut short');
  let length = der[at + 1];
  let content = at + 2;
  if (length & 0x80) {
    const bytes = length & 0x7f;
    length = 0;
    for (let i = 0; i < bytes; i++) length = length * 256 + der[content + i];
    content += bytes;
  }
  return { tag: der[at], content, end: content + length };
}

/** The certificates of an account in certificate mode (config app_cert, alipay_cert, alipay_root_cert), or undefined in public-key mode. */
export function certMode(
  account: ChannelAccount,
): { app_cert: string; alipay_cert: string; alipay_root_cert: string } | undefined {
  const { app_cert, alipay_cert, alipay_root_cert } = account.config;
  return app_cert && alipay_cert && alipay_root_cert ? { app_cert, alipay_cert, alipay_root_cert } : undefined;
}

// Every request names the SNs: they are computed once per set of certificates.
const KEPT = 64;
const sns = new Map<string, { app_cert_sn: string; alipay_root_cert_sn: string; alipay_cert_sn: string }>();

/** The SNs an account in certificate mode sends and expects; undefined in public-key mode. */
export function certSns(
  account: ChannelAccount,
): { app_cert_sn: string; alipay_root_cert_sn: string; alipay_cert_sn: string } | undefined {
  const certs = certMode(account);
  if (!certs) return undefined;
  const computed = () => ({
    app_cert_sn: certSn(certs.app_cert),
    alipay_root_cert_sn: rootCertSn(certs.alipay_root_cert),
    alipay_cert_sn: certSn(certs.alipay_cert),
  });
  return kept(sns, `${certs.app_cert}\0${certs.alipay_cert}\0${certs.alipay_root_cert}`, computed, KEPT);
}

/** What is wrong with an account's certificates; empty when they are usable (or it is in public-key mode). */
export function certProblems(account: ChannelAccount, now: number = Date.now()): string[] {
  const c = account.config;
  const given = (['app_cert', 'alipay_cert', 'alipay_root_cert'] as const).filter((k) => c[k]);
  if (given.length === 0) return [];
  if (given.length < 3)
    return [`certificate mode needs app_cert, alipay_cert and alipay_root_cert; only ${given.join(', ')} given`];
  const problems: string[] = [];
  const read = (name: string, pem: string) => {
    try {
      return new X509Certificate(pem);
    } catch (e) {
      problems.push(`${name} is not a certificate (PEM): ${(e as Error).message}`);
      return undefined;
    }
  };
  const app = read('app_cert', c.app_cert);
  const alipay = read('alipay_cert', c.alipay_cert);
  // Alipay refuses an expired app certificate (isv.app-cert-expired) and signs with a renewed one of its own.
  for (const [name, cert] of [
    ['app_cert', app],
    ['alipay_cert', alipay],
  ] as const) {
    const notAfter = cert && Date.parse(cert.validTo);
    if (notAfter && notAfter <= now)
      problems.push(
        `${name} expired ${new Date(notAfter).toISOString()}: download the renewed one from Alipay's open platform`,
      );
  }
  const spki = (make: () => KeyObject) => {
    try {
      return make().export({ type: 'spki', format: 'der' });
    } catch {
      return undefined; // a key that cannot be read is reported as such by the connector
    }
  };
  const ours = spki(() => createPublicKey(createPrivateKey(account.secrets.private_key ?? '')));
  if (app && ours && !spki(() => app.publicKey)!.equals(ours))
    problems.push('app_cert is not the certificate of private_key (its public key is another)');
  const configured = spki(() => createPublicKey(c.alipay_public_key ?? ''));
  if (alipay && configured && !spki(() => alipay.publicKey)!.equals(configured))
    problems.push('alipay_public_key is not the key of alipay_cert');
  try {
    if (rootCertSn(c.alipay_root_cert) === '')
      problems.push("alipay_root_cert holds no RSA-signed certificate (it should be Alipay's alipayRootCert.crt)");
  } catch (e) {
    problems.push(`alipay_root_cert cannot be read: ${(e as Error).message}`);
  }
  return problems;
}
