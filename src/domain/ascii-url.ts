// Merchants send URLs with any Unicode in them (a Chinese path, an emoji in the query, an
// internationalised host name). A URL the gateway sends a browser to must be ASCII: Node refuses a
// Location header with a character above U+00FF, and would write U+0080-U+00FF as Latin-1 bytes,
// which no browser reads as the merchant meant.

const ASCII_URL = /^[\x21-\x7e]*$/;

/**
 * The URL in the form a browser sends it: the host in punycode, the path, query and fragment
 * percent-encoded as UTF-8 (WHATWG URL serialisation). A URL that is already ASCII is returned
 * unchanged, byte for byte. One that does not parse (the create refuses those) has each character
 * outside printable ASCII percent-encoded, so the result is ASCII whatever comes in.
 */
export function asciiUrl(url: string): string {
  if (ASCII_URL.test(url)) return url;
  try {
    return new URL(url).href;
  } catch {
    return url.replace(/[^\x21-\x7e]/gu, percentEncode);
  }
}

function percentEncode(c: string): string {
  try {
    return encodeURIComponent(c);
  } catch {
    // Half of a surrogate pair has no UTF-8 form; U+FFFD is what a decoder would make of it.
    return '%EF%BF%BD';
  }
}
