// The sign-in throttle's counter and the console's cleanup, on both engines: failures that arrive together (a parallel
// guessing attack) each count, a window that has passed starts again, the limit locks.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expireConsoleState, inviteUser } from '../../src/usecases/console-auth.js';
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
    await Promise.all(
      Array.from({ length: 12 }, () => gw.store.console.recordFailure('account:parallel@example.com', now, POLICY)),
    );
    const [row] = await gw.store.console.throttle(['account:parallel@example.com']);
    expect(row).toMatchObject({ failures: 12, window_start: now, locked_until: now + POLICY.lockMs });
  });

  it('locks at the limit, not before, and starts a new window once the old one has passed', async () => {
    const key = 'address:192.0.2.7';
    const t0 = 1_800_000_000_000;
    for (let i = 0; i < 4; i++)
      expect((await gw.store.console.recordFailure(key, t0 + i, POLICY)).locked_until).toBe(0);
    expect(await gw.store.console.recordFailure(key, t0 + 10, POLICY)).toMatchObject({
      failures: 5,
      window_start: t0,
      locked_until: t0 + 10 + POLICY.lockMs,
    });
    const later = t0 + POLICY.windowMs;
    // The lock it had stays; the count starts again.
    expect(await gw.store.console.recordFailure(key, later, POLICY)).toMatchObject({
      failures: 1,
      window_start: later,
      locked_until: t0 + 10 + POLICY.lockMs,
    });
  });
});

describe.each(ENGINES)('console cleanup on %s', (engine) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(engine);
  });
  afterAll(async () => gw?.close());

  it('removes sessions past their idle or absolute end and throttle counts that are over, and nothing else', async () => {
    const now = gw.ctx.now();
    const policy = { idleMs: 30 * 60_000, absoluteMs: 12 * 3600_000 };
    const { user } = await inviteUser(
      gw.ctx,
      { kind: 'cli', name: 'test' },
      { email: `cleanup-${engine}@example.com`, kind: 'operator', role: 'support', organisation_id: null },
    );
    const session = (session_hash: string, created_at: number, last_seen_at: number) =>
      gw.store.console.saveSession({
        session_hash,
        console_user_id: user.console_user_id,
        data: '{}',
        created_at,
        last_seen_at,
        ip: null,
      });
    await session('live', now - 3600_000, now - 60_000);
    await session('idle', now - 3600_000, now - policy.idleMs - 1);
    await session('too-old', now - policy.absoluteMs - 1, now - 1000);
    await gw.store.console.recordFailure('address:old', now - 16 * 60_000, {
      windowMs: 15 * 60_000,
      limit: 20,
      lockMs: 15 * 60_000,
    });
    await gw.store.console.recordFailure('address:recent', now - 60_000, {
      windowMs: 15 * 60_000,
      limit: 20,
      lockMs: 15 * 60_000,
    });
    await gw.store.console.recordFailure('account:locked', now - 16 * 60_000, {
      windowMs: 15 * 60_000,
      limit: 1,
      lockMs: 60 * 60_000,
    });
    expect(await expireConsoleState(gw.ctx, policy)).toEqual({ sessions: 2, throttle: 1 });
    expect(await gw.store.console.findSession('live')).toBeDefined();
    expect(await gw.store.console.findSession('idle')).toBeUndefined();
    expect(
      (await gw.store.console.throttle(['address:old', 'address:recent', 'account:locked']))
        .map((r) => r.throttle_key)
        .sort(),
    ).toEqual(['account:locked', 'address:recent']);
  });
});
