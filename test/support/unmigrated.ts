import { afterAll, beforeAll } from 'vitest';
import { isPostgresUrl } from '../../src/store/open.js';
import type { SqlStore } from '../../src/store/sql-store.js';
import { databaseFor, type EngineName } from './gateway.js';

/**
 * A store on a fresh database of its own that is not migrated (a migration test takes it to the
 * version before the one it tests), opened before the describe's tests and closed after them:
 * call inside the describe, read the store through the getter.
 */
export function unmigratedStore(engine: EngineName): () => SqlStore {
  let store: SqlStore | undefined;
  let cleanup: (() => void) | undefined;
  beforeAll(async () => {
    const db = await databaseFor(engine);
    cleanup = db.cleanup;
    store = isPostgresUrl(db.database)
      ? (await import('../../src/store/postgres/open.js')).openPostgresStore(db.database)
      : (await import('../../src/store/sqlite/open.js')).openSqliteStore(db.database);
  });
  afterAll(async () => {
    await store?.close();
    cleanup?.();
  });
  return () => store!;
}
