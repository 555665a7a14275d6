// The headers every HTML page of the gateway is sent with: never cached, no referrer, no sniffing,
// and a Content-Security-Policy that allows only the gateway's own CSS and JS and `data:` images
// (QR codes are data: images).

const CSP =
  "default-src 'none'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; base-uri 'none'; frame-ancestors 'none'";

export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'content-security-policy': CSP,
};
