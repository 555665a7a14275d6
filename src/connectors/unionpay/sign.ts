import { createHash, sign, verify, X509Certificate } from 'node:crypto';

// ACP 5.1.0's signature (signMethod 01), as UnionPay's SDKs make it: every field but `signature`,
// sorted by name, as `name=value` joined with `&` (values as they are, empty ones too); the
// lower-case hex SHA-256 of that; and RSA (SHA256withRSA) over the hex text. An answer or a
// notification is verified with the certificate it carries (`signPubKeyCert`), which must chain
// to the account's middle and root certificates and be UnionPay's. Facts and sources:
// docs/providers/protocols/unionpay.md.

export type AcpFields = Readonly<Record<string, string>>;

/** The text signed: the fields but `signature`, sorted, `k=v&…`. */
export function signingText(fields: AcpFields): string {
  return Object.keys(fields)
    .filter((k) => k !== 'signature')
    .sort()
    .map((k) => `${k}=${fields[k]}`)
    .join('&');
}

const digestHex = (fields: AcpFields) => createHash('sha256').update(signingText(fields), 'utf8').digest('hex');

/** The fields with `certId` and `signature` added. */
export function signFields(fields: AcpFields, privateKeyPem: string, certId: string): Record<string, string> {
  const withCert = { ...fields, certId };
  const signature = sign('sha256', Buffer.from(digestHex(withCert), 'utf8'), privateKeyPem).toString('base64');
  return { ...withCert, signature };
}

/** The owner UnionPay's certificates name in their subject CN (`041@…@中国银联股份有限公司@…`). */
export const UNIONPAY_OWNER = '中国银联股份有限公司';

export interface Trust {
  root: string;
  middle: string;
}

/** Why a signed answer or notification is not UnionPay's, or undefined when it is. */
export function verifyFields(fields: AcpFields, trust: Trust, now: number): string | undefined {
  const pem = fields.signPubKeyCert;
  const signature = fields.signature;
  if (!pem || !signature) return 'no signPubKeyCert or signature';
  let cert: X509Certificate, middle: X509Certificate, root: X509Certificate;
  try {
    cert = new X509Certificate(pem);
    middle = new X509Certificate(trust.middle);
    root = new X509Certificate(trust.root);
  } catch {
    return 'a certificate cannot be read';
  }
  if (now < Date.parse(cert.validFrom) || now > Date.parse(cert.validTo))
    return `the signing certificate is not valid now (${cert.validFrom} to ${cert.validTo})`;
  if (!cert.checkIssued(middle) || !cert.verify(middle.publicKey))
    return 'the signing certificate is not issued by the middle certificate';
  if (!middle.checkIssued(root) || !middle.verify(root.publicKey))
    return 'the middle certificate is not issued by the root certificate';
  const cn = /(?:^|\n)CN=([^\n]*)/.exec(cert.subject)?.[1] ?? '';
  if (cn.split('@')[2] !== UNIONPAY_OWNER) return `the signing certificate is not UnionPay's (CN ${cn})`;
  let ok: boolean;
  try {
    ok = verify('sha256', Buffer.from(digestHex(fields), 'utf8'), cert.publicKey, Buffer.from(signature, 'base64'));
  } catch {
    ok = false;
  }
  return ok ? undefined : 'the signature does not verify';
}

/** ACP's clock: `yyyyMMddHHmmss` in Beijing time (UTC+8), whatever the server's zone. */
export function acpTime(epochMs: number): string {
  return new Date(epochMs + 8 * 3600_000).toISOString().slice(0, 19).replace(/[-T:]/g, '');
}
