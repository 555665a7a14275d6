// ORDER_EXPIRY_MS is bounded both ways at start: at least the nonce's life, at most Alipay's 15 days.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_ORDER_EXPIRY_MS, startGateway } from '../../src/server.js';
import { databaseFor } from '../support/gateway.js';

const quiet = { port: 0, host: '127.0.0.1', logLevel: 'silent', notify: { enabled: false } } as const;

describe('ORDER_EXPIRY_MS', () => {
  let database = '';
  let cleanup = () => {};
  beforeAll(async () => {
    ({ database, cleanup } = await databaseFor('sqlite'));
  });
  afterAll(() => cleanup());

  it("refuses to start above 15 days or below the nonce's life, and starts at 15 days", async () => {
    await expect(startGateway({ ...quiet, database, orderExpiryMs: MAX_ORDER_EXPIRY_MS + 1 })).rejects.toThrow(
      /ORDER_EXPIRY_MS \(1296000001\) must be at most 1296000000 \(15 days\)/,
    );
    await expect(startGateway({ ...quiet, database, orderExpiryMs: 60_000, nonceTtlMs: 120_000 })).rejects.toThrow(
      /must be at least NONCE_TTL_MS/,
    );
    const gw = await startGateway({ ...quiet, database, orderExpiryMs: MAX_ORDER_EXPIRY_MS });
    await gw.close();
  });
});
