import { writeSync } from 'node:fs';
import { hostname } from 'node:os';

/**
 * The log's output: lines are gathered and written to a file descriptor (standard output) in
 * batches rather than with a system call per line. A line waits at most `flushMs`; what is pending
 * is written when the process exits or `stop()` is called, so it is lost only if the process is
 * killed outright.
 *
 * A batch is written with one non-blocking system call on the event loop (standard output's pipe
 * or terminal is non-blocking under Node; a file takes the write into the page cache). What the
 * reader has no room for (EAGAIN) waits and is tried again on a timer. Not on the thread pool: a
 * write in flight there when the process exits (a crash, process.exit) may have written part of
 * its batch, and nobody can know which part, so the rest was lost; here what is written is always
 * known.
 *
 * Written for the gateway instead of pino's sonic-boom, which measures the byte length of its whole
 * pending buffer on every line (docs/design/log-writer.md).
 */
export class BatchedOutput {
  private pending: string[] = [];
  private pendingChars = 0;
  private dropped = 0;
  /** A batch the reader was not ready for (EAGAIN), waiting to be written again, and its timer. */
  private retry: { data: Buffer; offset: number; timer: NodeJS.Timeout } | null = null;
  private readonly timer: NodeJS.Timeout;
  private readonly onExit = () => this.flushSync();

  constructor(
    private readonly fd: number,
    private readonly batchChars = 4096,
    flushMs = 100,
    /** A reader that stopped reading must not make the gateway hold every line in memory. */
    private readonly maxPendingChars = 64 * 1024 * 1024,
  ) {
    this.timer = setInterval(() => this.flush(), flushMs).unref();
    process.on('exit', this.onExit);
  }

  write(line: string): boolean {
    if (this.pendingChars >= this.maxPendingChars) {
      this.dropped++;
      return false;
    }
    this.pending.push(line);
    this.pendingChars += line.length;
    if (this.retry === null && this.pendingChars >= this.batchChars) this.flush();
    return true;
  }

  /** Writes what is pending, unless a batch is waiting for the reader (its retry writes the rest). */
  flush(): void {
    if (this.retry !== null || this.pending.length === 0) return;
    this.writeOut(Buffer.from(this.take()), 0);
  }

  /** Writes everything pending now, blocking; for exit and shutdown. */
  flushSync(): void {
    // A batch waiting to be written again goes first, then what is pending.
    const retry = this.retry;
    if (retry) {
      clearTimeout(retry.timer);
      this.retry = null;
      if (!this.writeSync(retry.data, retry.offset)) return;
    }
    if (this.pending.length > 0) this.writeSync(Buffer.from(this.take()), 0);
  }

  /** Whether all of it was written: a slow reader (a full pipe) gets up to a second to make room each time, a gone one (EPIPE) nothing. */
  private writeSync(data: Buffer, offset: number): boolean {
    for (let eagain = 0; offset < data.length;) {
      try {
        offset += writeSync(this.fd, data, offset);
        eagain = 0;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EAGAIN' || ++eagain > 1000) return false;
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
      }
    }
    return true;
  }

  stop(): void {
    clearInterval(this.timer);
    process.off('exit', this.onExit);
    this.flushSync();
  }

  private take(): string {
    let data = this.pending.join('');
    if (this.dropped > 0) {
      data +=
        JSON.stringify({
          level: 40,
          time: Date.now(),
          pid: process.pid,
          hostname: hostname(),
          dropped: this.dropped,
          msg: 'log lines dropped: the output was not being read',
        }) + '\n';
      this.dropped = 0;
    }
    this.pending = [];
    this.pendingChars = 0;
    return data;
  }

  private writeOut(data: Buffer, offset: number): void {
    try {
      while (offset < data.length) offset += writeSync(this.fd, data, offset);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EAGAIN') {
        const timer = setTimeout(() => {
          this.retry = null;
          this.writeOut(data, offset);
        }, 10).unref();
        this.retry = { data, offset, timer };
        return;
      }
      // Any other error (EPIPE: nobody reads the output any more): the batch cannot be written anywhere.
    }
    if (this.pendingChars >= this.batchChars) this.flush();
  }
}
