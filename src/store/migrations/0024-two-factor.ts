import type { Kysely, Migration } from 'kysely';

// Two-factor recovery codes: each signs in once in place of an authenticator's code. Only a hash of
// each is kept; a user's codes are replaced together (a new set, or none when two-factor is off).
// And an organisation's closing: when it was closed (none while open); a closed one stays closed.
export const recoveryCodes: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable('organisations').addColumn('closed_at', 'bigint').execute();
    await db.schema
      .createTable('console_recovery_codes')
      .addColumn('console_user_id', 'text', (c) => c.notNull().references('console_users.console_user_id'))
      .addColumn('code_hash', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('used_at', 'bigint')
      .addPrimaryKeyConstraint('console_recovery_codes_pk', ['console_user_id', 'code_hash'])
      .execute();
  },
};
