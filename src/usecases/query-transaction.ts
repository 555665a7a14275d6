import { fail } from '../domain/errors.js';
import { queryResponse, type QueryResponse } from '../domain/result-fields.js';
import { queryMessageCandidates, resultSignature } from '../domain/signing.js';
import { isPending, type OrderResult, type Transaction } from '../domain/transaction.js';
import type { WaitAbort } from '../ports/signals.js';
import { requireActiveUser, requireSignedForOrder } from './authenticate.js';
import type { GatewayContext } from './context.js';

export interface QueryRequest {
  merchant_reference: string;
  user_id: string;
  signature: string;
  is_block?: string | undefined;
}

/**
 * The query's answer. `shared`: the same response object goes to every long poll woken by one
 * status change, so whatever is made of it (its JSON text) can be made once for all of them.
 */
export interface QueryAnswer {
  response: QueryResponse;
  shared: boolean;
}

/**
 * The query response. With is_block=1 and a pending order, waits until the status changes or the
 * long-poll timeout passes, then answers with the state at that moment.
 */
export async function queryTransaction(
  ctx: GatewayContext,
  req: QueryRequest,
  abort?: WaitAbort,
): Promise<QueryAnswer> {
  const user = await requireActiveUser(ctx, req.user_id);
  // Before the read: a long poll then reads the order again only if it was signalled since.
  const since = ctx.signals.mark();
  const order = await ctx.store.transactions.findResult(user.user_id, req.merchant_reference);
  const { previousKey } = await requireSignedForOrder(ctx, user, order, req.signature, (key) =>
    queryMessageCandidates(req, key),
  );
  if (!order) fail(201, `no order with merchant_reference ${req.merchant_reference} for user ${req.user_id}`);
  // Returned, not awaited: while it waits, nothing holds this request's order row, only its order_id.
  if (req.is_block === '1' && isPending(order)) {
    const shared = answerWhenChanged(ctx, order.order_id, abort, since);
    // Signed with the replaced key the request was signed with (a rotation's overlap window): its own answer.
    return previousKey === undefined
      ? shared.then(sharedOne)
      : shared.then((r) => ({ response: resigned(r, previousKey), shared: false }));
  }
  const response = await signedAnswer(ctx, order);
  return { response: previousKey === undefined ? response : resigned(response, previousKey), shared: false };
}

/** The answer signed with another key of its wallet. */
function resigned(r: QueryResponse, apiKey: string): QueryResponse {
  return {
    ...r,
    signature: resultSignature(
      {
        merchant_reference: r.merchant_reference,
        payment_method: r.payment_method,
        status: r.status,
        currency: r.currency,
        amount: r.amount,
      },
      apiKey,
    ),
  };
}

const sharedOne = (response: QueryResponse): QueryAnswer => ({ response, shared: true });

/** The response for the order as it is, signed with its wallet's key. */
function signedAnswer(ctx: GatewayContext, order: OrderResult): Promise<QueryResponse> {
  return ctx.credentials.wallet(order.wallet_id).then((wallet) => {
    if (!wallet) fail(205, `wallet ${order.wallet_id} no longer exists`);
    return queryResponse(order, wallet.api_key);
  });
}

/**
 * A long poll's answer: a promise chain rather than async functions, because tens of thousands
 * wait at once and each suspended frame costs memory.
 */
function answerWhenChanged(
  ctx: GatewayContext,
  order_id: string,
  abort: WaitAbort | undefined,
  since: number,
): Promise<QueryResponse> {
  const transactions = ctx.store.transactions;
  const held = ctx.metrics?.longPollHeld();
  const answer = ctx.signals.wait(order_id, ctx.config.longPollTimeoutMs, transactions, abort, since).then((changed) =>
    changed
      ? sharedAnswer(ctx, changed)
      : transactions.find(order_id).then((order) => {
          if (!order) fail(201, `order ${order_id} no longer exists`);
          return sharedAnswer(ctx, order);
        }),
  );
  return held ? answer.finally(held) : answer;
}

/**
 * The waiters woken by one status change get the same row object: the wallet is looked up and the
 * response signed once for all of them (the key is the wallet's key as of the change).
 */
const answers = new WeakMap<Transaction, Promise<QueryResponse>>();
function sharedAnswer(ctx: GatewayContext, order: Transaction): Promise<QueryResponse> {
  let answer = answers.get(order);
  if (!answer) {
    answer = signedAnswer(ctx, order);
    answers.set(order, answer);
  }
  return answer;
}

/**
 * Waits for a pending order to change: the order as changed, or as it is when the timeout passes
 * (or the wait is aborted, or the gateway shuts down). Undefined only if the order is gone.
 */
export function waitForOrder(
  ctx: GatewayContext,
  order_id: string,
  abort?: WaitAbort,
  timeoutMs = ctx.config.longPollTimeoutMs,
): Promise<Transaction | undefined> {
  const transactions = ctx.store.transactions;
  return ctx.signals
    .wait(order_id, timeoutMs, transactions, abort)
    .then((order) => order ?? transactions.find(order_id));
}

/** Waits for a pending order to change (see waitForOrder); an order that is not pending is returned as it is. */
export async function waitForChange(
  ctx: GatewayContext,
  order: Transaction,
  abort?: WaitAbort,
  timeoutMs = ctx.config.longPollTimeoutMs,
): Promise<Transaction> {
  if (!isPending(order)) return order;
  const done = ctx.metrics?.longPollHeld();
  try {
    return (await waitForOrder(ctx, order.order_id, abort, timeoutMs)) ?? order;
  } finally {
    done?.();
  }
}
