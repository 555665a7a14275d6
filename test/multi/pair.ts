// Two gateway instances in this process sharing one fresh PostgreSQL database, as behind a load
// balancer. The merchant of instance `a` is the one to use on both.
import pg from 'pg';
import { inject } from 'vitest';
import type { ServeOptions } from '../../src/server.js';
import { createTestDatabase } from '../support/pg-db.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';

export interface GatewayPair {
  database: string;
  a: TestGateway;
  b: TestGateway;
  close(): Promise<void>;
}

export async function startPair(opts: Partial<ServeOptions> = {}): Promise<GatewayPair> {
  const database = await createTestDatabase(inject('pgUrl'));
  const a = await startTestGateway('postgres', { ...opts, database });
  const b = await startTestGateway('postgres', { ...opts, database }).catch(async (e: unknown) => {
    await a.close();
    throw e;
  });
  return {
    database,
    a,
    b,
    async close() {
      await Promise.all([a.close(), b.close()]);
    },
  };
}

/** One query on a short-lived connection. */
export async function pgQuery<T extends pg.QueryResultRow = Record<string, any>>(
  url: string,
  text: string,
  params: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text, params)).rows;
  } finally {
    await client.end();
  }
}

export { until } from '../support/wait.js';
