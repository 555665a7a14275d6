import { createDecipheriv, createVerify, randomBytes, X509Certificate } from 'node:crypto';
import { publicKeyOf, rsaSha256Sign } from '../pem.js';

// WeChat Pay API v3's signatures, as its official SDKs compute them (SHA256withRSA, PKCS#1 v1.5,
// base64):
// - a request signs "METHOD\nPATH?QUERY\nTIMESTAMP\nNONCE\nBODY\n" with the merchant's API key
//   and says so in the Authorization header (WECHATPAY2-SHA256-RSA2048);
// - an answer and a notification sign "TIMESTAMP\nNONCE\nBODY\n" (the headers' Wechatpay-Timestamp
//   and Wechatpay-Nonce, the body byte for byte) with WeChat Pay's key, named by Wechatpay-Serial;
// - a notification's resource is encrypted with AEAD_AES_256_GCM under the APIv3 key.

export const SCHEMA = 'WECHATPAY2-SHA256-RSA2048';
/** WeChat Pay refuses, and we refuse, a signature whose timestamp is this far from now. */
export const MAX_CLOCK_SKEW_S = 300;
/** WeChat Pay's deliberately wrong signatures, sent to check that a merchant verifies. */
export const PROBE_SIGNATURE_PREFIX = 'WECHATPAY/SIGNTEST/';

const ALPHANUMERIC = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** 32 random letters and digits, as the official samples make a nonce. */
export function nonceStr(length = 32): string {
  const bytes = randomBytes(length);
  let out = '';
  for (const b of bytes) out += ALPHANUMERIC[b % ALPHANUMERIC.length];
  return out;
}

export function requestMessage(
  method: string,
  pathAndQuery: string,
  timestamp: number,
  nonce: string,
  body: string,
): string {
  return `${method}\n${pathAndQuery}\n${timestamp}\n${nonce}\n${body}\n`;
}

export function answerMessage(timestamp: string, nonce: string, body: string): string {
  return `${timestamp}\n${nonce}\n${body}\n`;
}

export function rsaVerify(publicKeyPem: string, message: string, signature: string): boolean {
  try {
    return createVerify('RSA-SHA256').update(message, 'utf8').verify(publicKeyOf(publicKeyPem), signature, 'base64');
  } catch {
    return false;
  }
}

export function authorization(p: {
  mchid: string;
  serial_no: string;
  timestamp: number;
  nonce: string;
  signature: string;
}): string {
  return `${SCHEMA} mchid="${p.mchid}",nonce_str="${p.nonce}",signature="${p.signature}",timestamp="${p.timestamp}",serial_no="${p.serial_no}"`;
}

export interface SignedHeaders {
  timestamp: string;
  nonce: string;
  signature: string;
  serial: string;
}

/** The four Wechatpay-* headers of an answer or notification; undefined when one is missing. */
export function signedHeaders(
  headers: Readonly<Record<string, string | string[] | undefined>>,
): SignedHeaders | undefined {
  const get = (name: string) => {
    const v = headers[name] ?? headers[name.toLowerCase()];
    return Array.isArray(v) ? v[0] : v;
  };
  const timestamp = get('wechatpay-timestamp');
  const nonce = get('wechatpay-nonce');
  const signature = get('wechatpay-signature');
  const serial = get('wechatpay-serial');
  if (!timestamp || !nonce || !signature || !serial) return undefined;
  return { timestamp, nonce, signature, serial };
}

export interface PlatformKey {
  /** What Wechatpay-Serial names it by: PUB_KEY_ID_…, or a platform certificate's serial number. */
  id: string;
  pem: string;
}

/** A platform certificate's serial number as WeChat Pay writes it (upper-case hex) and its public key; throws when the PEM is no certificate. */
export function certificateKey(certificatePem: string): PlatformKey {
  const cert = new X509Certificate(certificatePem);
  return {
    id: cert.serialNumber.toUpperCase(),
    pem: cert.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

/**
 * The keys WeChat Pay may sign an account's answers and notifications with: its configured key
 * (the public key, or a certificate given as one), and the platform certificate beside it, if any.
 * Two at once happen: a merchant moving from certificates to the public key gets notifications
 * signed with either for a while, and a certificate's successor signs before it expires.
 */
export function platformKeys(config: Readonly<Record<string, string>>): PlatformKey[] {
  const keys: PlatformKey[] = [{ id: config.platform_public_key_id ?? '', pem: config.platform_public_key ?? '' }];
  if (config.platform_certificate) {
    try {
      keys.push(certificateKey(config.platform_certificate));
    } catch {
      // Refused when the account is set (checkAccount); a stored one that does not parse verifies nothing.
    }
  }
  return keys;
}

/**
 * Why a signed answer or notification is not WeChat Pay's, or undefined when it is: signed with
 * the key its Wechatpay-Serial names (one of `keys`), within MAX_CLOCK_SKEW_S of `nowSeconds`, not a probe.
 */
export function verifyProblem(
  h: SignedHeaders,
  body: string,
  keys: readonly PlatformKey[],
  nowSeconds: number,
): string | undefined {
  const key = keys.find((k) => k.id === h.serial);
  if (!key) return `signed with key ${h.serial}, not the configured ${keys.map((k) => k.id).join(' or ')}`;
  if (!/^\d{1,12}$/.test(h.timestamp) || Math.abs(nowSeconds - Number(h.timestamp)) >= MAX_CLOCK_SKEW_S)
    return `its timestamp ${h.timestamp} is more than 5 minutes from now`;
  if (h.signature.startsWith(PROBE_SIGNATURE_PREFIX)) return 'a signature probe (WECHATPAY/SIGNTEST/)';
  if (!rsaVerify(key.pem, answerMessage(h.timestamp, h.nonce, body), h.signature))
    return 'the signature does not verify';
  return undefined;
}

/** Opens a notification's resource (AEAD_AES_256_GCM: the ciphertext ends with the 16-byte tag); throws when it does not open. */
export function decryptResource(
  apiv3Key: string,
  r: { ciphertext: string; nonce: string; associated_data?: string },
): string {
  const data = Buffer.from(r.ciphertext, 'base64');
  if (data.length < 17) throw new Error('ciphertext too short');
  const decipher = createDecipheriv('aes-256-gcm', Buffer.from(apiv3Key, 'utf8'), Buffer.from(r.nonce, 'utf8'));
  decipher.setAAD(Buffer.from(r.associated_data ?? '', 'utf8'));
  decipher.setAuthTag(data.subarray(data.length - 16));
  return Buffer.concat([decipher.update(data.subarray(0, data.length - 16)), decipher.final()]).toString('utf8');
}

/** JSAPI's paySign: the merchant's key over "appId\ntimeStamp\nnonceStr\npackage\n". */
export function paySign(
  privateKeyPem: string,
  p: { appId: string; timeStamp: string; nonceStr: string; package: string },
): Promise<string> {
  return rsaSha256Sign(privateKeyPem, `${p.appId}\n${p.timeStamp}\n${p.nonceStr}\n${p.package}\n`);
}

/** WeChat Pay's times: RFC 3339 in China Standard Time, e.g. 2026-11-24T18:30:00+08:00. */
export function wechatTime(epochMs: number): string {
  return `${new Date(epochMs + 8 * 3600_000).toISOString().slice(0, 19)}+08:00`;
}
