import type { Log } from '../ports/log.js';
import type { GatewayContext } from './context.js';
import { askRefund, askRefundOutcome, recordRefundOutcome, refundCall } from './refund-channel.js';

/** How long a refund may stay 'pending' before the recovery asks about it (a live request may still be asking). */
export const PENDING_REFUND_GRACE_MS = 60_000;
const BATCH = 100;

/**
 * Learns the outcome of refunds left pending: ones the provider has not finished (processing),
 * ones whose call got no answer (a timeout, a 5xx), and ones the gateway stopped in the middle of.
 * Each is asked about by its refund_id (the provider's refund query), and made again with the same
 * refund_id when the provider has none (so one that was made is reported, never made twice); a
 * definite answer confirms or releases it as a live request would, anything else leaves it
 * pending for the next round. Returns how many ended.
 *
 * Only refunds unchanged for `graceMs` are taken, so that one still in flight in a live request
 * (on this or another instance) is left to that request.
 */
export async function resumePendingRefunds(
  ctx: GatewayContext,
  log: Log,
  graceMs = PENDING_REFUND_GRACE_MS,
): Promise<number> {
  let ended = 0;
  const pending = await ctx.store.refunds.listPending(ctx.now() - graceMs, BATCH);
  for (const refund of pending) {
    const order = await ctx.store.transactions.find(refund.order_id);
    if (!order) continue;
    const call = await refundCall(ctx, order, refund);
    if (!call.ok) {
      log.error(
        { refund_id: refund.refund_id, order_id: refund.order_id, reason: call.reason },
        'pending refund: no provider can be asked about it; it stays pending',
      );
      await ctx.store.refunds.touch(refund.refund_id, ctx.now());
      continue;
    }
    let outcome = await askRefundOutcome(call);
    if (outcome.kind === 'not_found') outcome = await askRefund(call);
    if (!(await recordRefundOutcome(ctx, refund.refund_id, outcome, log))) {
      await ctx.store.refunds.touch(refund.refund_id, ctx.now());
      if (outcome.kind === 'unknown')
        log.warn(
          { refund_id: refund.refund_id, order_id: refund.order_id, reason: outcome.reason },
          'pending refund: the provider could not be asked, will try again',
        );
      continue;
    }
    ended++;
    log.info(
      {
        refund_id: refund.refund_id,
        order_id: refund.order_id,
        refund_amount: refund.refund_amount,
        outcome: outcome.kind,
        ...(outcome.kind === 'refused' && { reason: outcome.reason }),
      },
      'pending refund settled',
    );
  }
  return ended;
}

/**
 * Runs resumePendingRefunds at start (with `startGraceMs`: 0 when this process owns the database,
 * so nothing can be in flight) and then every `everyMs`. Returns a stop function.
 */
export function startRefundRecovery(
  ctx: GatewayContext,
  log: Log,
  startGraceMs = PENDING_REFUND_GRACE_MS,
  everyMs = PENDING_REFUND_GRACE_MS,
): () => Promise<void> {
  let running: Promise<unknown> | null = null;
  const round = (grace: number) => {
    // A round still asking a slow provider is not joined by another: it would ask about the same refunds.
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
