// A callback_url with user:password@ is HTTP Basic authentication, as curl and browsers read it:
// the notification carries the Authorization header (undici alone would drop the credentials),
// and what people see of the URL (the CLI) hides the password.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatOrderNotifications, listOrderNotifications } from '../../src/cli/notifications.js';
import { ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';
import { Receiver } from './receiver.js';

describe.each(ENGINES)('a callback_url with credentials on %s', (engine) => {
  let gw: TestGateway;
  let rx: Receiver;
  beforeAll(async () => {
    rx = await Receiver.start();
    gw = await startTestGateway(engine, { notify: { pollIntervalMs: 100 } });
  });
  afterAll(async () => {
    await gw?.close();
    await rx?.close();
  });

  it('is delivered with HTTP Basic authentication, and the CLI shows it without the password', async () => {
    const url = new URL(`${rx.url}/basic?shop=1`);
    url.username = 'shop';
    url.password = 'p@ss:wörd';
    const { order_id, merchant_reference } = await gw.create({ callback_url: url.href });
    await gw.pay(order_id);
    await rx.waitFor(
      (rs) => rs.some((r) => r.fields.get('merchant_reference') === merchant_reference),
      'the notification',
    );
    const mine = rx.received.find((r) => r.fields.get('merchant_reference') === merchant_reference)!;
    expect(mine.headers.authorization).toBe(`Basic ${Buffer.from('shop:p@ss:wörd', 'utf8').toString('base64')}`);
    const shown = await listOrderNotifications(gw.store, gw.merchant.user_id, merchant_reference);
    expect(shown.notifications[0].callback_url).toBe(`http://shop:***@${url.host}/basic?shop=1`);
    expect(formatOrderNotifications(shown)).not.toContain('p%40ss');
  });

  it('without credentials sends no Authorization header', async () => {
    const { order_id, merchant_reference } = await gw.create({ callback_url: `${rx.url}/plain` });
    await gw.pay(order_id);
    await rx.waitFor(
      (rs) => rs.some((r) => r.fields.get('merchant_reference') === merchant_reference),
      'the notification',
    );
    expect(
      rx.received.find((r) => r.fields.get('merchant_reference') === merchant_reference)!.headers.authorization,
    ).toBeUndefined();
  });
});
