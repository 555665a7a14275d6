import type { Log } from '../ports/log.js';
import type { GatewayContext } from './context.js';

/** How long a refund may stay 'pending' before it counts as left behind by a crash. */
export const PENDING_REFUND_GRACE_MS = 60_000;
const BATCH = 100;

/**
 * Finishes refunds that were reserved but whose channel outcome was never recorded, because the
 * gateway stopped between reserving the amount and confirming it. Each is asked of the channel again
 * with the same refund_id (the channel's idempotency key, so a refund that was made is reported,
 * not made twice), then confirmed or released as a live request would. A channel that cannot be
 * reached leaves the refund pending for the next round. Returns how many were settled.
 *
 * Only refunds unchanged for `graceMs` are taken, so that one still in flight in a live request
 * (on this or another instance) is left to that request.
 */
export async function resumePendingRefunds(ctx: GatewayContext, log: Log, graceMs = PENDING_REFUND_GRACE_MS): Promise<number> {
  let settled = 0;
  const pending = await ctx.store.refunds.listPending(ctx.now() - graceMs, BATCH);
  for (const refund of pending) {
    const order = await ctx.store.transactions.find(refund.order_id);
    if (!order) continue;
    let outcome;
    try {
      outcome = await ctx.channel.refund({ refund_id: refund.refund_id, payment: order, refund_amount: refund.refund_amount, reference: refund.reference });
    } catch (e) {
      log.warn({ refund_id: refund.refund_id, order_id: refund.order_id, err: e }, 'pending refund: the channel could not be asked, will try again');
      continue;
    }
    if (outcome.ok) await ctx.store.refunds.complete(refund.refund_id, ctx.now());
    else await ctx.store.refunds.fail(refund.refund_id, ctx.now());
    settled++;
    log.info(
      { refund_id: refund.refund_id, order_id: refund.order_id, refund_amount: refund.refund_amount, outcome: outcome.ok ? 'succeeded' : 'failed', ...(!outcome.ok && { reason: outcome.reason }) },
      'pending refund left by an earlier stop settled',
    );
  }
  return settled;
}

/**
 * Runs resumePendingRefunds at start (with `startGraceMs`: 0 when this process owns the database,
 * so nothing can be in flight) and then every `everyMs`. Returns a stop function.
 */
export function startRefundRecovery(ctx: GatewayContext, log: Log, startGraceMs = PENDING_REFUND_GRACE_MS, everyMs = PENDING_REFUND_GRACE_MS): () => Promise<void> {
  let running: Promise<unknown> | null = null;
  const round = (grace: number) => {
    // A round still asking a slow channel is not joined by another: it would ask for the same refunds.
    if (running) return;
    running = resumePendingRefunds(ctx, log, grace)
      .catch((e: unknown) => log.error({ err: e }, 'pending refunds: recovery round failed'))
      .finally(() => (running = null));
  };
  round(startGraceMs);
  const timer = setInterval(() => round(PENDING_REFUND_GRACE_MS), everyMs).unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
