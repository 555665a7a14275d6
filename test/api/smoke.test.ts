import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';
import { verifyCreateResponse, verifyQueryResponse } from '../../sdk/signing.js';

describe.each(ENGINES)('smoke on %s', (engine) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(engine);
  });
  afterAll(async () => gw?.close());

  it('creates, pays and queries a transaction', async () => {
    const { reply, order_id, merchant_reference } = await gw.create();
    expect(reply).toMatchObject({ code: 0, message: 'SUCCESS', host_url: `${gw.ctx.config.publicUrl}/v2/checkout` });
    expect(verifyCreateResponse(reply, gw.merchant.api_key)).toBe(true);
    expect((await gw.query(merchant_reference)).status).toBe('pending');
    expect(await gw.pay(order_id)).toMatchObject({ code: 0, status: 'paid' });
    const q = await gw.query(merchant_reference);
    expect(q).toMatchObject({ code: 0, status: 'paid', amount: 120, order_id });
    expect(verifyQueryResponse(q, gw.merchant.api_key)).toBe(true);
  });
});
