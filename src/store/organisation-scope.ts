import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

/**
 * The API users of an organisation, as a subquery: what belongs to an organisation (its orders,
 * wallets, notifications) is what belongs to its users. The console holds a merchant's user to it.
 */
export function organisationUsers(db: Kysely<Database>, organisation_id: number) {
  return db.selectFrom('users').select('user_id').where('organisation_id', '=', organisation_id);
}
