import { randomBytes } from 'node:crypto';
import { fail } from '../domain/errors.js';
import { exponentOf, formatAmount, parseAmount } from '../domain/money.js';
import { dedupeKey, judgeRefusal } from '../domain/refund.js';
import { isPaid, type Transaction } from '../domain/transaction.js';
import { requestMessageCandidates } from '../domain/signing.js';
import type { NewRefund, RefundBooks } from '../ports/refunds.js';
import { orderFee } from './fee-plans.js';
import { askRefund, askRefundOutcome, recordRefundOutcome, refundCall } from './refund-channel.js';
import { servingOf } from './channels.js';
import { requireActiveUser, requireSignedForOrder } from './authenticate.js';
import type { GatewayContext } from './context.js';

export interface RefundRequest {
  user_id: string;
  order_id: string;
  refund_amount: string;
  reference?: string;
  signature: string;
  [extra: string]: string | undefined;
}

/** Exactly the spec's answer: a client that maps only `code` and `message` must not fail on success. */
export interface RefundResponse {
  code: 0;
  message: '';
}

/**
 * Refunds part or all of a paid order. The refund is first reserved (counted against the order's
 * refundable amount in one database transaction), then asked of the provider, then confirmed; a
 * refusal releases the reservation. A provider that gives no answer leaves the refund pending with
 * its amount reserved, never failed: it may have been made (resume-refunds.ts learns the outcome).
 * A repeated identical request is refused with 562.
 */
export async function refundTransaction(ctx: GatewayContext, req: RefundRequest): Promise<RefundResponse> {
  const user = await requireActiveUser(ctx, req.user_id);
  const order = await ctx.store.transactions.find(req.order_id);
  await requireSignedForOrder(ctx, user, order, req.signature, (key) => requestMessageCandidates(req, key));
  if (!order || order.user_id !== user.user_id) fail(551, `no order ${req.order_id} for user ${req.user_id}`);
  return refundOrder(ctx, order, req.refund_amount, req.reference ?? '');
}

/**
 * The refund of an order whose requester is already known to own it: the API's signed request
 * (above), or a console user allowed to refund it. The same rules and codes either way.
 */
export async function refundOrder(
  ctx: GatewayContext,
  order: Transaction,
  refund_amount: string,
  reference: string,
): Promise<RefundResponse> {
  const exponent = exponentOf(order.currency);
  const parsed = parseAmount(refund_amount, exponent);
  if (!parsed.ok) fail(550, `refund_amount ${parsed.reason}`);
  if (parsed.minor === 0) fail(550, 'refund_amount must be greater than zero');
  if (parsed.minor > order.amount) {
    fail(550, `refund_amount ${refund_amount} exceeds the order amount ${formatAmount(order.amount, exponent)}`);
  }
  if (!isPaid(order)) fail(556, `order ${order.order_id} is ${order.status}; only paid orders can be refunded`);
  // A provider without a refund (POLi, CoinPayments) is said so before anything is reserved: no refund is recorded.
  const served = await servingOf(ctx, order);
  if (served.ok && !served.serving.connector.capabilities.refund)
    fail(
      556,
      `${served.serving.connector.provider} has no refund: pay the customer back outside the gateway (nothing was refunded or recorded)`,
    );

  const now = ctx.now();
  const refund = {
    refund_id: `R${randomBytes(10).toString('hex')}`,
    order_id: order.order_id,
    refund_amount: parsed.minor,
    reference,
    dedupe_key: dedupeKey({ order_id: order.order_id, refund_amount: parsed.minor, reference }),
    created_at: now,
  };
  // The plan the order was created under says whether the refund gives its share of the fee back.
  const books: RefundBooks = { refund_fee: (await orderFee(ctx.store, order)).plan?.refund_fee ?? 'none' };
  await reserve(ctx, refund, books, order, { refund_amount: refund_amount, exponent });
  const { refund_id } = refund;

  const call = await refundCall(ctx, order, { ...refund, channel_amount: null });
  if (!call.ok) {
    // Nothing was asked of any provider: the reservation is released.
    await ctx.store.refunds.fail(refund_id, ctx.now());
    fail(556, call.reason);
  }
  let outcome = await askRefund(call);
  // No answer (a timeout, a reset, a 5xx, a "system error"): asked once more, by its refund_id.
  if (outcome.kind === 'unknown') outcome = await askRefundOutcome(call);
  await recordRefundOutcome(ctx, refund_id, outcome);
  switch (outcome.kind) {
    case 'succeeded':
    case 'processing':
      return { code: 0, message: '' };
    case 'refused':
      fail(556, `the payment channel refused the refund (${call.serving.connector.provider}): ${outcome.reason}`);
    case 'not_found':
    case 'unknown':
      fail(
        1,
        `${call.serving.connector.provider} has not given a final answer on refund ${refund_id} (${outcome.kind === 'unknown' ? outcome.reason : 'not found yet'}); ` +
          'its amount stays reserved and the gateway keeps asking with the same refund id, so it is never made twice. Send the same request later to learn how it ended',
      );
  }
}

/** How long to sleep between looks at the pending refunds a reservation waits for: short at first. */
const WAIT_STEPS_MS = [5, 10, 20, 40, 80, 100];

/**
 * Reserves the refund's amount against the order. A refusal that rests on another refund whose
 * channel outcome is not known yet is no verdict (judgeRefusal): the request waits for that
 * refund, up to ctx.config.refundWaitMs, and tries again. So concurrent refunds of one order are
 * judged only against refunds that succeeded, and a 550 or 562 is always true. A wallet that cannot
 * cover the refund (559) is a verdict at once: what it holds is not the order's to wait for.
 */
async function reserve(
  ctx: GatewayContext,
  refund: NewRefund,
  books: RefundBooks,
  order: Pick<Transaction, 'amount' | 'wallet_id' | 'currency'>,
  asSent: { refund_amount: string; exponent: number },
): Promise<void> {
  const deadline = ctx.now() + ctx.config.refundWaitMs;
  const money = (minor: number) => `${formatAmount(minor, asSent.exponent)} ${order.currency}`;
  for (let step = 0; ; step++) {
    const reserved = await ctx.store.refunds.reserve(refund, books);
    if (reserved.ok) return;
    if (reserved.reason === 'not_paid') fail(556, `order ${refund.order_id} is not paid`);
    if (reserved.reason === 'wallet')
      fail(
        559,
        `wallet ${order.wallet_id} cannot cover refund_amount ${asSent.refund_amount}: it needs ${money(reserved.need)} ` +
          `and holds ${money(reserved.pending)} pending and ${money(reserved.available)} available; nothing was refunded`,
      );
    const verdict = judgeRefusal(
      reserved.reason,
      { refund_amount: refund.refund_amount, dedupe_key: refund.dedupe_key! },
      order.amount,
      await ctx.store.refunds.listByOrder(refund.order_id),
    );
    switch (verdict.kind) {
      case 'done':
        fail(
          562,
          `a refund of ${asSent.refund_amount} with this reference was already made for order ${refund.order_id}; use a different reference for another refund`,
        );
      case 'insufficient':
        fail(
          550,
          `refund_amount ${asSent.refund_amount} exceeds what is left to refund on order ${refund.order_id} (${formatAmount(verdict.left, asSent.exponent)})`,
        );
      case 'retry':
      case 'wait':
        if (ctx.now() >= deadline) {
          if (verdict.kind === 'wait' && verdict.duplicate) {
            fail(
              562,
              `an identical refund (same order_id, refund_amount and reference) of order ${refund.order_id} is still waiting for the payment channel's answer; it is not made twice. Send the same request later to learn how it ended`,
            );
          }
          fail(
            556,
            `another refund of order ${refund.order_id} is still waiting for the payment channel's answer, and whether this one fits depends on it; nothing was refunded: try again later`,
          );
        }
        // A refusal overtaken by events is retried at once; should it keep coming back, not in a busy loop.
        if (verdict.kind === 'wait' || step > 0) await sleep(WAIT_STEPS_MS[Math.min(step, WAIT_STEPS_MS.length - 1)]);
        continue;
    }
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
