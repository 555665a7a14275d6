// What the gateway shows and keys by of a merchant's callback_url. Pure: the checks on where a
// notification may be sent are in src/notify/callback-safety.ts.

/** The key for per-host concurrency (outbox.callback_host): `host[:port]` of the URL, lower case. */
export function callbackHostOf(url: string): string {
  try {
    return new URL(url).host.toLowerCase();
  } catch {
    return '';
  }
}

/** The URL as shown to people (CLI, logs, error details): a password in it becomes `***`. */
export function redactCallbackUrl(url: string): string {
  try {
    const u = new URL(url);
    if (!u.password) return url;
    u.password = '***';
    return u.href;
  } catch {
    return url.replace(/\/\/[^/?#]*@/, '//***@');
  }
}
