/**
 * Names for the SQL texts of the statements compiled once (prepared.ts), so that PostgreSQL can
 * keep them parsed and planned per connection (postgres.ts) instead of parsing the text again on
 * every call. Only these texts are named: they are few, fixed, and never DDL. One text, one name.
 */
const names = new Map<string, string>();

export function nameStatement(sql: string): void {
  if (!names.has(sql)) names.set(sql, `gw_${names.size + 1}`);
}

export function statementName(sql: string): string | undefined {
  return names.get(sql);
}
