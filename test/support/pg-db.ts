// Per-test-file databases on the test run's PostgreSQL server.
//
//   import { inject } from 'vitest';
//   import { createTestDatabase } from '../support/pg-db.js';
//   const url = await createTestDatabase(inject('pgUrl'));
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type {} from './postgres.js'; // brings in the ProvidedContext typing of inject('pgUrl')

let counter = 0;

/** Create a fresh, uniquely named, empty database on the server of `baseUrl` and return its URL. */
export async function createTestDatabase(baseUrl: string): Promise<string> {
  const name = `t_${process.pid}_${++counter}_${randomBytes(4).toString('hex')}`;
  const client = new pg.Client({ connectionString: baseUrl });
  await client.connect();
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        await client.query(`CREATE DATABASE "${name}"`);
        break;
      } catch (err) {
        // 55006: template1 busy (another session connected to it); retry briefly.
        if ((err as { code?: string }).code !== '55006' || attempt >= 20) throw err;
        await new Promise((r) => setTimeout(r, 100 * attempt));
      }
    }
  } finally {
    await client.end();
  }
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return url.toString();
}
