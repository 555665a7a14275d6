import type { FastifyInstance } from 'fastify';
import { GatewayError } from '../domain/errors.js';
import { exponentOf, formatAmount } from '../domain/money.js';
import { SANDBOX_SCANNED } from '../channels/sandbox.js';
import { html } from '../pages/html.js';
import { errorPage, page } from '../pages/simple-pages.js';
import type { GatewayContext } from '../usecases/context.js';
import { settlePayment } from '../usecases/settle-payment.js';

const RESULTS = ['paid', 'failed', 'rejected'] as const;

/**
 * The sandbox "payment app": the QR text of every sandbox payment is `{base}/sandbox/pay/{order_id}`.
 * GET shows approve/decline buttons (and, like scanning a real QR, marks the payment as opened);
 * POST with form field `result` = paid | failed | rejected settles it, as a channel callback would.
 * Registered only in sandbox mode.
 */
export async function sandboxRoutes(app: FastifyInstance, ctx: GatewayContext): Promise<void> {
  app.get('/sandbox/pay/:order_id', async (request, reply) => {
    const { order_id } = request.params as { order_id: string };
    const t = await ctx.store.findTransaction(order_id);
    reply.type('text/html; charset=utf-8');
    if (!t) return reply.code(404).send(errorPage('Unknown payment', `There is no sandbox payment ${order_id}.`));
    if (t.status === 'pending' && t.channel_state !== SANDBOX_SCANNED) await ctx.store.setChannelState(order_id, SANDBOX_SCANNED, ctx.now());
    const amount = `${formatAmount(t.amount, exponentOf(t.currency))} ${t.currency}`;
    const buttons =
      t.status === 'pending'
        ? html`<form method="post"><input type="hidden" name="result" value="paid"><button class="pay" id="approve">Approve payment</button></form>
<form method="post"><input type="hidden" name="result" value="failed"><button class="fail" id="decline">Decline</button></form>
${t.payment_method === 'payid' ? html`<form method="post"><input type="hidden" name="result" value="rejected"><input type="hidden" name="msgId" value="${'PAYID-' + t.order_id}"><input type="hidden" name="message" value="Rejected by the sandbox bank"><button class="reject" id="reject">Reject transfer</button></form>` : ''}`
        : html`<p id="status">This payment is <strong>${t.status}</strong>.</p>`;
    return reply.send(
      page('Sandbox payment', html`<h1>Sandbox ${t.payment_method} payment</h1>
<dl><dt>Order</dt><dd>${t.order_id}</dd><dt>Reference</dt><dd>${t.merchant_reference}</dd><dt>Product</dt><dd>${t.product_name}</dd><dt>Amount</dt><dd>${amount}</dd></dl>${buttons}`),
    );
  });

  app.post('/sandbox/pay/:order_id', async (request, reply) => {
    const { order_id } = request.params as { order_id: string };
    const body = (request.body ?? {}) as Record<string, unknown>;
    const result = body.result;
    const wantsJson = (request.headers.accept ?? '').includes('application/json');
    if (typeof result !== 'string' || !(RESULTS as readonly string[]).includes(result)) {
      throw new GatewayError(207, 'result must be paid, failed or rejected');
    }
    const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v.slice(0, 255) : null);
    const settled = await settlePayment(ctx, order_id, result as (typeof RESULTS)[number], {
      status_message: str(body.message),
      msgId: str(body.msgId),
    });
    if (wantsJson) return { code: 0, message: 'SUCCESS', order_id, status: settled.status };
    reply.type('text/html; charset=utf-8');
    return page('Sandbox payment', html`<h1>Payment ${settled.status}</h1><p id="status">Order ${order_id} is now <strong>${settled.status}</strong>.</p>`);
  });
}
