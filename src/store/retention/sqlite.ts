import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { SqlRetention } from './base.js';

/** One writer at a time: a pick needs no lock. */
export class SqliteRetention extends SqlRetention {
  constructor(db: Kysely<Database>) {
    super(db, sql``);
  }
}
