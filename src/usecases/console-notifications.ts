import { randomBytes } from 'node:crypto';
import { permits, type ConsoleUser } from '../domain/console.js';
import { exponentOf } from '../domain/money.js';
import { notificationFields } from '../domain/result-fields.js';
import { isPaymentMethod } from '../domain/transaction.js';
import type { OutboxRow, OutboxSearch, OutboxSearchPage } from '../ports/outbox.js';
import { audit, ConsoleError } from './console-auth.js';
import { PAGE_SIZE } from './console-reads.js';
import { walletFor } from './console-wallets.js';
import type { GatewayContext, TestNotificationOutcome } from './context.js';

// The console's notification log (every notification with its attempts, a merchant's user their
// organisation's only), sending one again or every failing one of a host now, and a test
// notification: a signed sample to a URL the merchant types, with the answer it got.

function scope(user: ConsoleUser): { organisation_id?: number } {
  return user.kind === 'merchant' ? { organisation_id: user.organisation_id! } : {};
}

export function listNotifications(
  ctx: GatewayContext,
  user: ConsoleUser,
  filter: Omit<OutboxSearch, 'limit'>,
): Promise<OutboxSearchPage> {
  return ctx.store.outbox.search({ ...filter, ...scope(user), limit: PAGE_SIZE });
}

/** The status a notification reports (from its stored fields). */
export function reportedStatus(row: Pick<OutboxRow, 'payload'>): string {
  try {
    const status = (JSON.parse(row.payload) as { status?: unknown }).status;
    return typeof status === 'string' ? status : '';
  } catch {
    return '';
  }
}

/** One notification due now again (delivered or not), same webhook-id, signed afresh: a notification the user may see. */
export async function resendNotification(
  ctx: GatewayContext,
  user: ConsoleUser,
  ip: string,
  event_id: string,
): Promise<void> {
  if (!permits(user, 'resend')) throw new ConsoleError('error.forbidden');
  const row = await ctx.store.outbox.find(event_id);
  const organisation_id = row && (await ctx.store.transactions.organisationOf(row.order_id));
  if (!row || organisation_id === undefined || (user.kind === 'merchant' && organisation_id !== user.organisation_id))
    throw new ConsoleError('error.not_found');
  await ctx.store.outbox.requeueNow(event_id, ctx.now());
  ctx.notifier?.poke();
  await audit(
    ctx,
    { kind: 'user', user, ip },
    { action: 'transaction.resend', object: row.order_id, organisation_id, after: JSON.stringify({ event_id }) },
  );
}

/** Every failing notification to a host (of the user's organisation, for a merchant's user) due now. */
export async function retryHostNow(
  ctx: GatewayContext,
  user: ConsoleUser,
  ip: string,
  callback_host: string,
): Promise<number> {
  if (!permits(user, 'resend')) throw new ConsoleError('error.forbidden');
  const count = await ctx.store.outbox.retryHostNow({ callback_host, ...scope(user) }, ctx.now());
  if (count > 0) ctx.notifier?.poke();
  await audit(
    ctx,
    { kind: 'user', user, ip },
    {
      action: 'notifications.retry_host',
      object: callback_host,
      organisation_id: user.organisation_id,
      after: JSON.stringify({ count }),
    },
  );
  return count;
}

export interface TestNotification extends TestNotificationOutcome {
  url: string;
  /** The form body sent, as sent (a sample order that does not exist). */
  body: string;
  headers: Readonly<Record<string, string>>;
}

const MAX_URL = 2000;

/**
 * A sample result notification of a paid order (one that does not exist: its order_id starts with
 * `test_`), signed with the wallet's key as a real one is, POSTed once to `url` through the same
 * checks as every notification (no private addresses unless allowed); nothing is stored but the
 * audit entry. A merchant sees what their endpoint answered while they integrate.
 */
export async function sendTestNotification(
  ctx: GatewayContext,
  user: ConsoleUser,
  ip: string,
  wallet_id: string,
  url: string,
): Promise<TestNotification> {
  if (!permits(user, 'resend')) throw new ConsoleError('error.forbidden');
  const { wallet, organisation } = await walletFor(ctx, user, wallet_id);
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    throw new ConsoleError('error.test_url');
  }
  if ((target.protocol !== 'http:' && target.protocol !== 'https:') || url.length > MAX_URL)
    throw new ConsoleError('error.test_url');
  const notifier = ctx.notifier;
  if (!notifier?.sendTest) throw new ConsoleError('error.test_off');
  const method = wallet.payment_methods.split(',').find(isPaymentMethod) ?? 'alipay';
  const now = ctx.now();
  const order_id = `test_${randomBytes(8).toString('hex')}`;
  const payload = JSON.stringify(
    notificationFields({
      merchant_reference: 'test-notification',
      order_id,
      currency: wallet.currency,
      amount: 10 ** exponentOf(wallet.currency),
      amount_cny: null,
      currency_rate: null,
      payment_method: method,
      status: 'paid',
      status_message: null,
      msgId: null,
      pay_time: now,
      created_at: now,
    }),
  );
  const source = { event_id: `evt_${randomBytes(16).toString('hex')}`, order_id, seq: 1, payload };
  const sent = await notifier.sendTest(url, source, wallet.api_key);
  await audit(
    ctx,
    { kind: 'user', user, ip },
    {
      action: 'wallet.test_notification',
      object: wallet_id,
      organisation_id: organisation.organisation_id,
      after: JSON.stringify({
        url: target.origin + target.pathname,
        http_status: sent.http_status,
        delivered: sent.delivered,
      }),
    },
  );
  return { url, ...sent };
}
