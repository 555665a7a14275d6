import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { SqlRetention } from './base.js';

/**
 * Instances pruning at once skip each other's rows. `no key update` rather than `update` on a
 * notification: the worker's insert of an attempt shares the notification's key (its foreign key)
 * and is not held up. Deleting a picked attempt or nonce then takes the stronger lock, which nothing
 * else asks for on them (nothing references them).
 */
export class PostgresRetention extends SqlRetention {
  constructor(db: Kysely<Database>) {
    super(db, sql` for no key update skip locked`);
  }
}
