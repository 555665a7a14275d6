// The merchant API as OpenAPI 3.1 at /openapi.json (and /docs): a valid document, with exactly the
// spec's endpoints and the webhook, and response schemas that the gateway's real answers (success
// and refusals, from the black-box calls below) validate against.
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signRequest } from '../../sdk/signing.js';
import { createHosted, gatewayData, signed } from '../support/api.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';

const ENDPOINTS = [
  'post /v2/transaction',
  'get /v2/merchanthosted/gatewaydata/{nonce}',
  'get /v2/transaction/{merchant_reference}',
  'post /refund',
  'post /v2/refund',
  'post /cancel',
  'post /v2/cancel',
  'get /v2/detail/{wallet_id}',
];

type Doc = {
  openapi: string;
  paths: Record<string, Record<string, { responses: Record<string, { content: Record<string, { schema: object }> }> }>>;
  webhooks: Record<string, unknown>;
  servers: { url: string }[];
};

describe('OpenAPI document', () => {
  let gw: TestGateway;
  let doc: Doc;
  const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
  beforeAll(async () => {
    gw = await startTestGateway('sqlite');
    const res = await fetch(`${gw.url}/openapi.json`);
    expect(res.status).toBe(200);
    doc = (await res.json()) as Doc;
  });
  afterAll(async () => gw?.close());

  it('is valid OpenAPI 3.1 and names exactly the merchant API and its notification', async () => {
    expect(doc.openapi).toBe('3.1.0');
    const result = await new Validator().validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    const operations = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m} ${path}`));
    expect(operations.sort()).toEqual([...ENDPOINTS].sort());
    // Each is a route the gateway serves.
    for (const op of ENDPOINTS) {
      const [method, path] = op.split(' ') as [string, string];
      expect(gw.app.hasRoute({ method: method.toUpperCase(), url: path.replace(/\{(\w+)\}/g, ':$1') }), op).toBe(true);
    }
    expect(Object.keys(doc.webhooks)).toEqual(['resultNotification']);
    expect(doc.servers).toEqual([{ url: gw.ctx.config.publicUrl }]);
    // Every documented code is in the refusal schema.
    const refusal = JSON.stringify(doc.paths['/refund'].post.responses['200']);
    for (const code of [1, 3, 110, 201, 204, 205, 206, 207, 301, 302, 303, 304, 450, 550, 551, 556, 559, 562, 900, 901])
      expect(refusal).toContain(`- ${code}: `);
  });

  it("describes the real answers: each validates against its route's response schema", async () => {
    const check = (method: string, path: string, body: unknown) => {
      const schema = doc.paths[path][method].responses['200'].content['application/json'].schema;
      const validate = ajv.compile(schema);
      expect(validate(body), `${method} ${path}: ${JSON.stringify(body)} ${ajv.errorsText(validate.errors)}`).toBe(
        true,
      );
    };
    const m = gw.merchant;
    // Create: success, refusals of several kinds.
    const made = await gw.create();
    check('post', '/v2/transaction', made.reply);
    check(
      'post',
      '/v2/transaction',
      await gw.post('/v2/transaction', { ...gw.createBody(), signature: 'f'.repeat(64) }),
    );
    check('post', '/v2/transaction', await gw.post('/v2/transaction', { ...gw.createBody(), amount: 'x' }));
    check('post', '/v2/transaction', await gw.post('/v2/transaction', 'not json'));
    // Gateway data: success, then the nonce used.
    const mh = await createHosted(gw);
    check('get', '/v2/merchanthosted/gatewaydata/{nonce}', await gatewayData(gw, mh.nonce));
    check('get', '/v2/merchanthosted/gatewaydata/{nonce}', await gatewayData(gw, mh.nonce));
    // Query: pending, paid (with amount_cny), unknown.
    check('get', '/v2/transaction/{merchant_reference}', await gw.query(made.merchant_reference));
    await gw.pay(made.order_id);
    const paid = await gw.query(made.merchant_reference);
    expect(paid.status).toBe('paid');
    check('get', '/v2/transaction/{merchant_reference}', paid);
    check('get', '/v2/transaction/{merchant_reference}', await gw.query('no-such-order'));
    // Refund: made, then too much.
    const refund = (amount: string, reference: string) =>
      gw.post(
        '/refund',
        signed({ user_id: m.user_id, order_id: made.order_id, refund_amount: amount, reference }, m.api_key),
      );
    const done = await refund('1.00', 'r1');
    expect(done).toEqual({ code: 0, message: '' });
    check('post', '/refund', done);
    check('post', '/v2/refund', await refund('100000.00', 'r2'));
    // Cancel: a pending order, then a paid one (900).
    const pending = await gw.create();
    const cancel = (merchant_reference: string) =>
      gw.post('/cancel', signed({ user_id: m.user_id, merchant_reference }, m.api_key));
    check('post', '/cancel', await cancel(pending.merchant_reference));
    check('post', '/v2/cancel', await cancel(made.merchant_reference));
    // Wallet detail: signed, and another user's.
    const sig = signRequest({ wallet_id: m.wallet_id, user_id: m.user_id }, m.api_key);
    check(
      'get',
      '/v2/detail/{wallet_id}',
      await gw.get(`/v2/detail/${m.wallet_id}?user_id=${m.user_id}&signature=${sig}`),
    );
    check('get', '/v2/detail/{wallet_id}', await gw.get(`/v2/detail/${m.wallet_id}?user_id=U000000000`));
  });

  it('is refused by its own schemas when an answer breaks the contract', () => {
    const schema =
      doc.paths['/v2/transaction/{merchant_reference}'].get.responses['200'].content['application/json'].schema;
    const validate = ajv.compile(schema);
    expect(validate({ code: 0, message: 'SUCCESS', merchant_reference: 'x' })).toBe(false);
    expect(validate({ code: 7, message: 'FAIL' })).toBe(false);
  });

  it('serves the reference page from local assets', async () => {
    const page = await fetch(`${gw.url}/docs/`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('swagger-ui');
    const sources = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((x) => x[1]);
    expect(sources.length).toBeGreaterThan(0);
    for (const s of sources) expect(s).not.toMatch(/^(https?:)?\/\//);
    const script = sources.find((s) => s.endsWith('.js'))!;
    expect((await fetch(new URL(script, `${gw.url}/docs/`))).status).toBe(200);
  });
});
