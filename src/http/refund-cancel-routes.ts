import type { FastifyInstance } from 'fastify';
import { cancelTransaction, type CancelRequest } from '../usecases/cancel-transaction.js';
import type { GatewayContext } from '../usecases/context.js';
import { refundTransaction, type RefundRequest } from '../usecases/refund-transaction.js';
import { stringBody } from './body-parsers.js';
import { API_ROUTE } from './request-log.js';
import { API_TAGS } from './openapi.js';
import { cancelAnswer, refundAnswer } from './response-schemas.js';
import { cancelSchema, refundSchema } from './schemas.js';

export async function refundCancelRoutes(app: FastifyInstance, ctx: GatewayContext): Promise<void> {
  const json = ['application/json', 'application/x-www-form-urlencoded'];
  // The spec's path is /refund; some clients of the original service call /v2/refund.
  for (const [path, operationId] of [
    ['/refund', 'refund'],
    ['/v2/refund', 'refundV2'],
  ] as const) {
    app.post(path, {
      config: API_ROUTE,
      schema: {
        tags: [API_TAGS.refunds],
        operationId,
        summary: 'Refund part or all of a paid order',
        description: path === '/refund' ? "The spec's path." : 'The same as POST /refund.',
        consumes: json,
        body: refundSchema,
        response: refundAnswer,
      },
      preValidation: stringBody(['refund_amount']),
      handler: async (request) => refundTransaction(ctx, request.body as RefundRequest),
    });
  }
  for (const [path, operationId] of [
    ['/cancel', 'cancel'],
    ['/v2/cancel', 'cancelV2'],
  ] as const) {
    app.post(path, {
      config: API_ROUTE,
      schema: {
        tags: [API_TAGS.refunds],
        operationId,
        summary: 'Cancel a pending order (its payment is closed at the channel first)',
        description: path === '/cancel' ? "The spec's path." : 'The same as POST /cancel.',
        consumes: json,
        body: cancelSchema,
        response: cancelAnswer,
      },
      preValidation: stringBody([]),
      handler: async (request) => cancelTransaction(ctx, request.body as CancelRequest),
    });
  }
}
