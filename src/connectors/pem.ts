import { createHash, createPrivateKey, createPublicKey, sign, type KeyObject } from 'node:crypto';
import { privateKeyPem, publicKeyPem } from '../domain/key-pem.js';

export { privateKeyPem, publicKeyPem };

// Signing with the keys providers hand out (domain/key-pem.ts reads them).

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

/** What `make` gives for `text`, kept in `cache` by a hash of the text (at most `bound` entries, the oldest dropped first). */
export function kept<T>(cache: Map<string, T>, text: string, make: (text: string) => T, bound = KEPT_KEYS): T {
  const id = createHash('sha256').update(text).digest('base64');
  let value = cache.get(id);
  if (value === undefined) {
    value = make(text);
    if (cache.size >= bound) cache.delete(cache.keys().next().value!);
    cache.set(id, value);
  }
  return value;
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
 * `createSign('RSA-SHA256')`. On the event loop, not libuv's thread pool: an RSA-2048 signature
 * takes about 0.2 ms of CPU here, and the hand-off to a pool thread and back cost more than that
 * under load (a create's request went out 0.6 ms p50 after its order was written, 0.04 ms signed
 * here; docs/performance.md, 2026-11-25). A promise still, so a caller need not know.
 */
export function rsaSha256Sign(privateKeyPem: string, content: string): Promise<string> {
  try {
    return Promise.resolve(
      sign('sha256', Buffer.from(content, 'utf8'), privateKeyOf(privateKeyPem)).toString('base64'),
    );
  } catch (e) {
    return Promise.reject(e);
  }
}
