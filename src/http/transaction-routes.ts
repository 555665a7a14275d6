import type { FastifyInstance } from 'fastify';
import { fail } from '../domain/errors.js';
import { createTransaction, type CreateRequest } from '../usecases/create-transaction.js';
import { getGatewayData } from '../usecases/get-gateway-data.js';
import { queryTransaction } from '../usecases/query-transaction.js';
import type { GatewayContext } from '../usecases/context.js';
import { queryAnswerJson, sharedAnswerJson } from './query-answer.js';
import { stringBody } from './body-parsers.js';
import { ClientGone } from './client-gone.js';
import { API_ROUTE } from './request-log.js';
import { API_TAGS } from './openapi.js';
import { createAnswer, gatewayDataAnswer, queryAnswer } from './response-schemas.js';
import { createTransactionSchema, queryTransactionSchema } from './schemas.js';

const NUMBERS_ALLOWED = ['amount', 'host_type', 'present_qr', 'version'] as const;

export async function transactionRoutes(app: FastifyInstance, ctx: GatewayContext): Promise<void> {
  app.post('/v2/transaction', {
    config: API_ROUTE,
    schema: {
      tags: [API_TAGS.payments],
      operationId: 'createTransaction',
      summary: 'Create a transaction (hosted checkout, or merchant-hosted QR with host_type=1)',
      description:
        'Signed: see docs/api.md, Signatures. JSON (or form-encoded) body; amount, host_type, present_qr and version may be sent as JSON numbers.',
      consumes: ['application/json', 'application/x-www-form-urlencoded'],
      body: createTransactionSchema,
      response: createAnswer,
    },
    preValidation: stringBody(NUMBERS_ALLOWED),
    handler: async (request) => createTransaction(ctx, request.body as CreateRequest),
  });

  app.get('/v2/merchanthosted/gatewaydata/:nonce', {
    config: API_ROUTE,
    // A HEAD (a link checker, a proxy's probe) would run this and use up the nonce without showing the data.
    exposeHeadRoute: false,
    schema: {
      tags: [API_TAGS.payments],
      operationId: 'getGatewayData',
      summary: "Merchant-hosted QR: the order's data and QR picture (uses up the nonce)",
      params: { type: 'object', properties: { nonce: { type: 'string', minLength: 1, maxLength: 128 } } },
      response: gatewayDataAnswer,
    },
    handler: async (request) => getGatewayData(ctx, (request.params as { nonce: string }).nonce),
  });

  // A client that built the URL from an empty value sent a request with a field missing (204),
  // not a request to an unknown path (the router would not match an empty path segment).
  app.get('/v2/merchanthosted/gatewaydata', {
    config: API_ROUTE,
    handler: async () => fail(204, 'the nonce is missing from the path: GET {host_url}/{nonce}'),
  });
  app.get('/v2/transaction', {
    config: API_ROUTE,
    handler: async () =>
      fail(204, 'merchant_reference is missing from the path: GET /v2/transaction/{merchant_reference}'),
  });

  app.get('/v2/transaction/:merchant_reference', {
    config: API_ROUTE,
    schema: {
      tags: [API_TAGS.payments],
      operationId: 'queryTransaction',
      summary: 'Query an order by merchant_reference; with is_block=1, wait (long poll) until its status changes',
      ...queryTransactionSchema,
      response: queryAnswer,
    },
    handler: async (request, reply) => {
      const { merchant_reference } = request.params as { merchant_reference: string };
      const q = request.query as { user_id: string; signature: string; is_block?: string };
      // A long poll whose client went away stops waiting.
      const abort = q.is_block === '1' ? new ClientGone(reply.raw) : undefined;
      const answer = await queryTransaction(
        ctx,
        { merchant_reference, user_id: q.user_id, signature: q.signature, is_block: q.is_block },
        abort,
      );
      const json = answer.shared ? sharedAnswerJson(answer.response) : queryAnswerJson(answer.response);
      // Written here, with exactly the headers reply.send would send (query.test.ts), rather than
      // through Fastify's send path, the query being the hottest route (docs/design/query-reply.md). The request is
      // still logged when the answer is sent (Fastify keeps its response listeners). An onSend hook
      // added later would not see this answer.
      reply.hijack();
      reply.raw.writeHead(200, [
        'content-type',
        'application/json; charset=utf-8',
        'content-length',
        String(Buffer.byteLength(json)),
      ]);
      reply.raw.end(json);
    },
  });
}
