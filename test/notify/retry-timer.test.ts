// A retry's timer may fire before the worker's clock reaches the retry's due time (the event loop's
// timer clock is cached, and Date.now() moves on its own). The worker must then wait out the rest,
// not claim too early, find nothing due, and leave the retry to the next poll, minutes away.
// Likewise a retry that falls due after another one already has the timer must get its own wake-up.
import { afterAll, beforeAll, describe, it } from 'vitest';
import { ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';
import { Receiver } from './receiver.js';
import { useWorkerBed } from './worker-bed.js';

describe.each(ENGINES)('a retry timer that fires early on %s', (engine) => {
  const bed = useWorkerBed(engine);

  it('still retries when the retry is due, not at the next poll', async () => {
    const { gw, rx } = bed;
    rx.answers.push({ status: 503, body: 'busy' });
    const { order_id, merchant_reference } = await gw.create({ callback_url: `${rx.url}/early-timer` });
    await gw.pay(order_id);
    // The worker's clock runs at half the speed of the timers: every timer fires "early" by its
    // clock. The row is already due by it (paid before the worker started).
    const base = Date.now();
    const now = () => base + Math.floor((Date.now() - base) / 2);
    bed.startWorker({ pollIntervalMs: 3_600_000, retryScheduleMs: [200], jitter: 0 }, { now });
    await rx.waitFor(
      (rs) => rs.some((r) => r.fields.get('merchant_reference') === merchant_reference && r.answered === 'sent'),
      'the retry after the 503',
    );
  });
});

describe.each(ENGINES)('retries due one after another on %s', (engine) => {
  let gw: TestGateway;
  let rx: Receiver;
  beforeAll(async () => {
    rx = await Receiver.start();
    // Polls an hour apart: every retry must come from its own timer.
    gw = await startTestGateway(engine, { notify: { pollIntervalMs: 3_600_000, retryScheduleMs: [1_000], jitter: 0 } });
  });
  afterAll(async () => {
    await gw?.close();
    await rx?.close();
  });

  it('retries each when it is due, also the one due after the retry the timer was set for', async () => {
    const first = await gw.create({ callback_url: `${rx.url}/first` });
    const second = await gw.create({ callback_url: `${rx.url}/second` });
    const gotFirst = rx.waitFor((rs) => rs.some((r) => r.path === '/first'), 'the first attempt of the first order');
    rx.answers.push({ status: 503, body: 'busy' });
    await gw.pay(first.order_id);
    await gotFirst;
    // The second fails a moment later, so its retry is due a moment after the first one's.
    rx.answers.push({ status: 503, body: 'busy' });
    await gw.pay(second.order_id);
    await rx.waitFor(
      (rs) =>
        [first, second].every((o) =>
          rs.some((r) => r.fields.get('merchant_reference') === o.merchant_reference && r.answered === 'sent'),
        ),
      'both retries',
    );
  });
});
