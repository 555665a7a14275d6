import { fdatasync } from 'node:fs';

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
