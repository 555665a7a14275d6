import type { FastifyInstance } from 'fastify';
import { exponentOf, formatAmount } from '../domain/money.js';
import { html } from '../pages/html.js';
import { errorPage, page } from '../pages/simple-pages.js';
import type { GatewayContext } from '../usecases/context.js';

const NONCE_PROBLEMS = {
  unknown: 'This payment link is not valid. Please return to the shop and start the payment again.',
  used: 'This payment link has already been used. Please return to the shop and start the payment again.',
  expired: 'This payment link has expired. Please return to the shop and start the payment again.',
} as const;

/** The hosted payment page at {host_url}/{nonce}. */
export async function checkoutRoutes(app: FastifyInstance, ctx: GatewayContext): Promise<void> {
  app.get('/v2/checkout/:nonce', async (request, reply) => {
    const { nonce } = request.params as { nonce: string };
    reply.type('text/html; charset=utf-8');
    const use = await ctx.store.useNonce(nonce, ctx.now(), 0);
    if (!use.ok) return reply.code(use.reason === 'unknown' ? 404 : 410).send(errorPage('Payment link not valid', NONCE_PROBLEMS[use.reason]));
    const t = use.transaction;
    const amount = `${formatAmount(t.amount, exponentOf(t.currency))} ${t.currency}`;
    return page(
      'Pay',
      html`<h1>Pay ${amount}</h1><dl><dt>Order</dt><dd>${t.order_id}</dd><dt>Reference</dt><dd>${t.merchant_reference}</dd><dt>Product</dt><dd>${t.product_name}</dd><dt>Method</dt><dd>${t.payment_method}</dd><dt>Status</dt><dd id="status">${t.status}</dd></dl>`,
    );
  });
}
