// The log line of a failed notification attempt: enough for an operator to see where it went and
// why it failed, without the merchant's secrets (api_key, signatures, the callback URL's query).
import { describe, expect, it } from 'vitest';
import { ENGINES } from '../support/gateway.js';
import { silentLog, useWorkerBed } from './worker-bed.js';

describe.each(ENGINES)('the log of a failed attempt on %s', (engine) => {
  const bed = useWorkerBed(engine);

  it('names the callback host, and neither the api_key nor a signature', async () => {
    const { gw, rx } = bed;
    rx.answers.push({ status: 503, body: 'busy' });
    const { order_id, merchant_reference } = await gw.create({
      callback_url: `${rx.url}/logged?token=secret-in-query`,
    });
    await gw.pay(order_id);
    const lines: Array<Record<string, unknown>> = [];
    const log = {
      ...silentLog,
      info: ((fields: Record<string, unknown>, msg: string) =>
        void lines.push({ ...fields, msg })) as typeof silentLog.info,
    };
    bed.startWorker({ retryScheduleMs: [50], pollIntervalMs: 100 }, { log });
    await rx.waitFor(
      (rs) => rs.some((r) => r.fields.get('merchant_reference') === merchant_reference && r.answered === 'sent'),
      'the retry',
    );
    const failed = lines.find((l) => l.msg === 'notification attempt failed');
    expect(failed).toMatchObject({ order_id, callback_host: `127.0.0.1:${rx.port}`, http_status: 503, attempt: 1 });
    const text = JSON.stringify(lines);
    expect(text).not.toContain(gw.merchant.api_key);
    expect(text).not.toContain('secret-in-query');
    expect(text).not.toContain(rx.received[0].fields.get('signature')!);
  });
});
