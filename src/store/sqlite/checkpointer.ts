import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

// SQLite's automatic WAL checkpoint runs inside whichever COMMIT crosses the threshold and fsyncs
// the database file there: on the event loop, a stall of up to seconds under load. Instead the
// serving connection never checkpoints, and this worker thread, with its own connection,
// checkpoints the WAL in the background.

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 5000');
db.pragma('synchronous = FULL');
let stopping = false;
function tick() {
  if (stopping) return;
  try {
    const [r] = db.pragma('wal_checkpoint(PASSIVE)');
    // Once the log is large and fully copied, truncate it so the file does not keep growing. Without
    // waiting: TRUNCATE holds the write lock while it waits for readers, and the gateway's writer
    // would wait for it on the event loop; if anyone is busy now, the next tick tries again.
    if (r && r.log > 20000 && r.checkpointed === r.log) {
      db.pragma('busy_timeout = 0');
      try { db.pragma('wal_checkpoint(TRUNCATE)'); } catch {} finally { db.pragma('busy_timeout = 5000'); }
    }
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

export function startCheckpointer(file: string, intervalMs = 200): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER, { eval: true, workerData: { file, intervalMs, driver } });
  worker.unref();
  worker.on('message', (m: { error?: string }) => {
    if (m.error) process.emitWarning(`SQLite checkpoint failed: ${m.error}`);
  });
  return {
    stop: () =>
      new Promise<void>((resolve) => {
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
