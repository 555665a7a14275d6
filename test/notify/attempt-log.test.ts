// The log line of a failed notification attempt: enough for an operator to see where it went and
// why it failed, without the merchant's secrets (api_key, signatures, the callback URL's query).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotificationWorker } from '../../src/notify/worker.js';
import { resolveNotifySettings } from '../../src/notify/settings.js';
import { ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';
import { Receiver } from './receiver.js';

const silent = { debug() {}, info() {}, warn() {}, error() {} };

describe.each(ENGINES)('the log of a failed attempt on %s', (engine) => {
  let gw: TestGateway;
  let rx: Receiver;
  let worker: NotificationWorker | undefined;
  beforeAll(async () => {
    rx = await Receiver.start();
    gw = await startTestGateway(engine, { notify: { enabled: false } });
  });
  afterAll(async () => {
    await worker?.stop();
    await gw?.close();
    await rx?.close();
  });

  it('names the callback host, and neither the api_key nor a signature', async () => {
    rx.answers.push({ status: 503, body: 'busy' });
    const { order_id, merchant_reference } = await gw.create({ callback_url: `${rx.url}/logged?token=secret-in-query` });
    await gw.pay(order_id);
    const lines: Array<Record<string, unknown>> = [];
    const log = { ...silent, info: (fields: Record<string, unknown>, msg: string) => void lines.push({ ...fields, msg }) };
    worker = new NotificationWorker({ store: gw.store, mode: 'sandbox', settings: resolveNotifySettings({ retryScheduleMs: [50], pollIntervalMs: 100 }), log });
    worker.start();
    await rx.waitFor((rs) => rs.some((r) => r.fields.get('merchant_reference') === merchant_reference && r.answered === 'sent'), 'the retry');
    const failed = lines.find((l) => l.msg === 'notification attempt failed');
    expect(failed).toMatchObject({ order_id, callback_host: `127.0.0.1:${rx.port}`, http_status: 503, attempt: 1 });
    const text = JSON.stringify(lines);
    expect(text).not.toContain(gw.merchant.api_key);
    expect(text).not.toContain('secret-in-query');
    expect(text).not.toContain(rx.received[0]!.fields.get('signature')!);
  });
});
