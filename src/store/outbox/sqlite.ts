import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { SqlOutbox, type ClaimDialect } from './base.js';

/** SQLite has one writer at a time: the claim's conditional update is the whole claim, no row locks. */
export const SQLITE_CLAIM: ClaimDialect = { among: (rows) => sql`in (${rows})`, lock: sql`` };

export class SqliteOutbox extends SqlOutbox {
  constructor(db: Kysely<Database>) {
    super(db, SQLITE_CLAIM);
  }
}
