import type { FastifyInstance, FastifyRequest } from 'fastify';
import { cancelTransaction, type CancelRequest } from '../usecases/cancel-transaction.js';
import type { GatewayContext } from '../usecases/context.js';
import { refundTransaction, type RefundRequest } from '../usecases/refund-transaction.js';
import { stringBody } from './body-parsers.js';
import { API_ROUTE } from './request-log.js';
import { cancelSchema, refundSchema } from './schemas.js';

export async function refundCancelRoutes(app: FastifyInstance, ctx: GatewayContext): Promise<void> {
  const refund = {
    config: API_ROUTE,
    schema: { body: refundSchema },
    preValidation: stringBody(['refund_amount']),
    handler: async (request: FastifyRequest) => refundTransaction(ctx, request.body as RefundRequest),
  };
  // The spec's path is /refund; some clients of the original service call /v2/refund.
  app.post('/refund', refund);
  app.post('/v2/refund', refund);

  const cancel = {
    config: API_ROUTE,
    schema: { body: cancelSchema },
    preValidation: stringBody([]),
    handler: async (request: FastifyRequest) => cancelTransaction(ctx, request.body as CancelRequest),
  };
  app.post('/cancel', cancel);
  app.post('/v2/cancel', cancel);
}
