import type { NotificationAttempt, OutboxRow } from '../ports/outbox.js';
import type { Store } from '../ports/store.js';
import { textOf } from '../domain/text.js';
import { required, UsageError } from './args.js';
import type { Command } from './command.js';
import { auditCli } from './console-users.js';
import { DATABASE_FLAG, JSON_FLAG, withStore } from './shared.js';
import { redactCallbackUrl } from '../domain/callback-url.js';
import { resendLatestNotification } from '../usecases/resend-notification.js';

// `gateway notifications list|resend`: what a merchant's support question needs, from the outbox.

export interface NotificationView {
  event_id: string;
  seq: number;
  /** The status the notification reports. */
  status: string;
  callback_url: string;
  delivery_status: string;
  attempts: number;
  created_at: string;
  next_attempt_at: string | null;
  delivered_at: string | null;
  /** The attempts retention removed: how many, and when the latest of them was made. */
  attempts_pruned: number;
  attempts_pruned_until: string | null;
  /** The attempts kept, oldest first. */
  attempt_log: AttemptView[];
}

export interface AttemptView {
  attempted_at: string;
  http_status: number | null;
  latency_ms: number;
  response_excerpt: string | null;
  error: string | null;
}

export interface OrderNotifications {
  order_id: string;
  merchant_reference: string;
  order_status: string;
  notifications: NotificationView[];
}

const iso = (ms: number | null) => (ms === null ? null : new Date(Number(ms)).toISOString());

function statusOf(row: OutboxRow): string {
  try {
    return textOf((JSON.parse(row.payload) as { status?: unknown }).status);
  } catch {
    return '';
  }
}

function view(row: OutboxRow, attempts: NotificationAttempt[]): NotificationView {
  return {
    event_id: row.event_id,
    seq: Number(row.seq),
    status: statusOf(row),
    callback_url: redactCallbackUrl(row.callback_url),
    delivery_status: row.delivery_status,
    attempts: Number(row.attempts),
    created_at: iso(row.created_at)!,
    next_attempt_at: row.delivery_status === 'pending' ? iso(row.next_attempt_at) : null,
    delivered_at: iso(row.delivered_at),
    attempts_pruned: Number(row.attempts_pruned),
    attempts_pruned_until: iso(row.attempts_pruned_until),
    attempt_log: attempts.map((a) => ({
      attempted_at: iso(a.attempted_at)!,
      http_status: a.http_status,
      latency_ms: Number(a.latency_ms),
      response_excerpt: a.response_excerpt,
      error: a.error,
    })),
  };
}

export async function listOrderNotifications(
  store: Store,
  user_id: string,
  merchant_reference: string,
): Promise<OrderNotifications> {
  const order = await store.transactions.findByReference(user_id, merchant_reference);
  if (!order) throw new UsageError(`no order with merchant_reference ${merchant_reference} for user ${user_id}`);
  const rows = await store.outbox.listByOrder(order.order_id);
  const notifications = await Promise.all(rows.map(async (r) => view(r, await store.outbox.listAttempts(r.event_id))));
  return { order_id: order.order_id, merchant_reference, order_status: order.status, notifications };
}

/** Makes the order's latest notification due now, delivered or not. */
export async function resendNotification(store: Store, order_id: string, now: number): Promise<NotificationView> {
  const r = await resendLatestNotification(store, order_id, now);
  switch (r.kind) {
    case 'no_order':
      throw new UsageError(`no order ${order_id}`);
    case 'nothing_to_resend':
      throw new UsageError(
        `order ${order_id} has no notification to resend (it is ${r.status}; only paid, failed, rejected and canceled notify)`,
      );
    case 'queued':
      return view(r.row, []);
  }
}

export function formatOrderNotifications(o: OrderNotifications): string {
  const lines = [`order ${o.order_id}  merchant_reference ${o.merchant_reference}  status ${o.order_status}`];
  if (o.notifications.length === 0) lines.push('  no notifications (only paid, failed, rejected and canceled notify)');
  for (const n of o.notifications) {
    const state =
      n.delivery_status === 'delivered' ? `delivered ${n.delivered_at}` : `pending, next attempt ${n.next_attempt_at}`;
    lines.push(
      '',
      `notification ${n.event_id}  seq ${n.seq}  status ${n.status}  ${state}`,
      `  callback ${n.callback_url}`,
    );
    lines.push(
      `  ${n.attempts} attempt${n.attempts === 1 ? '' : 's'}${n.attempt_log.length + n.attempts_pruned > 0 ? ':' : ''}`,
    );
    // The removed attempts come just before the first kept one made after attempts_pruned_until;
    // the numbering counts them, so a kept attempt keeps its number.
    let removedBefore = 0;
    const gap = () =>
      lines.push(
        `       ${n.attempts_pruned} earlier attempt${n.attempts_pruned === 1 ? '' : 's'} removed by retention`,
      );
    n.attempt_log.forEach((a, i) => {
      if (
        removedBefore === 0 &&
        n.attempts_pruned > 0 &&
        n.attempts_pruned_until !== null &&
        a.attempted_at > n.attempts_pruned_until
      ) {
        gap();
        removedBefore = n.attempts_pruned;
      }
      const http = a.http_status === null ? 'no response' : `HTTP ${a.http_status}`;
      const body = a.response_excerpt === null ? '' : `  body ${JSON.stringify(a.response_excerpt)}`;
      const err = a.error === null ? '' : `  error: ${a.error}`;
      lines.push(
        `  ${String(i + 1 + removedBefore).padStart(3)}  ${a.attempted_at}  ${http.padEnd(11)} ${String(a.latency_ms).padStart(6)} ms${body}${err}`,
      );
    });
    if (removedBefore === 0 && n.attempts_pruned > 0) gap();
  }
  return lines.join('\n');
}

export const notificationsList: Command = {
  name: 'notifications list',
  summary: "an order's result notifications and every delivery attempt",
  description:
    "What a merchant's support question needs: where each notification went, when, and what the\nmerchant's server answered (its callback_url shown without its query's values).",
  flags: [
    {
      name: 'merchant-reference',
      type: 'string',
      value: 'REF',
      help: "the order's merchant_reference",
      required: true,
    },
    { name: 'user-id', type: 'string', value: 'ID', help: 'the API user the order belongs to', required: true },
    DATABASE_FLAG,
    JSON_FLAG,
  ],
  examples: ['gateway notifications list --merchant-reference 22TEST --user-id U000334333'],
  async run(v) {
    const ref = required(v, 'merchant-reference');
    const user_id = required(v, 'user-id');
    const list = await withStore(v, (store) => listOrderNotifications(store, user_id, ref));
    console.log(v.json ? JSON.stringify(list, null, 2) : formatOrderNotifications(list));
    return 0;
  },
};

export const notificationsResend: Command = {
  name: 'notifications resend',
  summary: "deliver the order's latest notification again, now",
  flags: [
    { name: 'order-id', type: 'string', value: 'ID', help: "the order's order_id", required: true },
    DATABASE_FLAG,
    JSON_FLAG,
  ],
  examples: ['gateway notifications resend --order-id 2026112900000001'],
  async run(v) {
    const order_id = required(v, 'order-id');
    const n = await withStore(v, async (store) => {
      const queued = await resendNotification(store, order_id, Date.now());
      await auditCli(store, {
        action: 'cli.notifications.resend',
        object: order_id,
        after: JSON.stringify({ event_id: queued.event_id }),
      });
      return queued;
    });
    if (v.json) console.log(JSON.stringify(n, null, 2));
    else
      console.log(
        `queued notification ${n.event_id} (seq ${n.seq}, status ${n.status}) of order ${order_id} to ${n.callback_url}, due now`,
      );
    return 0;
  },
};
