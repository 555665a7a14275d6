// For tests that drive a NotificationWorker of their own: a gateway whose worker is off (so rows
// wait in the outbox until the test's worker takes them), a receiver, and the test's worker, all
// stopped after the describe block.
import { afterAll, beforeAll } from 'vitest';
import { NotificationWorker, type WorkerDeps } from '../../src/notify/worker.js';
import { resolveNotifySettings, type NotifySettings } from '../../src/notify/settings.js';
import { startTestGateway, type EngineName, type TestGateway } from '../support/gateway.js';
import { Receiver } from './receiver.js';

export const silentLog = { debug() {}, info() {}, warn() {}, error() {} };

export interface WorkerBed {
  readonly gw: TestGateway;
  readonly rx: Receiver;
  /** Starts a worker on the gateway's store (stopped after the block). */
  startWorker(settings: Partial<NotifySettings>, deps?: Partial<Pick<WorkerDeps, 'log' | 'now'>>): NotificationWorker;
}

/** Registers beforeAll/afterAll for the enclosing describe block. */
export function useWorkerBed(engine: EngineName): WorkerBed {
  let gw: TestGateway | undefined;
  let rx: Receiver | undefined;
  const workers: NotificationWorker[] = [];
  beforeAll(async () => {
    rx = await Receiver.start();
    gw = await startTestGateway(engine, { notify: { enabled: false } });
  });
  afterAll(async () => {
    for (const w of workers) await w.stop();
    await gw?.close();
    await rx?.close();
  });
  return {
    get gw() {
      return gw!;
    },
    get rx() {
      return rx!;
    },
    startWorker(settings, deps = {}) {
      const worker = new NotificationWorker({
        store: gw!.store,
        mode: 'sandbox',
        settings: resolveNotifySettings({ stopGraceMs: 0, ...settings }),
        log: silentLog,
        ...deps,
      });
      workers.push(worker);
      worker.start();
      return worker;
    },
  };
}
