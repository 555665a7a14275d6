import type BetterSqlite3 from 'better-sqlite3';

/** A connection's prepared statements by their SQL (better-sqlite3 would parse each query anew). */
export class StatementCache {
  private readonly statements = new Map<string, BetterSqlite3.Statement>();

  constructor(readonly db: BetterSqlite3.Database) {}

  get(sql: string): BetterSqlite3.Statement {
    let stmt = this.statements.get(sql);
    if (!stmt) {
      stmt = this.db.prepare(sql);
      // A server runs a few hundred statements at most; past that, something makes SQL anew.
      if (this.statements.size > 500) this.statements.clear();
      this.statements.set(sql, stmt);
    }
    return stmt;
  }
}
