import { fdatasync } from 'node:fs';
import { afterAll, beforeAll } from 'vitest';
import type { ServeOptions } from '../../src/server.js';
import { startTestGateway, type TestGateway } from './gateway.js';

/**
 * A SQLite gateway's WAL flush (ServeOptions.sqliteFlush) that a test can hold: fdatasync, but
 * while `holding` each flush is answered only once the test releases it.
 */
export class Flushes {
  holding = false;
  held: Array<() => void> = [];
  flush = (fd: number): Promise<void> => {
    const done = new Promise<void>((resolve, reject) => fdatasync(fd, (e) => (e ? reject(e) : resolve())));
    if (!this.holding) return done;
    return new Promise((resolve, reject) => this.held.push(() => void done.then(resolve, reject)));
  };
  release(): void {
    this.holding = false;
    for (const go of this.held.splice(0)) go();
  }
}

/**
 * In a `describe`: a SQLite test gateway whose flushes the tests can hold, started before them and
 * closed after them (every held flush released first). `gw()` is the gateway once started.
 */
export function flushHeldGateway(opts: Partial<ServeOptions> = {}): { flushes: Flushes; gw: () => TestGateway } {
  const flushes = new Flushes();
  let gw: TestGateway | undefined;
  beforeAll(async () => {
    gw = await startTestGateway('sqlite', { ...opts, sqliteFlush: flushes.flush });
  });
  afterAll(async () => {
    flushes.release();
    await gw?.close();
  });
  return { flushes, gw: () => gw! };
}

/** `p`'s value if it settles within `ms`, else 'held'. */
export const within = <T>(p: Promise<T>, ms: number): Promise<T | 'held'> =>
  Promise.race([p, new Promise<'held'>((r) => setTimeout(() => r('held'), ms))]);
