// /readyz: 200 only when the database answers, its migrations are applied and the notification
// worker runs; 503 with the reason otherwise. PostgreSQL is a server of this test's own, stopped
// and started again under a running gateway. /healthz answers throughout.
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { startPostgres, type PostgresServer } from '../support/postgres.js';
import { until } from '../support/wait.js';

const ready = async (gw: TestGateway) => {
  const res = await fetch(`${gw.url}/readyz`);
  return {
    status: res.status,
    body: (await res.json()) as { status: string; reason?: string; checks: Record<string, string> },
  };
};

describe('readiness on sqlite', () => {
  let gw: TestGateway | undefined;
  afterAll(async () => gw?.close());

  it('is ready with delivery running; not with a migration missing or the worker stopped', async () => {
    gw = await startTestGateway('sqlite', { notify: { enabled: true } });
    expect(await ready(gw)).toEqual({
      status: 200,
      body: { status: 'ready', checks: { database: 'ok', migrations: 'ok', notifications: 'running' } },
    });
    // The database is one migration behind this code (as if an older schema were restored).
    await sql`delete from kysely_migration where name = '0009_key_overlap_totp_step'`.execute(gw.store.db);
    expect(await ready(gw)).toMatchObject({
      status: 503,
      body: { status: 'not ready', reason: 'migrations pending: 0009_key_overlap_totp_step' },
    });
    await sql`insert into kysely_migration (name, timestamp) values ('0009_key_overlap_totp_step', '2026-01-01T00:00:00.000Z')`.execute(
      gw.store.db,
    );
    expect((await ready(gw)).status).toBe(200);
    await gw.notifier!.stop();
    expect(await ready(gw)).toMatchObject({
      status: 503,
      body: { reason: 'the notification worker is not running', checks: { notifications: 'stopped' } },
    });
    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
  });

  it('is ready with delivery turned off on the instance, and says so', async () => {
    const off = await startTestGateway('sqlite');
    try {
      expect(await ready(off)).toMatchObject({ status: 200, body: { checks: { notifications: 'off' } } });
    } finally {
      await off.close();
    }
  });
});

describe('readiness on postgres', () => {
  let server: PostgresServer | undefined;
  let gw: TestGateway | undefined;
  afterAll(async () => {
    await gw?.close();
    await server?.stop();
  });

  it('answers 503 while PostgreSQL is stopped and 200 again once it is back', async () => {
    server = await startPostgres();
    gw = await startTestGateway('postgres', { database: server.url, notify: { enabled: true } });
    expect((await ready(gw)).status).toBe(200);
    await server.halt();
    const down = await ready(gw);
    expect(down.status).toBe(503);
    expect(down.body.reason).toMatch(/^database not answering: /);
    expect(down.body.checks.database).not.toBe('ok');
    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
    await server.resume();
    await until('readiness after PostgreSQL is back', async () => (await ready(gw!)).status === 200, 20_000);
    expect((await ready(gw)).body).toEqual({
      status: 'ready',
      checks: { database: 'ok', migrations: 'ok', notifications: 'running' },
    });
  }, 60_000);
});
