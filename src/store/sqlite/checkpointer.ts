import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

// SQLite's automatic WAL checkpoint runs inside whichever COMMIT crosses the threshold and fsyncs
// the database file there: on the event loop, a stall of up to seconds under load. Instead the
// serving connection never checkpoints, and this worker thread, with its own connection,
// checkpoints the WAL in the background (docs/design/group-commit.md, "Checkpoints").
//
// Every tick copies what was committed (PASSIVE: no lock the gateway's writer needs). Once all of
// the log is copied, and it holds more than restartFrames, a RESTART makes the next commit write
// the log from its start again, over blocks the file already has (a few milliseconds of the write
// lock). The file is truncated (TRUNCATE) only when nothing was committed since the last tick and
// it is larger than truncateBytes: freeing a large file's blocks holds the write lock for tens of
// milliseconds, which every write of a busy gateway would wait for. Neither waits for the lock
// (busy_timeout 0): if the gateway is writing or reading the log, the next tick tries again.

const WORKER = `
const { statSync } = require('node:fs');
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 5000');
db.pragma('synchronous = FULL');
let stopping = false;
let lastLog = -1;
function walBytes() {
  try { return statSync(workerData.file + '-wal').size; } catch { return 0; }
}
function tick() {
  if (stopping) return;
  try {
    const [r] = db.pragma('wal_checkpoint(PASSIVE)');
    if (r && r.log > 0 && r.checkpointed === r.log) {
      const idle = r.log === lastLog;
      const mode = idle && walBytes() > workerData.truncateBytes ? 'TRUNCATE' : r.log > workerData.restartFrames ? 'RESTART' : null;
      if (mode) {
        db.pragma('busy_timeout = 0');
        try { db.pragma('wal_checkpoint(' + mode + ')'); } catch {} finally { db.pragma('busy_timeout = 5000'); }
      }
    }
    lastLog = r ? r.log : -1;
  } catch (e) {
    parentPort.postMessage({ error: String(e && e.message || e) });
  }
  timer = setTimeout(tick, workerData.intervalMs);
}
let timer = setTimeout(tick, workerData.intervalMs);
parentPort.on('message', (m) => {
  if (m === 'stop') {
    stopping = true;
    clearTimeout(timer);
    try { db.pragma('wal_checkpoint(PASSIVE)'); } catch {}
    db.close();
    parentPort.postMessage({ stopped: true });
  }
});
`;

export interface Checkpointer {
  stop(): Promise<void>;
}

export interface CheckpointerOptions {
  /** How often the log is copied. */
  intervalMs?: number;
  /** Past this many frames (of a page each), a fully copied log is restarted. */
  restartFrames?: number;
  /** An idle log file larger than this is truncated. */
  truncateBytes?: number;
}

export function startCheckpointer(
  file: string,
  { intervalMs = 200, restartFrames = 4096, truncateBytes = 16 * 1024 * 1024 }: CheckpointerOptions = {},
): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER, {
    eval: true,
    // The code above is CommonJS: a process started with --input-type=module (a `node -e` script
    // that opens the store) would otherwise hand that flag on, and run it as a module.
    execArgv: [],
    workerData: { file, intervalMs, driver, restartFrames, truncateBytes },
  });
  worker.unref();
  worker.on('message', (m: { error?: string }) => {
    if (m.error) process.emitWarning(`SQLite checkpoint failed: ${m.error}`);
  });
  // Without a listener a failed worker would end the process: the gateway keeps serving, and says
  // that its log file is no longer checkpointed (it grows until the next start).
  worker.on('error', (e) => {
    process.emitWarning(`SQLite checkpoints stopped: ${e.message}; the log file grows until the gateway restarts`);
  });
  let exited = false;
  worker.once('exit', () => {
    exited = true;
  });
  return {
    stop: () =>
      new Promise<void>((resolve) => {
        // A worker that failed has exited already: there is no second 'exit' to wait for.
        if (exited) return resolve();
        const done = () => resolve();
        worker.once('exit', done);
        worker.on('message', (m: { stopped?: boolean }) => {
          if (m.stopped) void worker.terminate();
        });
        worker.postMessage('stop');
        setTimeout(() => void worker.terminate(), 2000).unref();
      }),
  };
}
