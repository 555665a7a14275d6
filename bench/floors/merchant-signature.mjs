// The merchant's HMAC-SHA256 signature of a create, checked as the gateway checks it (constant
// time): the floors' one piece of authentication.
import { createHmac, timingSafeEqual } from 'node:crypto';

function signedMessage(body, key) {
  return (
    Object.keys(body)
      .filter((k) => k !== 'signature' && body[k] !== '' && body[k] !== null && body[k] !== undefined)
      .sort()
      .map((k) => `${k}=${body[k]}`)
      .join('&') + key
  );
}

export function merchantSignatureOk(body, key) {
  if (typeof body.signature !== 'string' || !/^[0-9a-f]{64}$/i.test(body.signature)) return false;
  const expected = createHmac('sha256', key).update(signedMessage(body, key), 'utf8').digest();
  return timingSafeEqual(expected, Buffer.from(body.signature, 'hex'));
}
