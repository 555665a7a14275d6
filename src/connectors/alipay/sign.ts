import { createVerify } from 'node:crypto';
import { publicKeyOf } from '../pem.js';

// Alipay OpenAPI's RSA2 signatures (SHA256withRSA, PKCS#1 v1.5, base64), as its official SDKs
// compute them:
// - a request signs every parameter but `sign` (sign_type included), empty ones left out, sorted
//   by name, joined as name=value with &, values raw (not URL-encoded);
// - a response signs the exact text of its `<method>_response` (or `error_response`) object as
//   it appears in the body: never a re-serialised copy;
// - a notification signs its form fields but `sign` and `sign_type`, sorted and joined the same way.

/** The text a request's signature covers. */
export function requestSignContent(params: Readonly<Record<string, string>>): string {
  return Object.keys(params)
    .filter((k) => k !== 'sign' && params[k] !== '')
    .sort()
    .map((k) => `${k}=${params[k]}`)
    .join('&');
}

/** The text a notification's signature covers. */
export function notificationSignContent(fields: Readonly<Record<string, string>>): string {
  return Object.keys(fields)
    .filter((k) => k !== 'sign' && k !== 'sign_type')
    .sort()
    .map((k) => `${k}=${fields[k]}`)
    .join('&');
}

export function rsa2Verify(publicKeyPem: string, content: string, signature: string): boolean {
  try {
    return createVerify('RSA-SHA256').update(content, 'utf8').verify(publicKeyOf(publicKeyPem), signature, 'base64');
  } catch {
    // A malformed key or signature verifies nothing.
    return false;
  }
}

/**
 * The raw text of the object under `rootKey` in a response body (`"rootKey":{...}`), found by
 * matching braces outside strings; undefined when it is missing or appears twice (a body that
 * could carry a second, forged object).
 */
export function extractSignedObject(body: string, rootKey: string): string | undefined {
  const marker = `"${rootKey}"`;
  const at = body.indexOf(marker);
  if (at === -1 || body.indexOf(marker, at + marker.length) !== -1) return undefined;
  const start = body.indexOf('{', at + marker.length);
  if (start === -1 || body.slice(at + marker.length, start).trim() !== ':') return undefined;
  let depth = 0;
  let inString = false;
  for (let i = start; i < body.length; i++) {
    const c = body[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return body.slice(start, i + 1);
  }
  return undefined;
}

/** Alipay's clock: `yyyy-MM-dd HH:mm:ss` in China Standard Time (UTC+8, no daylight saving), whatever the server's zone. */
export function alipayTime(epochMs: number): string {
  return new Date(epochMs + 8 * 3600_000).toISOString().slice(0, 19).replace('T', ' ');
}
