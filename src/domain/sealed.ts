import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

// Secrets at rest (a channel account's private keys): an AES-256-GCM envelope. Each sealed value
// has a data key of its own, which encrypts the value; the master key encrypts the data key. The
// master key never touches the database; its fingerprint is stored beside each value, so a value
// sealed under another master key is refused with a message that says so.

const AAD = Buffer.from('payment-gateway sealed secret v1');

export interface MasterKey {
  /** The first 16 hex characters of the key's SHA-256: safe to show and to store. */
  id: string;
  key: Buffer;
}

/** A master key from its text: 32 bytes written as base64 (44 characters) or hex (64). */
export function parseMasterKey(text: string): MasterKey {
  const t = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(t)
    ? Buffer.from(t, 'hex')
    : /^[A-Za-z0-9+/]{43}=$/.test(t)
      ? Buffer.from(t, 'base64')
      : undefined;
  if (!key || key.length !== 32) {
    throw new Error(
      'the master key must be 32 random bytes written as base64 or hex: make one with `openssl rand -base64 32`',
    );
  }
  return { id: fingerprint(key), key };
}

/** The first 16 hex characters of the SHA-256 of a secret: identifies it without revealing it. */
export function fingerprint(secret: string | Buffer): string {
  return createHash('sha256').update(secret).digest('hex').slice(0, 16);
}

interface Box {
  iv: string;
  tag: string;
  data: string;
}

function encrypt(key: Buffer, plain: Buffer): Box {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(AAD);
  const data = Buffer.concat([cipher.update(plain), cipher.final()]);
  return { iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64'), data: data.toString('base64') };
}

function decrypt(key: Buffer, box: Box): Buffer {
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(box.iv, 'base64')).setAAD(AAD);
  decipher.setAuthTag(Buffer.from(box.tag, 'base64'));
  return Buffer.concat([decipher.update(Buffer.from(box.data, 'base64')), decipher.final()]);
}

/** Seals `plain` under the master key: JSON text with the master key's id, the wrapped data key and the value. */
export function seal(master: MasterKey, plain: string): string {
  const dataKey = randomBytes(32);
  return JSON.stringify({
    v: 1,
    kid: master.id,
    key: encrypt(master.key, dataKey),
    value: encrypt(dataKey, Buffer.from(plain, 'utf8')),
  });
}

/** Opens a sealed value; throws if it was sealed under another master key or was altered. */
export function unseal(master: MasterKey, sealed: string): string {
  const env = JSON.parse(sealed) as { v: number; kid: string; key: Box; value: Box };
  if (env.v !== 1) throw new Error(`sealed value of unknown version ${String(env.v)}`);
  if (env.kid !== master.id)
    throw new Error(`the value was sealed under master key ${env.kid}, not this one (${master.id})`);
  try {
    const dataKey = decrypt(master.key, env.key);
    return decrypt(dataKey, env.value).toString('utf8');
  } catch {
    throw new Error(`a sealed value under master key ${env.kid} does not open: it was altered`);
  }
}
