import type { FastifyInstance } from 'fastify';
import { fail } from '../domain/errors.js';
import type { GatewayContext } from '../usecases/context.js';
import { walletDetail } from '../usecases/wallet-detail.js';
import { API_ROUTE } from './request-log.js';
import { API_TAGS } from './openapi.js';
import { walletDetailAnswer } from './response-schemas.js';
import { walletDetailSchema } from './schemas.js';

export async function walletRoutes(app: FastifyInstance, ctx: GatewayContext): Promise<void> {
  // GET /v2/detail/{wallet_id}?user_id=..[&signature=..]: the wallet's payment methods (the
  // original service's shop plugins call it). A GET's body, and its Content-Type, are ignored.
  app.get('/v2/detail/:wallet_id', {
    config: API_ROUTE,
    schema: {
      tags: [API_TAGS.wallets],
      operationId: 'walletDetail',
      summary: 'The payment methods a wallet takes (signature optional)',
      ...walletDetailSchema,
      response: walletDetailAnswer,
    },
    handler: async (request) => {
      const { wallet_id } = request.params as { wallet_id: string };
      const q = request.query as { user_id: string; signature?: string };
      return walletDetail(ctx, { wallet_id, user_id: q.user_id, signature: q.signature });
    },
  });
  app.get('/v2/detail', {
    config: API_ROUTE,
    handler: async () =>
      fail(204, 'wallet_id is missing from the path: GET /v2/detail/{wallet_id}?user_id=..&signature=..'),
  });
}
