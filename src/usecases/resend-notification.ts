import type { Status } from '../domain/transaction.js';
import type { OutboxRow } from '../ports/outbox.js';
import type { Store } from '../ports/store.js';

// Support's "send it again": the order's latest result notification is due now (delivered or not),
// with the same webhook-id, signed afresh at its attempt. From the CLI and from the console.

export type Resend =
  { kind: 'queued'; row: OutboxRow } | { kind: 'no_order' } | { kind: 'nothing_to_resend'; status: Status };

export async function resendLatestNotification(store: Store, order_id: string, now: number): Promise<Resend> {
  const order = await store.transactions.find(order_id);
  if (!order) return { kind: 'no_order' };
  const latest = (await store.outbox.listByOrder(order_id)).at(-1);
  const row = latest && (await store.outbox.requeueNow(latest.event_id, now));
  return row ? { kind: 'queued', row } : { kind: 'nothing_to_resend', status: order.status };
}
