import { X509Certificate } from 'node:crypto';
import forge from 'node-forge';

// The merchant's signing key and certificate, from the PKCS#12 (.pfx) file UnionPay's CFCA issues.
// node:crypto cannot read PKCS#12; node-forge can, including the older encryptions CFCA uses.

export interface SigningCredential {
  privateKeyPem: string;
  /** The signing certificate's serial number in decimal: ACP's `certId`. */
  certId: string;
  certificatePem: string;
  /** When the certificate stops being valid (epoch ms). */
  notAfter: number;
}

/** Reads a .pfx (as base64) with its password; throws with a reason a person can act on. */
export function readSigningCredential(pfxBase64: string, password: string): SigningCredential {
  let p12: forge.pkcs12.Pkcs12Pfx;
  try {
    const der = forge.util.decode64(pfxBase64);
    p12 = forge.pkcs12.pkcs12FromAsn1(forge.asn1.fromDer(der), false, password);
  } catch (e) {
    throw new Error(`the signing certificate file cannot be opened with its password (${(e as Error).message})`, {
      cause: e,
    });
  }
  const keyBags = [
    ...(p12.getBags({ bagType: forge.pki.oids.pkcs8ShroudedKeyBag })[forge.pki.oids.pkcs8ShroudedKeyBag] ?? []),
    ...(p12.getBags({ bagType: forge.pki.oids.keyBag })[forge.pki.oids.keyBag] ?? []),
  ];
  const certBags = p12.getBags({ bagType: forge.pki.oids.certBag })[forge.pki.oids.certBag] ?? [];
  const key = keyBags.find((b) => b.key)?.key;
  if (!key) throw new Error('the signing certificate file holds no private key');
  const publicOf = (k: forge.pki.PrivateKey) =>
    forge.pki.publicKeyToPem(
      forge.pki.setRsaPublicKey((k as forge.pki.rsa.PrivateKey).n, (k as forge.pki.rsa.PrivateKey).e),
    );
  // The certificate of that key (a file may carry its chain too).
  const cert = certBags.map((b) => b.cert).find((c) => c && forge.pki.publicKeyToPem(c.publicKey) === publicOf(key));
  if (!cert) throw new Error('the signing certificate file holds no certificate of its private key');
  const certificatePem = forge.pki.certificateToPem(cert);
  const x509 = new X509Certificate(certificatePem);
  return {
    privateKeyPem: forge.pki.privateKeyToPem(key),
    certId: BigInt(`0x${x509.serialNumber}`).toString(10),
    certificatePem,
    notAfter: Date.parse(x509.validTo),
  };
}
