import type { FastifyError, FastifyInstance } from 'fastify';
import { isDatabaseAway } from '../ports/store.js';
import type { GatewayContext } from '../usecases/context.js';
import { providerNamed } from '../usecases/channel-accounts.js';
import { receiveProviderNotification } from '../usecases/provider-notification.js';

// POST /channels/{provider}/notify: the address each provider is given for its asynchronous
// notifications (Alipay's notify_url, WeChat Pay's notify_url). Signatures cover the body byte
// for byte, so these routes take it as text, whatever its type (a form for Alipay, JSON for
// WeChat Pay); the connector reads it.

const NOTIFY_BODY_LIMIT = 64 * 1024;

export async function providerNotificationRoutes(app: FastifyInstance, ctx: GatewayContext): Promise<void> {
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: NOTIFY_BODY_LIMIT }, (_request, body, done) =>
      done(null, body),
    );
    // Whatever stops a notification (a body refused before the route, the database away, a failure
    // of ours) is answered "not taken" in the provider's words, so that it is sent again: the API's
    // error answer is a 200, which WeChat Pay, UnionPay, Azupay, POLi and CoinPayments read as received.
    scope.setErrorHandler((error: FastifyError, request, reply) => {
      const { provider } = request.params as { provider: string };
      if (isDatabaseAway(error))
        request.log.warn({ provider, err: error.message }, 'provider notification not taken: the database is away');
      else if ((error.statusCode ?? 500) < 500)
        request.log.warn(
          { provider, err: error.message },
          'provider notification not taken: the request could not be read',
        );
      else request.log.error({ provider, err: error }, 'provider notification not taken: unexpected error');
      const answer = providerNamed(ctx.connectors, provider)
        ? ctx.connectors[provider].notificationReply(false)
        : { status: 400, contentType: 'text/plain; charset=utf-8', body: 'unreadable request' };
      return reply.code(answer.status).header('content-type', answer.contentType).send(answer.body);
    });
    scope.post('/channels/:provider/notify', async (request, reply) => {
      const { provider } = request.params as { provider: string };
      // A provider with accounts: the sandbox has none, and is told of payments by its own app.
      if (!providerNamed(ctx.connectors, provider)) {
        return reply
          .code(404)
          .header('content-type', 'text/plain; charset=utf-8')
          .send(`no provider ${provider.slice(0, 40)}`);
      }
      const body = typeof request.body === 'string' ? request.body : '';
      const answer = await receiveProviderNotification(ctx, provider, { headers: request.headers, body }, request.log);
      return reply.code(answer.status).header('content-type', answer.contentType).send(answer.body);
    });
  });
}
