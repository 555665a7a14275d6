import { sql, type Kysely, type Migration } from 'kysely';

// A statement is written in parts (its lines a thousand or so at a time, so that a large one holds
// no transaction long and no more than a part in memory): `importing` until its last part and its
// fee entries are written in one unit, `imported` from then on. A statement left `importing` by a
// crash is taken over by the next import of its day.
export const statementStatus: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .alterTable('provider_statements')
      .addColumn('status', 'text', (c) =>
        c
          .notNull()
          .defaultTo('imported')
          .check(sql`status in ('importing', 'imported')`),
      )
      .execute();
  },
};
