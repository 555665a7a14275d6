// DATABASE_URL may name several PostgreSQL hosts, as libpq takes them
// (postgres://u:p@h1:5432,h2:5433/db?target_session_attrs=read-write). node-postgres connects to
// one host only: the URL is split into one single-host URL per host, in order, each read by pg
// itself for everything else (user, password, database, ssl, options).

export interface PostgresHosts {
  /** One URL per host, in the order given. */
  urls: string[];
  /** host:port of each, for logs and errors (no credentials). */
  labels: string[];
}

const SESSION_ATTRS = new Set(['read-write', 'primary', 'any']);

/** Splits a postgres:// URL by host. Throws, saying what to fix, for a target_session_attrs the gateway cannot work with. */
export function splitPostgresHosts(url: string): PostgresHosts {
  const m = /^(postgres(?:ql)?:\/\/)(?:([^@/?#]*)@)?([^/?#]*)(.*)$/s.exec(url);
  if (!m) throw new Error('DATABASE_URL is not a postgres:// URL');
  const [, scheme, userinfo, hostList, rest] = m as unknown as [string, string, string | undefined, string, string];
  const [pathPart, query = ''] = splitOnce(rest, '?');
  const params = new URLSearchParams(query);
  const attrs = params.get('target_session_attrs');
  if (attrs !== null && !SESSION_ATTRS.has(attrs))
    throw new Error(
      `DATABASE_URL: target_session_attrs=${attrs} cannot be used: the gateway writes, so it connects to the writable primary (read-write or primary; any is taken as read-write)`,
    );
  // libpq's parameter, not a pg one: the gateway always looks for the writable host itself.
  params.delete('target_session_attrs');
  const kept = params.toString();
  const tail = attrs === null ? rest : pathPart + (kept !== '' ? `?${kept}` : '');
  const hosts = hostList === '' ? [''] : splitHosts(hostList);
  const auth = userinfo !== undefined ? `${userinfo}@` : '';
  return {
    urls: hosts.map((h) => `${scheme}${auth}${h}${tail}`),
    labels: hosts.map((h) => (h === '' ? 'localhost (default)' : /:\d+$/.test(h) ? h : `${h}:5432`)),
  };
}

function splitOnce(s: string, sep: string): [string, string | undefined] {
  const i = s.indexOf(sep);
  return i < 0 ? [s, undefined] : [s.slice(0, i), s.slice(i + 1)];
}

/** "h1:5432,[::1]:5433,h3" -> each host with its port; commas inside [IPv6] brackets do not occur. */
function splitHosts(list: string): string[] {
  const hosts = list.split(',').map((h) => h.trim());
  if (hosts.some((h) => h === '')) throw new Error('DATABASE_URL names an empty host between commas');
  return hosts;
}
