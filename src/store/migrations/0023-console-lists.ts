import type { Kysely, Migration } from 'kysely';

// The console's lists of refunds and of notifications, newest first, paged by the last row shown:
// each needs its table read in the order it was written, which no index gave (refunds were read by
// order and by status, notifications by order and by when they are due).
export const consoleLists: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.createIndex('refunds_created').on('refunds').columns(['created_at', 'refund_id']).execute();
    await db.schema.createIndex('outbox_created').on('outbox').columns(['created_at', 'event_id']).execute();
  },
};
