import { createHash, createPrivateKey, createPublicKey, sign, type KeyObject } from 'node:crypto';

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
  if (key.asymmetricKeyType !== 'rsa') throw new Error(`the ${what} is ${key.asymmetricKeyType ?? 'not an asymmetric key'}, not RSA`);
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  if (bits < 2048) throw new Error(`the ${what} has ${bits} bits; providers require RSA 2048 or more`);
  return true;
}

/** What is wrong with a PEM a connector will sign or verify with; undefined when it is usable. */
export function pemProblem(name: string, pem: string | undefined, kind: 'private' | 'public'): string | undefined {
  if (!pem) return `${name} is missing`;
  try {
    if (kind === 'private') privateKeyPem(pem);
    else publicKeyPem(pem);
    return undefined;
  } catch (e) {
    return `${name}: ${(e as Error).message}`;
  }
}

// Parsing a PEM costs more than the RSA operation it is used for, and every provider call signs or
// verifies: the parsed keys are kept, by a hash of their PEM (no key's text is kept; a replaced key
// stays parsed until newer ones push it out). An operator has a handful of accounts; the bound only
// stops a leak.
const KEPT_KEYS = 256;
const privateKeys = new Map<string, KeyObject>();
const publicKeys = new Map<string, KeyObject>();

function kept(cache: Map<string, KeyObject>, pem: string, make: (pem: string) => KeyObject): KeyObject {
  const id = createHash('sha256').update(pem).digest('base64');
  let key = cache.get(id);
  if (key === undefined) {
    key = make(pem);
    if (cache.size >= KEPT_KEYS) cache.delete(cache.keys().next().value!);
    cache.set(id, key);
  }
  return key;
}

/** The parsed private key of a PEM (throws as createPrivateKey does). */
export function privateKeyOf(pem: string): KeyObject {
  return kept(privateKeys, pem, createPrivateKey);
}

/** The parsed public key of a PEM or certificate (throws as createPublicKey does). */
export function publicKeyOf(pem: string): KeyObject {
  return kept(publicKeys, pem, createPublicKey);
}

/**
 * SHA256withRSA (PKCS#1 v1.5), base64: the signature both providers ask of a request, the same as
 * `createSign('RSA-SHA256')`, but computed on libuv's thread pool. An RSA-2048 signature is the
 * largest piece of CPU in a provider call, and on the event loop it holds up every other request
 * meanwhile; there it runs beside them.
 */
export function rsaSha256Sign(privateKeyPem: string, content: string): Promise<string> {
  let key: KeyObject;
  try {
    key = privateKeyOf(privateKeyPem);
  } catch (e) {
    return Promise.reject(e);
  }
  return new Promise((resolve, reject) => {
    sign('sha256', Buffer.from(content, 'utf8'), key, (err, signature) => (err ? reject(err) : resolve(signature.toString('base64'))));
  });
}
