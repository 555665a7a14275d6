import { nextCheckDelay } from '../domain/channel.js';
import type { Log } from '../ports/log.js';
import { CERTIFICATE_WARNING_MS, expiringCertificates } from './channel-accounts.js';
import { orderEndsAt, queryAtProvider, servingOf } from './channels.js';
import type { GatewayContext } from './context.js';
import { applyPaymentState, closeOrderPayments } from './provider-payments.js';
import { settle } from './settle-payment.js';

// Two jobs every instance runs, so that no order depends on a notification arriving:
// - reconciliation asks the provider about open payments of pending orders whose notification
//   has not come, first CHANNEL_RECONCILE_AFTER_MS after the payment was opened, then less often;
//   each payment is claimed for the round (on PostgreSQL, by one instance only);
// - expiry closes the provider payments of pending orders past their life (ORDER_EXPIRY_MS) and
//   ends them `failed`: the customer did not pay (docs/decisions.md).
// And, at start and once a day, a warning for each channel-account certificate that expires
// within 30 days (or has): the operator renews it before the provider refuses the account.

const BATCH = 100;
/** How long a reconciliation claim lasts: longer than a round's provider calls can take. */
const CLAIM_MS = 5 * 60_000;
/**
 * When a provider will not close an expired order's payment and does not say it is paid (the
 * sandbox's customer "opened" it), the order is ended anyway this long after its end: the
 * provider stopped taking the payment at the end (its time_expire).
 */
export const EXPIRY_GRACE_MS = 15 * 60_000;

/** One reconciliation round: returns how many payments were asked about. */
export async function reconcilePayments(ctx: GatewayContext, log: Log): Promise<number> {
  const now = ctx.now();
  const due = await ctx.store.transactions.claimPaymentsToCheck(now, CLAIM_MS, BATCH);
  for (const { payment, order } of due) {
    const later = () =>
      ctx.store.transactions.schedulePaymentCheck(
        payment.out_trade_no,
        ctx.now() + nextCheckDelay(ctx.now() - payment.created_at, ctx.config.channelReconcileAfterMs),
      );
    const served = await servingOf(ctx, order);
    if (!served.ok || !served.serving.connector.capabilities.query) {
      log.warn(
        {
          order_id: order.order_id,
          out_trade_no: payment.out_trade_no,
          reason: served.ok ? 'the provider cannot be queried' : served.reason,
        },
        'reconciliation: payment cannot be asked about',
      );
      await later();
      continue;
    }
    const state = await queryAtProvider(served.serving, payment);
    ctx.metrics?.reconciled(served.serving.connector.provider, state.kind);
    if (state.kind === 'unknown')
      log.warn(
        { order_id: order.order_id, out_trade_no: payment.out_trade_no, reason: state.reason },
        'reconciliation: the provider did not answer',
      );
    const verdict = await applyPaymentState(ctx, payment, state, log);
    if (verdict === 'paid')
      log.info(
        { order_id: order.order_id, out_trade_no: payment.out_trade_no },
        'reconciliation: payment found paid without its notification',
      );
    if (!['paid', 'closed', 'failed', 'rejected'].includes(state.kind)) await later();
  }
  return due.length;
}

/** One expiry round: returns how many orders ended. */
export async function expireOrders(ctx: GatewayContext, log: Log): Promise<number> {
  let ended = 0;
  const expired = await ctx.store.transactions.listExpired(ctx.now() - ctx.config.orderExpiryMs, BATCH);
  for (const order of expired) {
    const closed = await closeOrderPayments(ctx, order, log);
    const fields = { order_id: order.order_id, merchant_reference: order.merchant_reference, provider: order.channel };
    if (closed.kind === 'paid') continue;
    if (closed.kind !== 'closed' && ctx.now() < orderEndsAt(ctx, order) + EXPIRY_GRACE_MS) {
      log.warn(
        { ...fields, reason: closed.reason },
        'expiry: the provider payment could not be closed yet; the order stays pending and is tried again',
      );
      continue;
    }
    if (await settle(ctx, order, 'failed')) {
      ended++;
      ctx.metrics?.expired();
      log.info(
        { ...fields, ...(closed.kind !== 'closed' && { close: closed.reason }) },
        'order expired unpaid: failed',
      );
    }
  }
  return ended;
}

/** One look at the stored accounts' certificates (public config: no secret is opened); returns how many were warned of. */
export async function warnOfExpiringCertificates(ctx: GatewayContext, log: Log): Promise<number> {
  const stored = await ctx.store.accounts.listChannelAccounts();
  const accounts = stored.map((s) => ({
    wallet_id: s.wallet_id,
    payment_method: s.payment_method,
    provider: s.provider,
    config: JSON.parse(s.config) as Record<string, string>,
  }));
  const found = expiringCertificates(accounts, ctx.now());
  const soon = `channel account certificate expires within ${CERTIFICATE_WARNING_MS / 86_400_000} days: set the renewed one with gateway channel set`;
  for (const c of found) {
    log.warn(
      c,
      c.expired
        ? 'channel account certificate expired: the provider refuses its calls; set the renewed one with gateway channel set'
        : soon,
    );
  }
  return found.length;
}

/** How often every instance looks for certificates about to expire (and once at start). */
export const CERTIFICATE_CHECK_EVERY_MS = 24 * 3600_000;

export interface ChannelJobTimings {
  reconcileEveryMs: number;
  expireEveryMs: number;
  certificatesEveryMs?: number;
}

export function channelJobTimings(ctx: GatewayContext): ChannelJobTimings {
  return {
    reconcileEveryMs: Math.max(100, Math.min(5_000, Math.floor(ctx.config.channelReconcileAfterMs / 4))),
    expireEveryMs: Math.max(100, Math.min(60_000, Math.floor(ctx.config.orderExpiryMs / 10))),
  };
}

/** Runs the jobs on timers; a round still running is not joined by another. Returns a stop function. */
export function startChannelJobs(ctx: GatewayContext, log: Log, timings = channelJobTimings(ctx)): () => Promise<void> {
  const runner = (name: string, job: (ctx: GatewayContext, log: Log) => Promise<number>) => {
    let running: Promise<unknown> | null = null;
    return {
      round() {
        if (running) return;
        running = job(ctx, log)
          .catch((e: unknown) => log.error({ err: e }, `${name}: round failed`))
          .finally(() => (running = null));
      },
      stopped: () => running,
    };
  };
  const reconcile = runner('reconciliation', reconcilePayments);
  const expire = runner('expiry', expireOrders);
  const certificates = runner('certificates', warnOfExpiringCertificates);
  const timers = [
    setInterval(() => reconcile.round(), timings.reconcileEveryMs).unref(),
    setInterval(() => expire.round(), timings.expireEveryMs).unref(),
    setInterval(() => certificates.round(), timings.certificatesEveryMs ?? CERTIFICATE_CHECK_EVERY_MS).unref(),
  ];
  expire.round();
  certificates.round();
  return async () => {
    for (const t of timers) clearInterval(t);
    await Promise.all([reconcile.stopped(), expire.stopped(), certificates.stopped()]);
  };
}
