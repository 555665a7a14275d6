// One process serves a SQLite database: a second `gateway serve` on the same file is refused at
// start, the CLI still works beside the server, and since no other process can hold a claim, the
// claims a stopped run left are freed at start (their notifications go at once, not after the lease).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../src/server.js';
import { openStore } from '../../src/store/open.js';
import { Receiver } from '../notify/receiver.js';
import { databaseFor, startTestGateway, type TestGateway } from '../support/gateway.js';

const quiet = { port: 0, host: '127.0.0.1', logLevel: 'silent' } as const;

describe('serving a SQLite database', () => {
  let database = '';
  let cleanup = () => {};
  let gw: TestGateway | undefined;
  let rx: Receiver;
  beforeAll(async () => {
    ({ database, cleanup } = await databaseFor('sqlite'));
    rx = await Receiver.start();
  });
  afterAll(async () => {
    await gw?.close();
    await rx?.close();
    cleanup();
  });

  it('refuses a second gateway on the same file while the first serves it; the CLI still works', async () => {
    gw = await startTestGateway('sqlite', { database });
    await expect(startGateway({ ...quiet, database, notify: { enabled: false } })).rejects.toThrow(
      /another gateway is already serving/,
    );
    const cli = await openStore(database);
    try {
      expect(await cli.accounts.findUser(gw.merchant.user_id)).toMatchObject({ user_id: gw.merchant.user_id });
    } finally {
      await cli.close();
    }
    expect((await gw.create()).reply.code).toBe(0);
  });

  it('serves again once the first has stopped, and sends at once what a stopped run had claimed', async () => {
    const { order_id, merchant_reference } = await gw!.create({ callback_url: `${rx.url}/left` });
    await gw!.pay(order_id);
    // A run that claimed the notification for ten minutes, then stopped before attempting it.
    const claimed = await gw!.store.outbox.claimDue({
      claimed_by: 'gone',
      now: Date.now() + 1,
      lease_ms: 600_000,
      limit: 10,
      per_host: 10,
    });
    expect(claimed.map((r) => r.order_id)).toContain(order_id);
    await gw!.close();
    gw = undefined;
    const again: RunningGateway = await startGateway({
      ...quiet,
      database,
      notify: { pollIntervalMs: 100, stopGraceMs: 0 },
    });
    try {
      await rx.waitFor(
        (rs) => rs.some((r) => r.fields.get('merchant_reference') === merchant_reference && r.answered === 'sent'),
        'the notification the stopped run had claimed',
      );
    } finally {
      await again.close();
    }
  });
});
