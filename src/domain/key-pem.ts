import { createPrivateKey, createPublicKey, X509Certificate, type KeyObject } from 'node:crypto';

// Keys as providers hand them out: PEM files, or (Alipay's key tool, WeChat Pay's portal copy
// box) the bare base64 of the key on one line. Both are accepted and stored as PEM.

function wrap(base64: string, label: string): string {
  const body = base64.replace(/\s+/g, '');
  return `-----BEGIN ${label}-----\n${body.match(/.{1,64}/g)?.join('\n') ?? ''}\n-----END ${label}-----\n`;
}

/** A private key's PEM (PKCS#8 or PKCS#1); throws with a plain message when it is not an RSA private key. */
export function privateKeyPem(text: string): string {
  const t = text.trim();
  const candidates = t.includes('-----BEGIN') ? [t] : [wrap(t, 'PRIVATE KEY'), wrap(t, 'RSA PRIVATE KEY')];
  for (const pem of candidates) {
    const key = tryKey(() => createPrivateKey(pem));
    if (key) return requireRsa(key, 'private key') && `${pem.trim()}\n`;
  }
  throw new Error('not an RSA private key (PEM, or the bare base64 of a PKCS#8 or PKCS#1 key)');
}

/** A public key's PEM (SPKI, PKCS#1, or taken from an X.509 certificate); throws when it is not an RSA public key. */
export function publicKeyPem(text: string): string {
  const t = text.trim();
  const candidates = t.includes('-----BEGIN') ? [t] : [wrap(t, 'PUBLIC KEY'), wrap(t, 'RSA PUBLIC KEY')];
  for (const pem of candidates) {
    const key = tryKey(() => createPublicKey(pem));
    if (key) return requireRsa(key, 'public key') && key.export({ type: 'spki', format: 'pem' }).toString();
  }
  throw new Error('not an RSA public key (PEM, a certificate, or the bare base64 of an SPKI key)');
}

function tryKey(make: () => KeyObject): KeyObject | undefined {
  try {
    return make();
  } catch {
    return undefined;
  }
}

function requireRsa(key: KeyObject, what: string): true {
  if (key.asymmetricKeyType !== 'rsa')
    throw new Error(`the ${what} is ${key.asymmetricKeyType ?? 'not an asymmetric key'}, not RSA`);
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  if (bits < 2048) throw new Error(`the ${what} has ${bits} bits; providers require RSA 2048 or more`);
  return true;
}

const CERTIFICATE = /-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g;

/** The PEM blocks of certificates in a file's text, in order. */
export function certificatesIn(text: string): string[] {
  return text.match(CERTIFICATE) ?? [];
}

/**
 * When a certificate of an account (Alipay's app and Alipay certificates, WeChat Pay's platform
 * certificate) stops being valid, in ms since the epoch; undefined for anything but one certificate.
 */
export function certificateNotAfter(text: string): number | undefined {
  const certs = certificatesIn(text);
  if (certs.length !== 1 || certs[0] !== text.trim()) return undefined;
  try {
    return Date.parse(new X509Certificate(text).validTo);
  } catch {
    return undefined;
  }
}
