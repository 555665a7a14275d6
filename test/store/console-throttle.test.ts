// The sign-in throttle's counter, on both engines: failures that arrive together (a parallel
// guessing attack) each count, a window that has passed starts again, the limit locks.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';

const POLICY = { windowMs: 60_000, limit: 5, lockMs: 600_000 };

describe.each(ENGINES)('console throttle on %s', (engine) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(engine);
  });
  afterAll(async () => gw?.close());

  it('counts every one of 12 failures recorded at once, and locks', async () => {
    const now = 1_800_000_000_000;
    await Promise.all(Array.from({ length: 12 }, () => gw.store.console.recordFailure('account:parallel@example.com', now, POLICY)));
    const [row] = await gw.store.console.throttle(['account:parallel@example.com']);
    expect(row).toMatchObject({ failures: 12, window_start: now, locked_until: now + POLICY.lockMs });
  });

  it('locks at the limit, not before, and starts a new window once the old one has passed', async () => {
    const key = 'address:192.0.2.7';
    const t0 = 1_800_000_000_000;
    for (let i = 0; i < 4; i++) expect((await gw.store.console.recordFailure(key, t0 + i, POLICY)).locked_until).toBe(0);
    expect(await gw.store.console.recordFailure(key, t0 + 10, POLICY)).toMatchObject({ failures: 5, window_start: t0, locked_until: t0 + 10 + POLICY.lockMs });
    const later = t0 + POLICY.windowMs;
    // The lock it had stays; the count starts again.
    expect(await gw.store.console.recordFailure(key, later, POLICY)).toMatchObject({ failures: 1, window_start: later, locked_until: t0 + 10 + POLICY.lockMs });
  });
});
